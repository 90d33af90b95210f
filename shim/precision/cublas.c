/* cublas.c — mixed precision for unmodified binaries: fp32 GEMMs in cuBLAS / cuBLASLt run with a
 * FAST compute type (precision.matmul: tf32 | bf16 | f16; ACCELSHIM_MATMUL overrides it).
 *
 * Hooks (cublas_hooks.def, exported by symbol interposition: the application links libcublas
 * dynamically): cublasSgemm_v2 / SgemmStridedBatched / SgemmBatched become cublasGemmEx /
 * GemmStridedBatchedEx / GemmBatchedEx with CUDA_R_32F A/B/C and the FAST compute type; the *Ex
 * GEMMs with CUBLAS_COMPUTE_32F and 32F A/B/C get the FAST type; everything else passes through
 * untouched (so does an Sgemm on a handle the application put in CUBLAS_PEDANTIC_MATH).
 * cuBLASLt: a desc created with CUBLAS_COMPUTE_32F / CUDA_R_32F gets a private twin
 * created with the FAST type (every attribute the application sets is mirrored into it);
 * cublasLtMatmul runs the twin when A/B/C/D are 32F, else (or if the twin is refused) the
 * application's own desc. The application's objects are never changed. matmul_exclude: a GEMM
 * whose call stack holds a matching function stays fp32 (cublas_unwind.c).
 * Real functions: the real dlsym with RTLD_NEXT, else dlopen("libcublas.so.13" /
 * "libcublasLt.so.13"). dlsym(handle, "cublas...") is NOT routed to these hooks (doors.c routes
 * cu[A-Z]* only): a program that dlopen's cuBLAS and resolves it by handle is not downcast.
 * Threading: init once; counters atomic; the desc table and the shape log under mutexes. A
 * thread-local depth passes nested calls (cuBLAS calling cublasLtMatmul itself) straight through.
 * Must not: change the application's cuBLAS objects (a cuBLASLt desc gets a private twin); downcast
 * a GEMM that is not fp32, an Sgemm on a CUBLAS_PEDANTIC_MATH handle, or one under an excluded
 * caller; issue a collective or decide a sync point (it only tells the engine of a library write).
 */
#include "ash_hook.h"
#include "cublas.h"

#include "ash_log.h"
#include "ash_sync.h"
#include "ash_options.h"
#include "ash_policy.h"
#include "ash_shim.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the generated part: typed real slots, names, type checks ---- */

#define ASH_CUBLAS_HOOK(lib, name) __typeof__(&name) name;
#define ASH_CUBLAS_REAL(lib, name) __typeof__(&name) name;
static struct {
#include "cublas_hooks.def"
} ash_cublas_real;
#undef ASH_CUBLAS_HOOK
#undef ASH_CUBLAS_REAL

#define ASH_CUBLAS_HOOK(lib, name) ASH_EXPORT __typeof__(name) name;
#define ASH_CUBLAS_REAL(lib, name)
#include "cublas_hooks.def"
#undef ASH_CUBLAS_HOOK
#undef ASH_CUBLAS_REAL

/* ---- compute types and counters ---- */

typedef enum { ASH_CT_32F, ASH_CT_TF32, ASH_CT_BF16, ASH_CT_F16, ASH_CT_OTHER, ASH_CT_N_ } ash_ct_t;
static const char *const ash_ct_names[ASH_CT_N_] = {"32F", "32F_FAST_TF32", "32F_FAST_16BF",
                                                    "32F_FAST_16F", "other"};
static const cublasComputeType_t ash_ct_fast[] = {
    [ASH_POLICY_MATMUL_DEFAULT] = CUBLAS_COMPUTE_32F,
    [ASH_POLICY_MATMUL_TF32] = CUBLAS_COMPUTE_32F_FAST_TF32,
    [ASH_POLICY_MATMUL_BF16] = CUBLAS_COMPUTE_32F_FAST_16BF,
    [ASH_POLICY_MATMUL_F16] = CUBLAS_COMPUTE_32F_FAST_16F,
};

static struct {
    pthread_once_t once;
    ash_policy_matmul_t mode;
    const ash_policy_t *policy; /* the sync engine's (ash_sync_policy); NULL without a policy */
    const char **exclude;
    size_t nexclude;
    void *blas, *lt;      /* dlopen'ed when RTLD_NEXT did not find them */
    _Atomic unsigned long long count[ASH_CT_N_];
    _Atomic unsigned long long excluded, twin_refused;
    pthread_mutex_t lock; /* desc table, shape log */
} C = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static __thread int ash_cublas_depth __attribute__((tls_model("initial-exec")));

static void ash_cublas_report(void)
{
    unsigned long long n[ASH_CT_N_], total = 0;
    for (int i = 0; i < ASH_CT_N_; i++)
        total += n[i] = atomic_load(&C.count[i]);
    if (total == 0)
        return;
    ash_info("report", "cublas GEMMs (matmul: %s): 32F %llu, 32F_FAST_TF32 %llu, 32F_FAST_16BF %llu, "
             "32F_FAST_16F %llu, other %llu; kept fp32 by matmul_exclude %llu",
             ash_policy_matmul_name(C.mode), n[ASH_CT_32F], n[ASH_CT_TF32], n[ASH_CT_BF16],
             n[ASH_CT_F16], n[ASH_CT_OTHER], atomic_load(&C.excluded));
}

/* The real symbol: the next definition after the shim, else from the library opened by name. */
static void *ash_cublas_resolve(const char *name, int lt)
{
    void *p = ash_hook_real_dlsym(RTLD_NEXT, name);
    if (p != NULL)
        return p;
    void **h = lt ? &C.lt : &C.blas;
    if (*h == NULL)
        *h = dlopen(lt ? "libcublasLt.so.13" : "libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    return *h != NULL ? ash_hook_real_dlsym(*h, name) : NULL;
}

static void ash_cublas_do_init(void)
{
    ash_hook_depth++;
#define ASH_CUBLAS_HOOK(lib, name) *(void **)&ash_cublas_real.name = ash_cublas_resolve(#name, ASH_CUBLAS_IS_##lib);
#define ASH_CUBLAS_REAL ASH_CUBLAS_HOOK
#define ASH_CUBLAS_IS_BLAS 0
#define ASH_CUBLAS_IS_LT 1
#include "cublas_hooks.def"
#undef ASH_CUBLAS_HOOK
#undef ASH_CUBLAS_REAL
    ash_hook_depth--;

    /* loaded and validated by the sync engine at shim init (an invalid file ended the program) */
    C.policy = ash_sync_policy();
    /* ACCELSHIM_MATMUL over precision.matmul, merged and validated in the options table */
    const char *mode = ash_opt_str(ASH_OPT_MATMUL);
    C.mode = ASH_POLICY_MATMUL_DEFAULT;
    if (mode != NULL)
        (void)ash_policy_matmul_parse(mode, &C.mode);
    int env = ash_opt_source(ASH_OPT_MATMUL) == ASH_OPT_SRC_ENV;
    C.nexclude = ash_policy_matmul_exclude_count(C.policy);
    if (C.nexclude > 0 && (C.exclude = calloc(C.nexclude, sizeof *C.exclude)) != NULL) {
        for (size_t i = 0; i < C.nexclude; i++)
            C.exclude[i] = ash_policy_matmul_exclude(C.policy, i);
    } else {
        C.nexclude = 0;
    }
    if (C.mode != ASH_POLICY_MATMUL_DEFAULT && C.nexclude > 0 && ash_cublas_unwind_ready() != 0)
        C.mode = ASH_POLICY_MATMUL_DEFAULT; /* cannot honour the exclusions: downcast nothing */
    if (ash_shim_on_exit(ash_cublas_report) != ASH_OK)
        ash_warn("cublas", "no room for another exit reporter: the GEMM counts are not reported");
    ash_info("cublas", "fp32 GEMMs: matmul %s (%s), %zu matmul_exclude glob(s); real cuBLAS %s, "
             "cuBLASLt %s", ash_policy_matmul_name(C.mode),
             env ? "ACCELSHIM_MATMUL" : C.policy != NULL ? "policy" : "default", C.nexclude,
             ash_cublas_real.cublasGemmEx ? "found" : "missing",
             ash_cublas_real.cublasLtMatmul ? "found" : "missing");
}

/* The application put HANDLE in CUBLAS_PEDANTIC_MATH: its Sgemm calls stay exactly fp32. */
static int ash_cublas_pedantic(cublasHandle_t handle)
{
    cublasMath_t m = CUBLAS_DEFAULT_MATH;
    return ash_cublas_real.cublasGetMathMode != NULL &&
           ash_cublas_real.cublasGetMathMode(handle, &m) == CUBLAS_STATUS_SUCCESS &&
           (m & 0xf) == CUBLAS_PEDANTIC_MATH;
}

static inline void ash_cublas_init(void)
{
    ash_hook_init(); /* the shim first: options, world, policy */
    pthread_once(&C.once, ash_cublas_do_init);
}

/* The compute type for one fp32 GEMM: the mode's FAST type, or 32F when excluded. */
static cublasComputeType_t ash_cublas_choose(void)
{
    if (C.mode == ASH_POLICY_MATMUL_DEFAULT)
        return CUBLAS_COMPUTE_32F;
    if (C.nexclude > 0 && ash_cublas_caller_excluded(C.exclude, C.nexclude)) {
        atomic_fetch_add_explicit(&C.excluded, 1, memory_order_relaxed);
        return CUBLAS_COMPUTE_32F;
    }
    return ash_ct_fast[C.mode];
}

static ash_ct_t ash_ct_of(cublasComputeType_t ct)
{
    switch (ct) {
    case CUBLAS_COMPUTE_32F: return ASH_CT_32F;
    case CUBLAS_COMPUTE_32F_FAST_TF32: return ASH_CT_TF32;
    case CUBLAS_COMPUTE_32F_FAST_16BF: return ASH_CT_BF16;
    case CUBLAS_COMPUTE_32F_FAST_16F: return ASH_CT_F16;
    default: return ASH_CT_OTHER;
    }
}

/* Count one GEMM call; at debug, log each distinct (api, shape, compute type) once. */
static void ash_cublas_note(const char *api, int ta, int tb, long long m, long long n, long long k,
                            long long batch, cublasComputeType_t ct)
{
    ash_ct_t c = ash_ct_of(ct);
    atomic_fetch_add_explicit(&C.count[c], 1, memory_order_relaxed);
    if (!ash_log_enabled(ASH_LOG_DEBUG))
        return;
    enum { SEEN = 512 };
    static uint64_t seen[SEEN];
    uint64_t h = 0xcbf29ce484222325ull;
    const long long v[] = {(long long)(uintptr_t)api, ta, tb, m, n, k, batch, (long long)ct};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        h = (h ^ (uint64_t)v[i]) * 0x100000001b3ull;
    h |= 1;
    int fresh = 0;
    pthread_mutex_lock(&C.lock);
    for (size_t p = 0; p < SEEN; p++) {
        size_t s = (h + p) % SEEN;
        if (seen[s] == h)
            break;
        if (seen[s] == 0) {
            seen[s] = h;
            fresh = 1;
            break;
        }
    }
    pthread_mutex_unlock(&C.lock);
    if (fresh)
        ash_debug("cublas", "GEMM %s op(A)=%c op(B)=%c m=%lld n=%lld k=%lld batch=%lld: compute %s",
                  api, ta < 0 || ta > 2 ? '?' : "NTC"[ta], tb < 0 || tb > 2 ? '?' : "NTC"[tb], m, n, k,
                  batch, c == ASH_CT_OTHER ? "unchanged (not an fp32 GEMM)" : ash_ct_names[c]);
}

#define ASH_CUBLAS_REAL_OR_FAIL(name)                                                       \
    do {                                                                                    \
        if (ASH_UNLIKELY(ash_cublas_real.name == NULL)) {                                   \
            ASH_WARN_CAPPED("cublas", "%s: the real cuBLAS is not loaded; returning "       \
                            "CUBLAS_STATUS_NOT_INITIALIZED", #name);                        \
            return CUBLAS_STATUS_NOT_INITIALIZED;                                           \
        }                                                                                   \
    } while (0)

static int ash_is_32f_gemm(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t ct)
{
    return ct == CUBLAS_COMPUTE_32F && a == CUDA_R_32F && b == CUDA_R_32F && c == CUDA_R_32F;
}

/* Around a cublasGemm*Ex call: the compute type to hand the real one (the mode's choice for an
 * fp32 GEMM the application called, its own otherwise; cuBLAS's own nested calls are left as
 * they are), with the nesting depth up while the real one runs. */
static cublasComputeType_t ash_cublas_ex_enter(int f32, cublasComputeType_t computeType)
{
    cublasComputeType_t ct = computeType;
    if (ash_cublas_depth == 0 && f32)
        ct = ash_cublas_choose();
    ash_cublas_depth++;
    return ct;
}

/* ... and after it: the depth back down; the application's call (not cuBLAS's) counted. */
static void ash_cublas_ex_leave(const char *api, int ta, int tb, long long m, long long n, long long k,
                                long long batch, int f32, cublasComputeType_t ct)
{
    ash_cublas_depth--;
    if (ash_cublas_depth == 0)
        ash_cublas_note(api, ta, tb, m, n, k, batch, f32 ? ct : (cublasComputeType_t)-1);
}

/* ---- cuBLAS ---- */

/* ---- overlap: auto (shim/sync/overlap.c) sees where each GEMM writes: its output pointer, on its
 * stream, before the call is issued and after (a batched GEMM's outputs are in device memory:
 * not seen) ---- */

#define ASH_CUBLAS_SITE(fn) \
    static const ash_kernel_info_t ash_site_##fn = {.handle = &ash_site_##fn, .name = #fn, .demangled = #fn, .nparams = -1}
ASH_CUBLAS_SITE(cublasSgemm_v2);
ASH_CUBLAS_SITE(cublasSgemmStridedBatched);
ASH_CUBLAS_SITE(cublasSgemmBatched);
ASH_CUBLAS_SITE(cublasGemmEx);
ASH_CUBLAS_SITE(cublasGemmStridedBatchedEx);
ASH_CUBLAS_SITE(cublasGemmBatchedEx);
ASH_CUBLAS_SITE(cublasLtMatmul);

static void ash_cublas_write(const ash_kernel_info_t *site, cublasHandle_t h, cudaStream_t s, const void *out,
                             int seen, int before)
{
    if (h != NULL && ash_cublas_real.cublasGetStream_v2 != NULL)
        ash_cublas_real.cublasGetStream_v2(h, &s);
    ash_sync_library_write(site, (CUstream)s, (CUdeviceptr)(uintptr_t)out, seen, before);
}

#define ASH_CUBLAS_WRITE(fn, h, s, out, seen, before)                                      \
    do {                                                                                   \
        if (ash_cublas_depth == 0 && ash_sync_watches_writes())                            \
            ash_cublas_write(&ash_site_##fn, (h), (s), (out), (seen), (before));           \
    } while (0)

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                              int m, int n, int k, const float *alpha, const float *A, int lda,
                              const float *B, int ldb, const float *beta, float *C_, int ldc)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasSgemm_v2);
    if (ash_cublas_depth > 0)
        return ash_cublas_real.cublasSgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                                              beta, C_, ldc);
    ASH_CUBLAS_WRITE(cublasSgemm_v2, handle, NULL, C_, 1, 1);
    cublasComputeType_t ct = ash_cublas_pedantic(handle) ? CUBLAS_COMPUTE_32F : ash_cublas_choose();
    cublasStatus_t st;
    ash_cublas_depth++;
    if (ct == CUBLAS_COMPUTE_32F || ash_cublas_real.cublasGemmEx == NULL) {
        ct = CUBLAS_COMPUTE_32F;
        st = ash_cublas_real.cublasSgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,
                                            C_, ldc);
    } else {
        st = ash_cublas_real.cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, B,
                                          CUDA_R_32F, ldb, beta, C_, CUDA_R_32F, ldc, ct,
                                          CUBLAS_GEMM_DEFAULT);
    }
    ash_cublas_depth--;
    ash_cublas_note("cublasSgemm_v2", transa, transb, m, n, k, 1, ct);
    ASH_CUBLAS_WRITE(cublasSgemm_v2, handle, NULL, C_, 1, 0);
    return st;
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                         const float *A, int lda, long long int strideA, const float *B,
                                         int ldb, long long int strideB, const float *beta, float *C_,
                                         int ldc, long long int strideC, int batchCount)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasSgemmStridedBatched);
    if (ash_cublas_depth > 0)
        return ash_cublas_real.cublasSgemmStridedBatched(handle, transa, transb, m, n, k, alpha, A, lda,
                                                         strideA, B, ldb, strideB, beta, C_, ldc, strideC,
                                                         batchCount);
    ASH_CUBLAS_WRITE(cublasSgemmStridedBatched, handle, NULL, C_, 1, 1);
    cublasComputeType_t ct = ash_cublas_pedantic(handle) ? CUBLAS_COMPUTE_32F : ash_cublas_choose();
    cublasStatus_t st;
    ash_cublas_depth++;
    if (ct == CUBLAS_COMPUTE_32F || ash_cublas_real.cublasGemmStridedBatchedEx == NULL) {
        ct = CUBLAS_COMPUTE_32F;
        st = ash_cublas_real.cublasSgemmStridedBatched(handle, transa, transb, m, n, k, alpha, A, lda,
                                                       strideA, B, ldb, strideB, beta, C_, ldc, strideC,
                                                       batchCount);
    } else {
        st = ash_cublas_real.cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A,
                                                        CUDA_R_32F, lda, strideA, B, CUDA_R_32F, ldb,
                                                        strideB, beta, C_, CUDA_R_32F, ldc, strideC,
                                                        batchCount, ct, CUBLAS_GEMM_DEFAULT);
    }
    ash_cublas_depth--;
    ash_cublas_note("cublasSgemmStridedBatched", transa, transb, m, n, k, batchCount, ct);
    ASH_CUBLAS_WRITE(cublasSgemmStridedBatched, handle, NULL, C_, 1, 0);
    return st;
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                  int m, int n, int k, const float *alpha, const float *const Aarray[],
                                  int lda, const float *const Barray[], int ldb, const float *beta,
                                  float *const Carray[], int ldc, int batchCount)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasSgemmBatched);
    if (ash_cublas_depth > 0)
        return ash_cublas_real.cublasSgemmBatched(handle, transa, transb, m, n, k, alpha, Aarray, lda,
                                                  Barray, ldb, beta, Carray, ldc, batchCount);
    ASH_CUBLAS_WRITE(cublasSgemmBatched, handle, NULL, NULL, 0, 1);
    cublasComputeType_t ct = ash_cublas_pedantic(handle) ? CUBLAS_COMPUTE_32F : ash_cublas_choose();
    cublasStatus_t st;
    ash_cublas_depth++;
    if (ct == CUBLAS_COMPUTE_32F || ash_cublas_real.cublasGemmBatchedEx == NULL) {
        ct = CUBLAS_COMPUTE_32F;
        st = ash_cublas_real.cublasSgemmBatched(handle, transa, transb, m, n, k, alpha, Aarray, lda,
                                                Barray, ldb, beta, Carray, ldc, batchCount);
    } else {
        st = ash_cublas_real.cublasGemmBatchedEx(handle, transa, transb, m, n, k, alpha,
                                                 (const void *const *)Aarray, CUDA_R_32F, lda,
                                                 (const void *const *)Barray, CUDA_R_32F, ldb, beta,
                                                 (void *const *)Carray, CUDA_R_32F, ldc, batchCount, ct,
                                                 CUBLAS_GEMM_DEFAULT);
    }
    ash_cublas_depth--;
    ash_cublas_note("cublasSgemmBatched", transa, transb, m, n, k, batchCount, ct);
    ASH_CUBLAS_WRITE(cublasSgemmBatched, handle, NULL, NULL, 0, 0);
    return st;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                            int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                            int lda, const void *B, cudaDataType Btype, int ldb, const void *beta, void *C_,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasGemmEx);
    ASH_CUBLAS_WRITE(cublasGemmEx, handle, NULL, C_, 1, 1);
    int f32 = ash_is_32f_gemm(Atype, Btype, Ctype, computeType);
    cublasComputeType_t ct = ash_cublas_ex_enter(f32, computeType);
    cublasStatus_t st = ash_cublas_real.cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                                                     B, Btype, ldb, beta, C_, Ctype, ldc, ct, algo);
    ash_cublas_ex_leave("cublasGemmEx", transa, transb, m, n, k, 1, f32, ct);
    ASH_CUBLAS_WRITE(cublasGemmEx, handle, NULL, C_, 1, 0);
    return st;
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                          const void *A, cudaDataType Atype, int lda, long long int strideA,
                                          const void *B, cudaDataType Btype, int ldb, long long int strideB,
                                          const void *beta, void *C_, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasGemmStridedBatchedEx);
    ASH_CUBLAS_WRITE(cublasGemmStridedBatchedEx, handle, NULL, C_, 1, 1);
    int f32 = ash_is_32f_gemm(Atype, Btype, Ctype, computeType);
    cublasComputeType_t ct = ash_cublas_ex_enter(f32, computeType);
    cublasStatus_t st = ash_cublas_real.cublasGemmStridedBatchedEx(
        handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C_,
        Ctype, ldc, strideC, batchCount, ct, algo);
    ash_cublas_ex_leave("cublasGemmStridedBatchedEx", transa, transb, m, n, k, batchCount, f32, ct);
    ASH_CUBLAS_WRITE(cublasGemmStridedBatchedEx, handle, NULL, C_, 1, 0);
    return st;
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                   int m, int n, int k, const void *alpha, const void *const Aarray[],
                                   cudaDataType Atype, int lda, const void *const Barray[],
                                   cudaDataType Btype, int ldb, const void *beta, void *const Carray[],
                                   cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasGemmBatchedEx);
    ASH_CUBLAS_WRITE(cublasGemmBatchedEx, handle, NULL, NULL, 0, 1);
    int f32 = ash_is_32f_gemm(Atype, Btype, Ctype, computeType);
    cublasComputeType_t ct = ash_cublas_ex_enter(f32, computeType);
    cublasStatus_t st = ash_cublas_real.cublasGemmBatchedEx(handle, transa, transb, m, n, k, alpha, Aarray,
                                                            Atype, lda, Barray, Btype, ldb, beta, Carray,
                                                            Ctype, ldc, batchCount, ct, algo);
    ash_cublas_ex_leave("cublasGemmBatchedEx", transa, transb, m, n, k, batchCount, f32, ct);
    ASH_CUBLAS_WRITE(cublasGemmBatchedEx, handle, NULL, NULL, 0, 0);
    return st;
}

/* ---- cuBLASLt: the application's descs and their FAST twins ---- */

typedef struct ash_lt_desc {
    cublasLtMatmulDesc_t desc, twin; /* twin NULL: none (not fp32, mode default, or dropped) */
    int f32;                         /* created with CUBLAS_COMPUTE_32F and scale CUDA_R_32F */
    struct ash_lt_desc *next;
} ash_lt_desc_t;

#define ASH_LT_BUCKETS 64
static ash_lt_desc_t *ash_lt_table[ASH_LT_BUCKETS];

static size_t ash_lt_bucket(const void *d) { return ((uintptr_t)d >> 4) % ASH_LT_BUCKETS; }

/* Under C.lock. */
static ash_lt_desc_t **ash_lt_find(cublasLtMatmulDesc_t d)
{
    ash_lt_desc_t **pp = &ash_lt_table[ash_lt_bucket(d)];
    while (*pp != NULL && (*pp)->desc != d)
        pp = &(*pp)->next;
    return pp;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
                                        cudaDataType_t scaleType)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasLtMatmulDescCreate);
    cublasStatus_t st = ash_cublas_real.cublasLtMatmulDescCreate(matmulDesc, computeType, scaleType);
    if (st != CUBLAS_STATUS_SUCCESS || matmulDesc == NULL || ash_cublas_depth > 0)
        return st;
    ash_lt_desc_t *e = calloc(1, sizeof *e);
    if (e == NULL)
        return st; /* untracked: runs as created */
    e->desc = *matmulDesc;
    e->f32 = computeType == CUBLAS_COMPUTE_32F && scaleType == CUDA_R_32F;
    if (e->f32 && C.mode != ASH_POLICY_MATMUL_DEFAULT &&
        ash_cublas_real.cublasLtMatmulDescCreate(&e->twin, ash_ct_fast[C.mode], CUDA_R_32F) !=
            CUBLAS_STATUS_SUCCESS)
        e->twin = NULL;
    pthread_mutex_lock(&C.lock);
    ash_lt_desc_t **pp = ash_lt_find(e->desc);
    if (*pp != NULL) { /* a stale entry for a reused address (destroyed behind our back) */
        ash_lt_desc_t *old = *pp;
        *pp = old->next;
        if (old->twin != NULL && ash_cublas_real.cublasLtMatmulDescDestroy != NULL)
            ash_cublas_real.cublasLtMatmulDescDestroy(old->twin);
        free(old);
    }
    e->next = ash_lt_table[ash_lt_bucket(e->desc)];
    ash_lt_table[ash_lt_bucket(e->desc)] = e;
    pthread_mutex_unlock(&C.lock);
    return st;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasLtMatmulDescDestroy);
    pthread_mutex_lock(&C.lock);
    ash_lt_desc_t **pp = ash_lt_find(matmulDesc), *e = *pp;
    if (e != NULL)
        *pp = e->next;
    pthread_mutex_unlock(&C.lock);
    if (e != NULL) {
        if (e->twin != NULL)
            ash_cublas_real.cublasLtMatmulDescDestroy(e->twin);
        free(e);
    }
    return ash_cublas_real.cublasLtMatmulDescDestroy(matmulDesc);
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t sizeInBytes)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasLtMatmulDescSetAttribute);
    cublasStatus_t st = ash_cublas_real.cublasLtMatmulDescSetAttribute(matmulDesc, attr, buf, sizeInBytes);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    pthread_mutex_lock(&C.lock);
    ash_lt_desc_t *e = *ash_lt_find(matmulDesc);
    cublasLtMatmulDesc_t drop = NULL;
    if (e != NULL && e->twin != NULL) {
        /* the application changes the compute or scale type itself: its choice wins */
        if (attr == CUBLASLT_MATMUL_DESC_COMPUTE_TYPE || attr == CUBLASLT_MATMUL_DESC_SCALE_TYPE ||
            ash_cublas_real.cublasLtMatmulDescSetAttribute(e->twin, attr, buf, sizeInBytes) !=
                CUBLAS_STATUS_SUCCESS) {
            drop = e->twin;
            e->twin = NULL;
            e->f32 = 0;
        }
    }
    pthread_mutex_unlock(&C.lock);
    if (drop != NULL)
        ash_cublas_real.cublasLtMatmulDescDestroy(drop);
    return st;
}

static int ash_lt_is_32f(cublasLtMatrixLayout_t l)
{
    int32_t type = -1;
    size_t w = 0;
    if (l == NULL || ash_cublas_real.cublasLtMatrixLayoutGetAttribute == NULL)
        return 0;
    return ash_cublas_real.cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type,
                                                            &w) == CUBLAS_STATUS_SUCCESS &&
           type == CUDA_R_32F;
}

static void ash_lt_shape(cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t d, long long *m, long long *n,
                         long long *k, long long *batch)
{
    uint64_t ar = 0, ac = 0, dr = 0, dc = 0;
    int32_t b = 1;
    size_t w;
    if (ash_cublas_real.cublasLtMatrixLayoutGetAttribute == NULL)
        return;
    ash_cublas_real.cublasLtMatrixLayoutGetAttribute(a, CUBLASLT_MATRIX_LAYOUT_ROWS, &ar, sizeof ar, &w);
    ash_cublas_real.cublasLtMatrixLayoutGetAttribute(a, CUBLASLT_MATRIX_LAYOUT_COLS, &ac, sizeof ac, &w);
    ash_cublas_real.cublasLtMatrixLayoutGetAttribute(d, CUBLASLT_MATRIX_LAYOUT_ROWS, &dr, sizeof dr, &w);
    ash_cublas_real.cublasLtMatrixLayoutGetAttribute(d, CUBLASLT_MATRIX_LAYOUT_COLS, &dc, sizeof dc, &w);
    ash_cublas_real.cublasLtMatrixLayoutGetAttribute(d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b, &w);
    *m = (long long)dr;
    *n = (long long)dc;
    *k = (long long)(ar == dr ? ac : ar); /* op(A) is m x k */
    *batch = b;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                              cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C_,
                              cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSizeInBytes,
                              cudaStream_t stream)
{
    ash_cublas_init();
    ASH_CUBLAS_REAL_OR_FAIL(cublasLtMatmul);
    if (ash_cublas_depth > 0) /* cuBLAS itself (cublasSgemm -> cublasLtMatmul): not the app's GEMM */
        return ash_cublas_real.cublasLtMatmul(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C_,
                                              Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
    ASH_CUBLAS_WRITE(cublasLtMatmul, NULL, stream, D, 1, 1);
    pthread_mutex_lock(&C.lock);
    ash_lt_desc_t *e = *ash_lt_find(computeDesc);
    int tracked = e != NULL, f32 = e != NULL && e->f32;
    cublasLtMatmulDesc_t twin = e != NULL ? e->twin : NULL;
    pthread_mutex_unlock(&C.lock);
    /* a desc destroyed by another thread while this call runs is the application's own race */
    f32 = f32 && ash_lt_is_32f(Adesc) && ash_lt_is_32f(Bdesc) && ash_lt_is_32f(Cdesc) &&
          ash_lt_is_32f(Ddesc ? Ddesc : Cdesc);
    cublasComputeType_t ct = f32 ? CUBLAS_COMPUTE_32F : (cublasComputeType_t)-1;
    if (f32 && twin != NULL)
        ct = ash_cublas_choose();
    cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
    ash_cublas_depth++;
    if (ct != CUBLAS_COMPUTE_32F && ct != (cublasComputeType_t)-1) {
        st = ash_cublas_real.cublasLtMatmul(lightHandle, twin, alpha, A, Adesc, B, Bdesc, beta, C_, Cdesc, D,
                                            Ddesc, algo, workspace, workspaceSizeInBytes, stream);
        if ((st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE) && algo != NULL)
            st = ash_cublas_real.cublasLtMatmul(lightHandle, twin, alpha, A, Adesc, B, Bdesc, beta, C_, Cdesc,
                                                D, Ddesc, NULL, workspace, workspaceSizeInBytes, stream);
        if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE) {
            ASH_WARN_CAPPED("cublas", "cublasLtMatmul refused the %s twin of desc %p (status %d): ran it "
                            "in fp32", ash_ct_names[ash_ct_of(ct)], (void *)computeDesc, (int)st);
            atomic_fetch_add_explicit(&C.twin_refused, 1, memory_order_relaxed);
            ct = CUBLAS_COMPUTE_32F;
        }
    }
    if (ct == CUBLAS_COMPUTE_32F || ct == (cublasComputeType_t)-1)
        st = ash_cublas_real.cublasLtMatmul(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C_,
                                            Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
    ash_cublas_depth--;
    if (tracked || f32) {
        long long m = 0, n = 0, k = 0, batch = 1;
        if (ash_log_enabled(ASH_LOG_DEBUG))
            ash_lt_shape(Adesc, Ddesc ? Ddesc : Cdesc, &m, &n, &k, &batch);
        ash_cublas_note("cublasLtMatmul", -1, -1, m, n, k, batch, ct); /* ops live in the desc */
    }
    ASH_CUBLAS_WRITE(cublasLtMatmul, NULL, stream, D, 1, 0);
    return st;
}
