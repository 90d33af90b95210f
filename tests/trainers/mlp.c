/* mlp.c — a legacy-style single-GPU trainer (CUDA Driver API only) that accelshim must make
 * data-parallel without changes. Trains a 16-32(tanh)-4 MLP with MSE loss on a deterministic
 * synthetic stream: sample i is generated from a counter-based hash of (seed, i), its target is a
 * fixed random "teacher" function of the input plus small noise. Kernels: mlp_kernels.cu (PTX
 * embedded by mlp_ptx.S, loaded with cuModuleLoadData). Host code touches device memory only
 * through cuMemcpy*; single-threaded; one stream. Run `mlp --help` for options and output format.
 * Parameters W1[32x16], b1[32], W2[4x32], b2[4] live contiguously in ONE allocation, gradients (the
 * MEAN over the local batch) in another, in the same order; per-tensor updates offset into them.
 * Policy-relevant arguments (0-based): linear_forward (mangled _Z14linear_forwardPfPKfS1_S1_iiii)
 * W = arg 1 (first launch of a step: the start of the parameter allocation); sgd_update grads arg 1,
 * count arg 2; adam_update grads arg 1, count arg 4; grad_norm_squared grads arg 1, count arg 2.
 */
#include <cublas_v2.h> /* types only: cuBLAS is loaded at the first --gemm cublas use */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mlp_data.h" /* shape, tensor layout, data/teacher/init generator, checksum */

extern const char mlp_kernels_ptx[]; /* mlp_ptx.S: build/tests/trainers/mlp_kernels.ptx + NUL */

typedef struct mlp_opts {
    mlp_common_opts_t c;       /* the options rt_mlp takes too (mlp_data.h) */
    int gemm_cublas;           /* --gemm cublas: the linear layers' matmuls via cublasSgemm_v2 */
    /* fault injection (tests/reliability) and a legacy checkpoint; -1 / NULL / 0 = off */
    long long stall_rank, stall_at_step, bad_count_rank, segv_rank, segv_at_step, ckpt_every;
    const char *checkpoint;
    long long skip_tensor_every; /* --skip-tensor-every: 0 = off */
    long long update_chunks;     /* --update-chunks: per-tensor update launches per tensor (1) */
    long long nan_rank, nan_at_step; /* --nan-rank: a NaN in gradient 0 after backward; -1 = off */
    long long recover_segv_at;   /* --recover-segv-at-step: -1 = off */
    long long rss_at;            /* --rss-at-step: -1 = off */
    long long eval_batches;      /* --eval-batches: evaluation batches before step 0 (0) */
    long long accum;             /* --accum-steps: micro-batches per step, gradients summed (1) */
    const char *ptx_file;        /* --ptx-file: the kernels' PTX from this file (NULL: embedded) */
} mlp_opts_t;

static const char mlp_usage[] =
    "usage: mlp [options]\n"
    "Trains a 16-32(tanh)-4 MLP (MSE) on a synthetic deterministic stream, CUDA Driver API only.\n"
    MLP_COMMON_USAGE
    "  --checkpoint FILE      a legacy checkpoint: the parameters as --save writes them, written\n"
    "                         with fopen/fwrite at the end\n"
    "  --checkpoint-every N   (N >= 1) also write the checkpoint after steps N-1, 2N-1, ...\n"
    "Fault injection (for accelshim's reliability tests; R is the --shard-rank):\n"
    "  --stall-rank R --stall-at-step S  rank R sleeps forever before step S's update (sync point)\n"
    "  --bad-count-rank R     rank R passes n-64 as the element count to the norm/update kernels\n"
    "  --segv-rank R --segv-at-step S    rank R writes through NULL in mlp_deliberate_crash()\n"
    "                         before step S's update\n"
    "  --recover-segv-at-step S  (every rank) after cuInit install a SIGSEGV handler that makes a\n"
    "                         protected page writable and returns; before step S's update write\n"
    "                         to that page (a program that recovers from SIGSEGV itself)\n"
    "  --nan-rank R --nan-at-step S      rank R sets gradient element 0 to NaN (cuMemsetD32)\n"
    "                         after step S's backward, before its sync point (default step 0)\n"
    "  --gemm kernels|cublas  the linear layers' matrix products: the trainer's own kernels\n"
    "                         (default) or cublasSgemm_v2 (libcublas.so.13, 5 GEMMs per step;\n"
    "                         bias and activation stay kernels)\n"
    "  --skip-tensor-every K  (K >= 1; needs --update per-tensor) on steps K-1, 2K-1, ... skip\n"
    "                         the update of b1 (the 2nd tensor): the launch pattern changes\n"
    "                         mid-run (accelshim's fused-reduction tests)\n"
    "  --update-chunks K      (K >= 1, default 1; needs --update per-tensor) split each tensor's\n"
    "                         update launch into K launches over consecutive slices (4*K a step;\n"
    "                         a slice may be empty: n = 0); bit-identical to K = 1\n"
    "  --rss-at-step S        print `rss step S KB` after step S and `rss end KB` after the last\n"
    "                         step to stderr: this process's VmRSS (accelshim's leak tests)\n"
    "  --eval-batches K       (K >= 0, default 0) before step 0, evaluate K batches of held-out\n"
    "                         samples (forward pass and loss read, no update): `eval k loss L`\n"
    "  --accum-steps K        (K >= 1, default 1) gradient accumulation: each step runs K\n"
    "                         micro-batches of B samples (forward, loss read, backward adding to the\n"
    "                         gradients), then one update; the loss printed is their mean\n"
    "  --ptx-file FILE        load the kernels from this PTX file (cuModuleLoad) instead of the\n"
    "                         embedded copy\n"
    "  --help                 this text\n"
    "Output (stdout): one line per step t = 0..N-1, `step t loss L` (%.9g; mean squared error on\n"
    "this process's batch, before the update), then `checksum SUM HASH`: SUM = sum of all final\n"
    "parameters in order, accumulated in double (%.17g); HASH = FNV-1a 64 of the --save bytes\n"
    "(16 hex digits). Exit: 0 ok, 1 CUDA or I/O error, 2 bad options.\n";

static void mlp_parse_opts(int argc, char **argv, mlp_opts_t *o)
{
    enum { O_STALL_RANK = MLP_O_OWN, O_STALL_AT, O_BAD_COUNT, O_SEGV_RANK, O_SEGV_AT, O_CKPT,
           O_CKPT_EVERY, O_SKIP_TENSOR, O_NAN_RANK, O_NAN_AT, O_UPDATE_CHUNKS, O_GEMM,
           O_RECOVER_SEGV, O_RSS_AT, O_EVAL, O_PTX_FILE, O_ACCUM };
    static const struct option longopts[] = {
        MLP_COMMON_LONGOPTS,
        {"gemm", required_argument, NULL, O_GEMM},
        {"stall-rank", required_argument, NULL, O_STALL_RANK},
        {"stall-at-step", required_argument, NULL, O_STALL_AT},
        {"bad-count-rank", required_argument, NULL, O_BAD_COUNT},
        {"segv-rank", required_argument, NULL, O_SEGV_RANK},
        {"segv-at-step", required_argument, NULL, O_SEGV_AT},
        {"checkpoint", required_argument, NULL, O_CKPT},
        {"checkpoint-every", required_argument, NULL, O_CKPT_EVERY},
        {"skip-tensor-every", required_argument, NULL, O_SKIP_TENSOR},
        {"nan-rank", required_argument, NULL, O_NAN_RANK},
        {"nan-at-step", required_argument, NULL, O_NAN_AT},
        {"update-chunks", required_argument, NULL, O_UPDATE_CHUNKS},
        {"recover-segv-at-step", required_argument, NULL, O_RECOVER_SEGV},
        {"rss-at-step", required_argument, NULL, O_RSS_AT},
        {"eval-batches", required_argument, NULL, O_EVAL},
        {"ptx-file", required_argument, NULL, O_PTX_FILE},
        {"accum-steps", required_argument, NULL, O_ACCUM},
        {NULL, 0, NULL, 0},
    };
    *o = (mlp_opts_t){.stall_rank = -1, .bad_count_rank = -1, .segv_rank = -1, .nan_rank = -1,
                      .update_chunks = 1, .recover_segv_at = -1, .rss_at = -1, .accum = 1};
    mlp_common_defaults(&o->c);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        if (mlp_common_option(c, optarg, &o->c))
            continue;
        switch (c) {
        case O_STALL_RANK: o->stall_rank = mlp_parse_int("--stall-rank", optarg, 0, 1 << 20); break;
        case O_STALL_AT: o->stall_at_step = mlp_parse_int("--stall-at-step", optarg, 0, 1000000000); break;
        case O_BAD_COUNT: o->bad_count_rank = mlp_parse_int("--bad-count-rank", optarg, 0, 1 << 20); break;
        case O_SEGV_RANK: o->segv_rank = mlp_parse_int("--segv-rank", optarg, 0, 1 << 20); break;
        case O_SEGV_AT: o->segv_at_step = mlp_parse_int("--segv-at-step", optarg, 0, 1000000000); break;
        case O_CKPT: o->checkpoint = optarg; break;
        case O_CKPT_EVERY: o->ckpt_every = mlp_parse_int("--checkpoint-every", optarg, 1, 1000000000); break;
        case O_SKIP_TENSOR: o->skip_tensor_every = mlp_parse_int("--skip-tensor-every", optarg, 1, 1000000000); break;
        case O_NAN_RANK: o->nan_rank = mlp_parse_int("--nan-rank", optarg, 0, 1 << 20); break;
        case O_NAN_AT: o->nan_at_step = mlp_parse_int("--nan-at-step", optarg, 0, 1000000000); break;
        case O_RECOVER_SEGV: o->recover_segv_at = mlp_parse_int("--recover-segv-at-step", optarg, 0, 1000000000); break;
        case O_RSS_AT: o->rss_at = mlp_parse_int("--rss-at-step", optarg, 0, 1000000000); break;
        case O_EVAL: o->eval_batches = mlp_parse_int("--eval-batches", optarg, 0, 1000000); break;
        case O_PTX_FILE: o->ptx_file = optarg; break;
        case O_ACCUM: o->accum = mlp_parse_int("--accum-steps", optarg, 1, 1000000); break;
        case O_UPDATE_CHUNKS: o->update_chunks = mlp_parse_int("--update-chunks", optarg, 1, 1 << 20); break;
        case O_GEMM:
            if (!strcmp(optarg, "kernels")) o->gemm_cublas = 0;
            else if (!strcmp(optarg, "cublas")) o->gemm_cublas = 1;
            else mlp_usage_error("--gemm: invalid value '%s' (kernels or cublas)", optarg);
            break;
        case MLP_O_HELP: fputs(mlp_usage, stdout); exit(0);
        default: mlp_bad_option(c, argv);
        }
    }
    mlp_common_finish(argc, argv, &o->c);
    if (o->skip_tensor_every > 0 && !o->c.per_tensor)
        mlp_usage_error("--skip-tensor-every needs --update per-tensor%s", "");
    if (o->update_chunks > 1 && !o->c.per_tensor)
        mlp_usage_error("--update-chunks needs --update per-tensor%s", "");
}

/* --rss-at-step: "rss LABEL KB" (VmRSS from /proc/self/status) to stderr; -1 when unreadable */
static void mlp_print_rss(const char *label)
{
    long long kb = -1;
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    fprintf(stderr, "rss %s %lld\n", label, kb);
}

/* ---- CUDA plumbing ---- */

static void mlp_cu_fail(const char *call, CUresult r, int line)
{
    const char *name = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = "unknown error";
    fprintf(stderr, "mlp: %s failed: %s (%d) at mlp.c:%d\n", call, name, (int)r, line);
    exit(1);
}
#define MLP_CK(call)                                                                           \
    do {                                                                                       \
        CUresult mlp_r_ = (call);                                                              \
        if (mlp_r_ != CUDA_SUCCESS)                                                            \
            mlp_cu_fail(#call, mlp_r_, __LINE__);                                              \
    } while (0)

typedef struct mlp_kernels {
    CUfunction forward, mse_loss, mse_grad, bwd_weight, bwd_input, norm_sq, clip_scale, sgd, adam;
} mlp_kernels_t;

static CUstream mlp_stream;

/* grid-stride launch over `work` items: 128 threads per block, at most 1024 blocks */
static void mlp_launch(CUfunction f, long long work, void **args)
{
    long long blocks = (work + 127) / 128;
    if (blocks < 1) blocks = 1;
    if (blocks > 1024) blocks = 1024;
    MLP_CK(cuLaunchKernel(f, (unsigned)blocks, 1, 1, 128, 1, 1, 0, mlp_stream, args, NULL));
}

/* a serial reduction: one block of one thread */
static void mlp_launch_serial(CUfunction f, void **args)
{
    MLP_CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, mlp_stream, args, NULL));
}

static CUdeviceptr mlp_alloc_floats(long long n)
{
    CUdeviceptr p;
    MLP_CK(cuMemAlloc(&p, (size_t)n * sizeof(float)));
    return p;
}

/* --segv-rank: a deliberate NULL write in a host function with a recognisable name, so a crash
 * report's backtrace names it (noinline, and volatile so the compiler keeps the store). */
__attribute__((noinline)) void mlp_deliberate_crash(long long step)
{
    volatile int *volatile p = NULL;
    fprintf(stderr, "mlp: --segv-rank: writing through NULL before step %lld\n", step);
    fflush(stderr);
    *p = (int)step;
}

/* --recover-segv-at-step: a page the program protects and, on the fault, makes writable again
 * from its own SIGSEGV handler, which then returns (guard pages, JITs, GC write barriers). A
 * fault elsewhere restores the default action, so it still kills the process. */
static char *volatile mlp_guard_page;
static long mlp_guard_size;
static volatile sig_atomic_t mlp_guard_faults;

static void mlp_guard_handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char *a = si->si_addr;
    if (mlp_guard_page && a >= mlp_guard_page && a < mlp_guard_page + mlp_guard_size &&
        mprotect(mlp_guard_page, (size_t)mlp_guard_size, PROT_READ | PROT_WRITE) == 0) {
        mlp_guard_faults++;
        return;
    }
    signal(sig, SIG_DFL); /* not ours: give up the usual way, the default action re-raised */
    raise(sig);
}

static int mlp_guard_install(void)
{
    mlp_guard_size = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)mlp_guard_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    mlp_guard_page = p;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = mlp_guard_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGSEGV, &sa, NULL);
}

__attribute__((noinline)) static int mlp_guard_touch(long long step)
{
    fprintf(stderr, "mlp: --recover-segv-at-step: writing to the protected page before step %lld\n", step);
    *(volatile char *)mlp_guard_page = (char)(step + 1);
    fprintf(stderr, "mlp: --recover-segv-at-step: the program's handler fixed %d fault(s); going on\n",
            (int)mlp_guard_faults);
    return *(volatile char *)mlp_guard_page == (char)(step + 1) && mlp_guard_faults == 1 ? 0 : -1;
}

/* --checkpoint: the parameters as --save writes them, with plain fopen/fwrite (legacy style). */
static int mlp_write_checkpoint(const char *path, CUdeviceptr d_params)
{
    static float p[MLP_NPARAMS];
    static unsigned char b[sizeof p];
    MLP_CK(cuStreamSynchronize(mlp_stream));
    MLP_CK(cuMemcpyDtoH(p, d_params, sizeof p));
    for (int i = 0; i < MLP_NPARAMS; i++)
        mlp_put_le32(b + 4 * i, p[i]);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, sizeof b, f) != sizeof b || fclose(f) != 0) {
        fprintf(stderr, "mlp: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* ---- --gemm cublas: the linear layers' matmuls through cublasSgemm_v2 (row-major data seen by
 * column-major cuBLAS as its transpose). Bias, activation and the bias gradient stay the trainer's
 * own kernels, applied through an identity matrix (adding exact zeros changes nothing), so only
 * the products move to cuBLAS: 2 GEMMs forward, 3 backward per step. ---- */

typedef struct mlp_gemm {
    cublasHandle_t h;
    CUdeviceptr eye_hid, eye_out; /* identity MLP_HID x MLP_HID and MLP_OUT x MLP_OUT */
    CUdeviceptr z;                /* scratch: B x MLP_HID products */
} mlp_gemm_t;

/* cuBLAS is dlopen'ed at the first --gemm cublas use (no DT_NEEDED libcublas.so.13: the trainer
 * runs where cuBLAS is absent or lives only in a Python wheel's directory on LD_LIBRARY_PATH).
 * Symbols are resolved in the global scope (RTLD_DEFAULT), as a DT_NEEDED link would bind them,
 * so a preloaded interposer (accelshim's cuBLAS hooks) still comes first. */
static struct {
    __typeof__(&cublasCreate_v2) create;
    __typeof__(&cublasSetStream_v2) set_stream;
    __typeof__(&cublasDestroy_v2) destroy;
    __typeof__(&cublasSgemm_v2) sgemm;
} mlp_blas;

static void mlp_blas_load(void)
{
    if (mlp_blas.sgemm)
        return;
    if (!dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "mlp: --gemm cublas: cannot load libcublas.so.13: %s\n", dlerror());
        exit(1);
    }
    static const char *const names[] = {"cublasCreate_v2", "cublasSetStream_v2", "cublasDestroy_v2",
                                        "cublasSgemm_v2"};
    void **slots[] = {(void **)&mlp_blas.create, (void **)&mlp_blas.set_stream,
                      (void **)&mlp_blas.destroy, (void **)&mlp_blas.sgemm};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*slots[i] = dlsym(RTLD_DEFAULT, names[i]))) {
            fprintf(stderr, "mlp: --gemm cublas: libcublas.so.13 lacks %s\n", names[i]);
            exit(1);
        }
}

static void mlp_blas_fail(const char *call, cublasStatus_t s, int line)
{
    fprintf(stderr, "mlp: %s failed: cuBLAS status %d at mlp.c:%d\n", call, (int)s, line);
    exit(1);
}
#define MLP_BK(call)                                                                           \
    do {                                                                                       \
        cublasStatus_t mlp_s_ = (call);                                                        \
        if (mlp_s_ != CUBLAS_STATUS_SUCCESS)                                                   \
            mlp_blas_fail(#call, mlp_s_, __LINE__);                                            \
    } while (0)
#define MLP_DF(p) ((float *)(uintptr_t)(p))

static CUdeviceptr mlp_identity(int n)
{
    float *eye = calloc((size_t)n * (size_t)n, sizeof *eye);
    if (!eye) {
        fprintf(stderr, "mlp: out of host memory\n");
        exit(1);
    }
    for (int i = 0; i < n; i++)
        eye[i * n + i] = 1.0f;
    CUdeviceptr d = mlp_alloc_floats((long long)n * n);
    MLP_CK(cuMemcpyHtoD(d, eye, sizeof *eye * (size_t)n * (size_t)n));
    free(eye);
    return d;
}

static void mlp_gemm_init(mlp_gemm_t *g, int rows)
{
    mlp_blas_load();
    MLP_BK(mlp_blas.create(&g->h));
    MLP_BK(mlp_blas.set_stream(g->h, (cudaStream_t)mlp_stream));
    g->eye_hid = mlp_identity(MLP_HID);
    g->eye_out = mlp_identity(MLP_OUT);
    g->z = mlp_alloc_floats((long long)rows * MLP_HID);
}

static void mlp_gemm_fini(mlp_gemm_t *g)
{
    if (!g->h)
        return;
    MLP_BK(mlp_blas.destroy(g->h));
    MLP_CK(cuMemFree(g->eye_hid));
    MLP_CK(cuMemFree(g->eye_out));
    MLP_CK(cuMemFree(g->z));
}

/* out[rows x out_dim] = act(in[rows x in_dim] W^T + b): z = in W^T (cuBLAS), then the forward
 * kernel on (z, identity) adds the bias and applies the activation. */
static void mlp_gemm_forward(mlp_gemm_t *g, const mlp_kernels_t *k, CUdeviceptr out, CUdeviceptr W,
                             CUdeviceptr b, CUdeviceptr in, int rows, int in_dim, int out_dim, int act)
{
    const float one = 1.0f, zero = 0.0f;
    MLP_BK(mlp_blas.sgemm(g->h, CUBLAS_OP_T, CUBLAS_OP_N, out_dim, rows, in_dim, &one, MLP_DF(W), in_dim,
                          MLP_DF(in), in_dim, &zero, MLP_DF(g->z), out_dim));
    CUdeviceptr eye = out_dim == MLP_HID ? g->eye_hid : g->eye_out;
    void *a[] = {&out, &eye, &b, &g->z, &rows, &out_dim, &out_dim, &act};
    mlp_launch(k->forward, (long long)rows * out_dim, a);
}

/* dW[out_dim x in_dim] += dout^T in (cuBLAS, beta 1); db[o] += sum_r dout[r,o] (the weight-
 * gradient kernel with in_dim 0 computes only the bias part). */
static void mlp_gemm_backward_weight(mlp_gemm_t *g, const mlp_kernels_t *k, CUdeviceptr dW, CUdeviceptr db,
                                     CUdeviceptr dout, CUdeviceptr in, int rows, int in_dim, int out_dim)
{
    const float one = 1.0f;
    MLP_BK(mlp_blas.sgemm(g->h, CUBLAS_OP_N, CUBLAS_OP_T, in_dim, out_dim, rows, &one, MLP_DF(in), in_dim,
                          MLP_DF(dout), out_dim, &one, MLP_DF(dW), in_dim));
    int no_weights = 0;
    void *a[] = {&dW, &db, &dout, &in, &rows, &no_weights, &out_dim};
    mlp_launch(k->bwd_weight, out_dim, a);
}

/* din[rows x in_dim] = (dout W) * act'(in): z = dout W (cuBLAS), then the input-gradient kernel
 * on (z, identity) applies the activation's derivative. */
static void mlp_gemm_backward_input(mlp_gemm_t *g, const mlp_kernels_t *k, CUdeviceptr din, CUdeviceptr dout,
                                    CUdeviceptr W, CUdeviceptr in, int rows, int in_dim, int out_dim, int act)
{
    const float one = 1.0f, zero = 0.0f;
    MLP_BK(mlp_blas.sgemm(g->h, CUBLAS_OP_N, CUBLAS_OP_N, in_dim, rows, out_dim, &one, MLP_DF(W), in_dim,
                          MLP_DF(dout), out_dim, &zero, MLP_DF(g->z), in_dim));
    CUdeviceptr eye = in_dim == MLP_HID ? g->eye_hid : g->eye_out;
    void *a[] = {&din, &g->z, &eye, &in, &rows, &in_dim, &in_dim, &act};
    mlp_launch(k->bwd_input, (long long)rows * in_dim, a);
}

int main(int argc, char **argv)
{
    mlp_opts_t o;
    mlp_parse_opts(argc, argv, &o);
    const int B = (int)o.c.batch;
    /* the driver and the device first, before any output: a preloaded layer's start-up errors
     * (a bad policy) come first, as they did while the cuBLAS link's load-time calls made them */
    CUdevice dev;
    MLP_CK(cuInit(0));
    if (o.recover_segv_at >= 0 && mlp_guard_install() != 0) {
        fprintf(stderr, "mlp: --recover-segv-at-step: cannot set up the page: %s\n", strerror(errno));
        return 1;
    }
    MLP_CK(cuDeviceGet(&dev, 0));

    uint64_t init_seed = o.c.init_seed_set ? o.c.init_seed : o.c.seed;
    if (o.c.init_per_process && !o.c.init_seed_set)
        init_seed = mlp_per_process_seed();
    fprintf(stderr, "mlp: in=%d hidden=%d out=%d params=%d batch=%d shard=%lld/%lld optimizer=%s "
                    "update=%s lr=%.9g clip=%.9g seed=%llu init_seed=%llu steps=%lld\n",
            MLP_IN, MLP_HID, MLP_OUT, MLP_NPARAMS, B, o.c.shard_rank, o.c.shard_count,
            o.c.adam ? "adam" : "sgd", o.c.per_tensor ? "per-tensor" : "fused", (double)o.c.lr,
            (double)o.c.clip, (unsigned long long)o.c.seed, (unsigned long long)init_seed, o.c.steps);

    FILE *dump = NULL;
    if (o.c.dump_samples && !(dump = fopen(o.c.dump_samples, "w"))) {
        fprintf(stderr, "mlp: cannot open %s: %s\n", o.c.dump_samples, strerror(errno));
        return 1;
    }

    /* host-side initial parameters: uniform(-1,1)/sqrt(fan_in) (sqrt is exactly rounded) */
    static float params[MLP_NPARAMS];
    mlp_init_params(params, init_seed);
    mlp_teacher_t teacher;
    mlp_teacher_init(&teacher, o.c.seed);

    /* context, stream, module */
    CUcontext ctx;
    CUmodule mod;
    mlp_kernels_t k;
    MLP_CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    MLP_CK(cuCtxSetCurrent(ctx));
    MLP_CK(cuStreamCreate(&mlp_stream, CU_STREAM_DEFAULT));
    if (o.ptx_file)
        MLP_CK(cuModuleLoad(&mod, o.ptx_file));
    else
        MLP_CK(cuModuleLoadData(&mod, mlp_kernels_ptx));
    MLP_CK(cuModuleGetFunction(&k.forward, mod, "_Z14linear_forwardPfPKfS1_S1_iiii"));
    MLP_CK(cuModuleGetFunction(&k.mse_loss, mod, "mse_loss"));
    MLP_CK(cuModuleGetFunction(&k.mse_grad, mod, "mse_grad"));
    MLP_CK(cuModuleGetFunction(&k.bwd_weight, mod, "linear_backward_weight"));
    MLP_CK(cuModuleGetFunction(&k.bwd_input, mod, "linear_backward_input"));
    MLP_CK(cuModuleGetFunction(&k.norm_sq, mod, "grad_norm_squared"));
    MLP_CK(cuModuleGetFunction(&k.clip_scale, mod, "clip_scale"));
    MLP_CK(cuModuleGetFunction(&k.sgd, mod, "sgd_update"));
    MLP_CK(cuModuleGetFunction(&k.adam, mod, "adam_update"));

    /* device buffers: parameters and gradients each in ONE allocation, tensors in order */
    CUdeviceptr d_params = mlp_alloc_floats(MLP_NPARAMS), d_grads = mlp_alloc_floats(MLP_NPARAMS);
    CUdeviceptr d_m = 0, d_v = 0;
    CUdeviceptr d_x = mlp_alloc_floats((long long)B * MLP_IN);
    CUdeviceptr d_y = mlp_alloc_floats((long long)B * MLP_OUT);
    CUdeviceptr d_h = mlp_alloc_floats((long long)B * MLP_HID);
    CUdeviceptr d_dh = mlp_alloc_floats((long long)B * MLP_HID);
    CUdeviceptr d_yhat = mlp_alloc_floats((long long)B * MLP_OUT);
    CUdeviceptr d_dy = mlp_alloc_floats((long long)B * MLP_OUT);
    CUdeviceptr d_loss = mlp_alloc_floats(1), d_normsq = mlp_alloc_floats(1);
    CUdeviceptr d_scale = mlp_alloc_floats(1);
    MLP_CK(cuMemcpyHtoD(d_params, params, sizeof params));
    if (o.c.adam) {
        d_m = mlp_alloc_floats(MLP_NPARAMS);
        d_v = mlp_alloc_floats(MLP_NPARAMS);
        MLP_CK(cuMemsetD32Async(d_m, 0, MLP_NPARAMS, mlp_stream));
        MLP_CK(cuMemsetD32Async(d_v, 0, MLP_NPARAMS, mlp_stream));
    }
    MLP_CK(cuMemsetD32Async(d_scale, 0x3f800000u /* 1.0f */, 1, mlp_stream));
    mlp_gemm_t gm = {0};
    if (o.gemm_cublas)
        mlp_gemm_init(&gm, B);

    float *hx = malloc(sizeof(float) * (size_t)B * MLP_IN);
    float *hy = malloc(sizeof(float) * (size_t)B * MLP_OUT);
    if (!hx || !hy) {
        fprintf(stderr, "mlp: out of host memory\n");
        return 1;
    }

    int rows = B, act_tanh = MLP_ACT_TANH, act_none = MLP_ACT_NONE;
    int n_in = MLP_IN, n_hid = MLP_HID, n_out = MLP_OUT, n_params = MLP_NPARAMS;
    if (o.bad_count_rank == o.c.shard_rank)
        n_params -= 64; /* --bad-count-rank: the norm kernel too (smaller: memory-safe) */
    int n_yhat = B * MLP_OUT;
    float dy_scale = 2.0f / (float)((long long)B * MLP_OUT * o.accum);
    float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    CUdeviceptr W1 = d_params + (CUdeviceptr)mlp_tensors[0].offset * sizeof(float);
    CUdeviceptr bias1 = d_params + (CUdeviceptr)mlp_tensors[1].offset * sizeof(float);
    CUdeviceptr W2 = d_params + (CUdeviceptr)mlp_tensors[2].offset * sizeof(float);
    CUdeviceptr bias2 = d_params + (CUdeviceptr)mlp_tensors[3].offset * sizeof(float);
    CUdeviceptr dW1 = d_grads + (CUdeviceptr)mlp_tensors[0].offset * sizeof(float);
    CUdeviceptr db1 = d_grads + (CUdeviceptr)mlp_tensors[1].offset * sizeof(float);
    CUdeviceptr dW2 = d_grads + (CUdeviceptr)mlp_tensors[2].offset * sizeof(float);
    CUdeviceptr db2 = d_grads + (CUdeviceptr)mlp_tensors[3].offset * sizeof(float);

    /* --eval-batches: held-out samples (indices from 2^40 on, disjoint from the training stream),
     * forward pass and loss only: the parameters are read, never written */
    for (long long e = 0; e < o.eval_batches; e++) {
        uint64_t first = ((uint64_t)1 << 40) + (uint64_t)e * (uint64_t)o.c.shard_count * (uint64_t)B +
                         (uint64_t)o.c.shard_rank * (uint64_t)B;
        for (int r = 0; r < B; r++)
            mlp_sample(&teacher, o.c.seed, first + (uint64_t)r, hx + r * MLP_IN, hy + r * MLP_OUT);
        MLP_CK(cuMemcpyHtoDAsync(d_x, hx, sizeof(float) * (size_t)B * MLP_IN, mlp_stream));
        MLP_CK(cuMemcpyHtoDAsync(d_y, hy, sizeof(float) * (size_t)B * MLP_OUT, mlp_stream));
        if (o.gemm_cublas) {
            mlp_gemm_forward(&gm, &k, d_h, W1, bias1, d_x, B, MLP_IN, MLP_HID, MLP_ACT_TANH);
            mlp_gemm_forward(&gm, &k, d_yhat, W2, bias2, d_h, B, MLP_HID, MLP_OUT, MLP_ACT_NONE);
        } else {
            void *f1[] = {&d_h, &W1, &bias1, &d_x, &rows, &n_in, &n_hid, &act_tanh};
            mlp_launch(k.forward, (long long)B * MLP_HID, f1);
            void *f2[] = {&d_yhat, &W2, &bias2, &d_h, &rows, &n_hid, &n_out, &act_none};
            mlp_launch(k.forward, (long long)B * MLP_OUT, f2);
        }
        void *l[] = {&d_loss, &d_yhat, &d_y, &rows, &n_out};
        mlp_launch_serial(k.mse_loss, l);
        float loss;
        MLP_CK(cuMemcpyDtoHAsync(&loss, d_loss, sizeof loss, mlp_stream));
        MLP_CK(cuStreamSynchronize(mlp_stream));
        printf("eval %lld loss %.9g\n", e, (double)loss);
    }

    for (long long step = 0; step < o.c.steps; step++) {
        double micro_loss = 0.0; /* --accum-steps K > 1: the sum of the micro-batches' losses */
        for (long long mb = 0; mb < o.accum; mb++) {
        /* this rank's slice of the global batch (micro-batch mb of it), one sample index each */
        uint64_t first = (uint64_t)(step * o.accum + mb) * (uint64_t)o.c.shard_count * (uint64_t)B +
                         (uint64_t)o.c.shard_rank * (uint64_t)B;
        for (int r = 0; r < B; r++) {
            mlp_sample(&teacher, o.c.seed, first + (uint64_t)r, hx + r * MLP_IN, hy + r * MLP_OUT);
            if (dump)
                fprintf(dump, "%llu\n", (unsigned long long)(first + (uint64_t)r));
        }
        MLP_CK(cuMemcpyHtoDAsync(d_x, hx, sizeof(float) * (size_t)B * MLP_IN, mlp_stream));
        MLP_CK(cuMemcpyHtoDAsync(d_y, hy, sizeof(float) * (size_t)B * MLP_OUT, mlp_stream));
        if (mb == 0)
            MLP_CK(cuMemsetD32Async(d_grads, 0, MLP_NPARAMS, mlp_stream));

        /* forward: h = tanh(x W1^T + b1); yhat = h W2^T + b2 */
        if (o.gemm_cublas) {
            mlp_gemm_forward(&gm, &k, d_h, W1, bias1, d_x, B, MLP_IN, MLP_HID, MLP_ACT_TANH);
            mlp_gemm_forward(&gm, &k, d_yhat, W2, bias2, d_h, B, MLP_HID, MLP_OUT, MLP_ACT_NONE);
        } else {
            void *f1[] = {&d_h, &W1, &bias1, &d_x, &rows, &n_in, &n_hid, &act_tanh};
            mlp_launch(k.forward, (long long)B * MLP_HID, f1);
            void *f2[] = {&d_yhat, &W2, &bias2, &d_h, &rows, &n_hid, &n_out, &act_none};
            mlp_launch(k.forward, (long long)B * MLP_OUT, f2);
        }
        void *l[] = {&d_loss, &d_yhat, &d_y, &rows, &n_out};
        mlp_launch_serial(k.mse_loss, l);
        if (o.accum > 1) { /* each micro-batch reads its loss */
            float ml;
            MLP_CK(cuMemcpyDtoHAsync(&ml, d_loss, sizeof ml, mlp_stream));
            MLP_CK(cuStreamSynchronize(mlp_stream));
            micro_loss += ml;
        }

        /* backward: mean gradients over the local batch (over all micro-batches: added up) */
        void *g[] = {&d_dy, &d_yhat, &d_y, &n_yhat, &dy_scale};
        mlp_launch(k.mse_grad, n_yhat, g);
        if (o.gemm_cublas) {
            mlp_gemm_backward_weight(&gm, &k, dW2, db2, d_dy, d_h, B, MLP_HID, MLP_OUT);
            mlp_gemm_backward_input(&gm, &k, d_dh, d_dy, W2, d_h, B, MLP_HID, MLP_OUT, MLP_ACT_TANH);
            mlp_gemm_backward_weight(&gm, &k, dW1, db1, d_dh, d_x, B, MLP_IN, MLP_HID);
        } else {
            void *w2g[] = {&dW2, &db2, &d_dy, &d_h, &rows, &n_hid, &n_out};
            mlp_launch(k.bwd_weight, MLP_OUT * MLP_HID + MLP_OUT, w2g);
            void *hg[] = {&d_dh, &d_dy, &W2, &d_h, &rows, &n_hid, &n_out, &act_tanh};
            mlp_launch(k.bwd_input, (long long)B * MLP_HID, hg);
            void *w1g[] = {&dW1, &db1, &d_dh, &d_x, &rows, &n_in, &n_hid};
            mlp_launch(k.bwd_weight, MLP_HID * MLP_IN + MLP_HID, w1g);
        }
        } /* micro-batches */
        if (o.nan_rank == o.c.shard_rank && step == o.nan_at_step) {
            fprintf(stderr, "mlp: --nan-rank: rank %lld sets gradient 0 to NaN at step %lld\n",
                    o.c.shard_rank, step);
            MLP_CK(cuMemsetD32Async(d_grads, 0x7fc00000u /* quiet NaN */, 1, mlp_stream));
        }

        /* optional global-norm clipping: the norm kernel reads ALL gradients */
        if (o.c.clip > 0.0f) {
            void *ns[] = {&d_normsq, &d_grads, &n_params};
            mlp_launch_serial(k.norm_sq, ns);
            void *cs[] = {&d_scale, &d_normsq, &o.c.clip};
            mlp_launch_serial(k.clip_scale, cs);
        }

        /* fault injection, right before the update (the sync point) */
        if (o.stall_rank == o.c.shard_rank && step == o.stall_at_step) {
            fprintf(stderr, "mlp: --stall-rank: rank %lld stalls before step %lld's update\n",
                    o.c.shard_rank, step);
            for (;;)
                pause();
        }
        if (o.segv_rank == o.c.shard_rank && step == o.segv_at_step)
            mlp_deliberate_crash(step);
        if (o.recover_segv_at == step && mlp_guard_touch(step) != 0) {
            fprintf(stderr, "mlp: --recover-segv-at-step: the page does not hold what was written\n");
            return 1;
        }

        /* update: one launch over the whole buffer, or one per tensor (per slice of a tensor
         * with --update-chunks K: slice c is [c*count/K, (c+1)*count/K), possibly empty) */
        int t_adam = (int)(step + 1);
        long long n_chunks = o.c.per_tensor ? o.update_chunks : 1;
        for (long long tc = 0; tc < (o.c.per_tensor ? MLP_NTENSORS : 1) * n_chunks; tc++) {
            int t = (int)(tc / n_chunks);
            long long c = tc % n_chunks;
            if (t == 1 && o.skip_tensor_every > 0 && (step + 1) % o.skip_tensor_every == 0)
                continue; /* --skip-tensor-every: b1 keeps its value this step */
            long long t_count = o.c.per_tensor ? mlp_tensors[t].count : MLP_NPARAMS;
            long long lo = c * t_count / n_chunks, hi = (c + 1) * t_count / n_chunks;
            size_t off = ((o.c.per_tensor ? (size_t)mlp_tensors[t].offset : 0) + (size_t)lo) * sizeof(float);
            int n = (int)(hi - lo);
            if (o.bad_count_rank == o.c.shard_rank && n > 64)
                n -= 64; /* a smaller count: wrong, but memory-safe */
            CUdeviceptr p = d_params + off, gr = d_grads + off;
            if (o.c.adam) {
                CUdeviceptr m = d_m + off, v = d_v + off;
                void *a[] = {&p, &gr, &m, &v, &n, &o.c.lr, &b1, &b2, &eps, &t_adam, &d_scale};
                mlp_launch(k.adam, n, a);
            } else {
                void *a[] = {&p, &gr, &n, &o.c.lr, &d_scale};
                mlp_launch(k.sgd, n, a);
            }
        }

        float loss;
        if (o.accum > 1) {
            loss = (float)(micro_loss / (double)o.accum);
        } else {
            MLP_CK(cuMemcpyDtoHAsync(&loss, d_loss, sizeof loss, mlp_stream));
            MLP_CK(cuStreamSynchronize(mlp_stream));
        }
        printf("step %lld loss %.9g\n", step, (double)loss);
        if (step == o.rss_at) {
            char label[48];
            snprintf(label, sizeof label, "step %lld", step);
            mlp_print_rss(label);
        }
        if (o.checkpoint && o.ckpt_every > 0 && (step + 1) % o.ckpt_every == 0 &&
            mlp_write_checkpoint(o.checkpoint, d_params) != 0)
            return 1;
    }

    MLP_CK(cuStreamSynchronize(mlp_stream));
    if (o.rss_at >= 0)
        mlp_print_rss("end");
    MLP_CK(cuMemcpyDtoH(params, d_params, sizeof params));

    static unsigned char bytes[sizeof params];
    double sum;
    uint64_t hash;
    mlp_serialise(params, bytes, &sum, &hash);

    int rc = 0;
    if (o.c.save) {
        FILE *f = fopen(o.c.save, "wb");
        if (!f || fwrite(bytes, 1, sizeof bytes, f) != sizeof bytes || fclose(f) != 0) {
            fprintf(stderr, "mlp: cannot write %s: %s\n", o.c.save, strerror(errno));
            rc = 1;
        }
    }
    if (o.checkpoint && mlp_write_checkpoint(o.checkpoint, d_params) != 0)
        rc = 1;
    if (dump && fclose(dump) != 0) {
        fprintf(stderr, "mlp: cannot write %s: %s\n", o.c.dump_samples, strerror(errno));
        rc = 1;
    }
    printf("checksum %.17g %016llx\n", sum, (unsigned long long)hash);

    free(hx);
    free(hy);
    CUdeviceptr bufs[] = {d_params, d_grads, d_m, d_v, d_x, d_y, d_h, d_dh, d_yhat, d_dy,
                          d_loss, d_normsq, d_scale};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            MLP_CK(cuMemFree(bufs[i]));
    mlp_gemm_fini(&gm);
    MLP_CK(cuModuleUnload(mod));
    MLP_CK(cuStreamDestroy(mlp_stream));
    MLP_CK(cuDevicePrimaryCtxRelease(dev));
    return rc;
}
