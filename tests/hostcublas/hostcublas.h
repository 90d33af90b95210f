/* hostcublas.h — private to tests/hostcublas: the GEMM both test doubles (libcublas.so.13 and
 * libcublasLt.so.13) run on hostcuda memory, and the rounding of each compute type.
 *
 * Arithmetic: column-major as cuBLAS; C(i,j) = alpha * sum_p opA(i,p) * opB(p,j) + beta * C(i,j),
 * the sum in fp32, p increasing, no FMA; beta == 0 does not read C. Elements are fp32, bf16 or
 * f16 (read exactly into fp32, results rounded to nearest even). A FAST compute type first rounds
 * every A and B element to its type (TF32: 10-bit mantissa, round to nearest even; 16BF: bf16
 * RNE; 16F: f16 RNE with overflow to Inf), so each product is exact in fp32, as on tensor cores;
 * CUBLAS_COMPUTE_32F / _PEDANTIC round nothing. NVIDIA_TF32_OVERRIDE=0 turns TF32 off as it does
 * for NVIDIA's libraries (FAST_TF32 and CUBLAS_TF32_TENSOR_OP_MATH then compute in plain fp32).
 * cuBLASLt's epilogues (bias, GELU with its aux matrix, GELU gradient, bias gradients) run on the
 * fp32 result before it is stored. Work is stream-ordered: the caller enqueues
 * hostcublas_gemm_run with cuLaunchHostFunc; device pointers are translated with
 * hostcuda_host_view when the work runs (non-device pointers are used as they are).
 */
#ifndef HOSTCUBLAS_H
#define HOSTCUBLAS_H

#include "../../collectives/ash_coll_cast.h"
#include "hostcuda.h"

#include <cublas_api.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOSTCUBLAS_API __attribute__((visibility("default")))

typedef enum { HCB_ROUND_NONE, HCB_ROUND_TF32, HCB_ROUND_BF16, HCB_ROUND_F16 } hcb_round_t;

/* NVIDIA_TF32_OVERRIDE=0: "never accelerate FP32 computations with TF32 tensor cores" */
static inline int hcb_tf32_disabled(void)
{
    const char *v = getenv("NVIDIA_TF32_OVERRIDE");
    return v && strcmp(v, "0") == 0;
}

static inline int hcb_round_of(cublasComputeType_t ct, hcb_round_t *out)
{
    switch (ct) {
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: *out = HCB_ROUND_NONE; return 0;
    case CUBLAS_COMPUTE_32F_FAST_TF32: *out = hcb_tf32_disabled() ? HCB_ROUND_NONE : HCB_ROUND_TF32; return 0;
    case CUBLAS_COMPUTE_32F_FAST_16BF: *out = HCB_ROUND_BF16; return 0;
    case CUBLAS_COMPUTE_32F_FAST_16F: *out = HCB_ROUND_F16; return 0;
    default: return -1;
    }
}

static inline float hcb_round(hcb_round_t r, float x)
{
    uint32_t u;
    switch (r) {
    case HCB_ROUND_TF32:
        memcpy(&u, &x, 4);
        if ((u & 0x7f800000u) == 0x7f800000u)
            return x; /* Inf / NaN */
        u += 0xfffu + ((u >> 13) & 1u);
        u &= ~0x1fffu;
        memcpy(&x, &u, 4);
        return x;
    case HCB_ROUND_BF16: return ash_coll_bf16_to_f32(ash_coll_f32_to_bf16_rn(x));
    case HCB_ROUND_F16: return ash_coll_f16_to_f32(ash_coll_f32_to_f16_rn(x));
    default: return x;
    }
}

/* a pointer as host code may use it: hostcuda's view of device memory, else itself */
static inline void *hcb_view(const void *p)
{
    void *v = p ? hostcuda_host_view((CUdeviceptr)(uintptr_t)p) : NULL;
    return v ? v : (void *)(uintptr_t)p;
}

/* One queued GEMM (or a batch). ptr_arrays: A/B/C hold device arrays of per-batch pointers.
 * Element types ta/tb/tc/td: CUDA_R_32F (0, the default), CUDA_R_16BF or CUDA_R_16F. The
 * epilogue (cuBLASLt's; 0 = default) runs on the fp32 value v = alpha*sum + beta*C:
 *   BIAS: v += bias[i]; GELU: v = gelu(v) (tanh form), *_AUX: aux(i,j) = v before the GELU;
 *   DGELU: v *= gelu'(aux(i,j)); BGRADA: bias[i] = sum_p op(A)(i,p); BGRADB: bias[j] = sum_p
 *   op(B)(p,j); DGELU_BGRAD: bias[i] = sum_j D(i,j). bias and aux have types tbias / taux. */
typedef struct {
    int transa, transb; /* 0: N, else T (real data: C == T) */
    long long m, n, k, lda, ldb, ldc, sa, sb, sc;
    int batch, ptr_arrays;
    float alpha, beta;
    const void *alpha_dev, *beta_dev; /* cuBLAS pointer mode device: alpha / beta read when it runs */
    hcb_round_t round;
    const void *A, *B;
    const void *Cin; /* read for beta != 0 (Lt: C; BLAS: == Cout) */
    void *Cout;
    long long ldcin, scin;
    int ta, tb, tc, td;
    uint32_t epilogue;
    void *bias;
    int tbias;
    long long sbias;
    void *aux;
    int taux;
    long long ldaux, saux;
} hcb_gemm_t;

enum { HCB_EPI_BIAS = 4, HCB_EPI_BGRAD = 16, HCB_EPI_GELU = 32, HCB_EPI_DGELU = 64, HCB_EPI_AUX = 128,
       HCB_EPI_BGRADA = 256, HCB_EPI_BGRADB = 512 };

/* the element types the engine reads and writes */
static inline int hcb_type_ok(int t)
{
    return t == CUDA_R_32F || t == CUDA_R_16BF || t == CUDA_R_16F;
}

static inline size_t hcb_type_size(int t)
{
    return t == CUDA_R_32F ? 4 : 2;
}

static inline float hcb_load(int t, const void *p, long long i)
{
    switch (t) {
    case CUDA_R_16BF: return ash_coll_bf16_to_f32(((const uint16_t *)p)[i]);
    case CUDA_R_16F: return ash_coll_f16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static inline void hcb_store(int t, void *p, long long i, float v)
{
    switch (t) {
    case CUDA_R_16BF: ((uint16_t *)p)[i] = ash_coll_f32_to_bf16_rn(v); break;
    case CUDA_R_16F: ((uint16_t *)p)[i] = ash_coll_f32_to_f16_rn(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

/* GELU, tanh form (as llm.c's gelu_forward / gelu_backward), in float */
#define HCB_GELU_S 0.7978845608028654f /* sqrt(2/pi) */
static inline float hcb_gelu(float x)
{
    float cube = 0.044715f * x * x * x;
    return 0.5f * x * (1.0f + tanhf(HCB_GELU_S * (x + cube)));
}

static inline float hcb_dgelu(float x)
{
    float cube = 0.044715f * x * x * x;
    float t = tanhf(HCB_GELU_S * (x + cube));
    float sech2 = 1.0f - t * t;
    return 0.5f * (1.0f + t) + x * 0.5f * sech2 * HCB_GELU_S * (1.0f + 3.0f * 0.044715f * x * x);
}

/* op(A) packed as m rows of k (row i = op(A)(i, 0..k-1)), rounded for the compute type */
static inline void hcb_pack(const void *X, int t, int trans, long long rows, long long k, long long ld,
                            hcb_round_t r, float *out)
{
    for (long long i = 0; i < rows; i++)
        for (long long p = 0; p < k; p++)
            out[i * k + p] = hcb_round(r, hcb_load(t, X, trans ? p + i * ld : i + p * ld));
}

/* One product. Each output's sum runs over p in increasing order in fp32 (no FMA), whatever the
 * blocking: four columns are summed side by side only to keep four independent chains busy. */
static inline void hcb_gemm_one(const hcb_gemm_t *g, const void *A, const void *B, const void *Cin, void *C,
                                void *bias, void *aux, float *Ap, float *Bp)
{
    long long m = g->m, n = g->n, k = g->k;
    hcb_pack(A, g->ta, g->transa, m, k, g->lda, g->round, Ap);
    hcb_pack(B, g->tb, !g->transb, n, k, g->ldb, g->round, Bp); /* op(B)(p,j) as row j */
    uint32_t e = g->epilogue;
    int epi_bias = (e & HCB_EPI_BIAS) && !(e & (HCB_EPI_BGRADA | HCB_EPI_BGRADB));
    for (long long j0 = 0; j0 < n; j0 += 4) {
        long long nj = n - j0 < 4 ? n - j0 : 4;
        for (long long i = 0; i < m; i++) {
            float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            const float *a = Ap + i * k;
            if (nj == 4) {
                const float *b0 = Bp + j0 * k, *b1 = b0 + k, *b2 = b1 + k, *b3 = b2 + k;
                for (long long p = 0; p < k; p++) {
                    s[0] += a[p] * b0[p];
                    s[1] += a[p] * b1[p];
                    s[2] += a[p] * b2[p];
                    s[3] += a[p] * b3[p];
                }
            } else {
                for (long long jj = 0; jj < nj; jj++)
                    for (long long p = 0; p < k; p++)
                        s[jj] += a[p] * Bp[(j0 + jj) * k + p];
            }
            for (long long jj = 0; jj < nj; jj++) {
                long long j = j0 + jj;
                float v = g->alpha * s[jj];
                if (g->beta != 0.0f)
                    v += g->beta * hcb_load(g->tc, Cin, i + j * g->ldcin);
                if (epi_bias)
                    v += hcb_load(g->tbias, bias, i);
                if (e & HCB_EPI_GELU) {
                    if (e & HCB_EPI_AUX)
                        hcb_store(g->taux, aux, i + j * g->ldaux, v);
                    v = hcb_gelu(v);
                } else if (e & HCB_EPI_DGELU) {
                    v *= hcb_dgelu(hcb_load(g->taux, aux, i + j * g->ldaux));
                }
                hcb_store(g->td, C, i + j * g->ldc, v);
            }
        }
    }
    if (e & HCB_EPI_BGRADA)
        for (long long i = 0; i < m; i++) {
            float s = 0.0f;
            for (long long p = 0; p < k; p++)
                s += hcb_load(g->ta, A, g->transa ? p + i * g->lda : i + p * g->lda);
            hcb_store(g->tbias, bias, i, s);
        }
    if (e & HCB_EPI_BGRADB)
        for (long long j = 0; j < n; j++) {
            float s = 0.0f;
            for (long long p = 0; p < k; p++)
                s += hcb_load(g->tb, B, g->transb ? j + p * g->ldb : p + j * g->ldb);
            hcb_store(g->tbias, bias, j, s);
        }
    if ((e & HCB_EPI_DGELU) && (e & HCB_EPI_BGRAD))
        for (long long i = 0; i < m; i++) {
            float s = 0.0f;
            for (long long j = 0; j < n; j++)
                s += hcb_load(g->td, C, i + j * g->ldc);
            hcb_store(g->tbias, bias, i, s);
        }
}

static void hostcublas_gemm_run(void *arg)
{
    hcb_gemm_t *g = arg;
    if (g->alpha_dev)
        g->alpha = *(const float *)hcb_view(g->alpha_dev);
    if (g->beta_dev)
        g->beta = *(const float *)hcb_view(g->beta_dev);
    float *Ap = malloc((size_t)(g->m * g->k + 1) * sizeof(float));
    float *Bp = malloc((size_t)(g->n * g->k + 1) * sizeof(float));
    if (!Ap || !Bp) {
        static const char msg[] = "hostcublas: out of memory for a GEMM's packed operands: result not written\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        goto out;
    }
    for (int b = 0; b < g->batch; b++) {
        const void *A, *B, *Cin;
        void *C;
        if (g->ptr_arrays) {
            A = hcb_view(((const void *const *)hcb_view(g->A))[b]);
            B = hcb_view(((const void *const *)hcb_view(g->B))[b]);
            C = hcb_view(((void *const *)hcb_view(g->Cout))[b]);
            Cin = C;
        } else {
            A = (const char *)hcb_view(g->A) + b * g->sa * (long long)hcb_type_size(g->ta);
            B = (const char *)hcb_view(g->B) + b * g->sb * (long long)hcb_type_size(g->tb);
            C = (char *)hcb_view(g->Cout) + b * g->sc * (long long)hcb_type_size(g->td);
            Cin = g->Cin ? (const char *)hcb_view(g->Cin) + b * g->scin * (long long)hcb_type_size(g->tc) : NULL;
        }
        void *bias = g->bias ? (char *)hcb_view(g->bias) + b * g->sbias * (long long)hcb_type_size(g->tbias) : NULL;
        void *aux = g->aux ? (char *)hcb_view(g->aux) + b * g->saux * (long long)hcb_type_size(g->taux) : NULL;
        hcb_gemm_one(g, A, B, Cin, C, bias, aux, Ap, Bp);
    }
out:
    free(Ap);
    free(Bp);
    free(g);
}

/* Queue G (heap-allocated; freed when it has run) on STREAM. */
static inline cublasStatus_t hostcublas_enqueue(hcb_gemm_t *g, CUstream stream)
{
    if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0) {
        free(g);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (g->m == 0 || g->n == 0 || g->batch == 0) {
        free(g);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (cuLaunchHostFunc(stream, hostcublas_gemm_run, g) != CUDA_SUCCESS) {
        free(g);
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

#endif /* HOSTCUBLAS_H */
