/* layers.c — a synthetic multi-layer trainer (CUDA Driver API only) for accelshim's overlap of
 * gradient communication with the backward pass. L layers of N parameters each live in ONE
 * parameter allocation and their gradients in ONE gradient allocation (layer l at offset l*N).
 * A step: zero the gradients; optionally a cheap forward (layer_forward per layer); then A
 * backward passes (--accum), each from the last layer to the first (layer_backward per layer:
 * the last pass's launch is the last writer of that layer's gradients); then ONE sgd_apply over
 * the whole buffer (the sync point); then a stream sync. The gradient is the MEAN over the step's
 * samples, sample indices are global (rank R of W takes its slice), so W ranks with batch B end
 * where 1 rank with batch W*B ends (up to summation order). Kernels: layers_kernels.cu (PTX
 * embedded by layers_ptx.S). Single-threaded, one stream; host code touches device memory only
 * through cuMemcpy and cuMemset calls. Run `layers --help` for options and output.
 */
#include <cuda.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char layers_kernels_ptx[]; /* layers_ptx.S: build/tests/trainers/layers_kernels.ptx + NUL */

typedef struct layers_opts {
    long long layers, size, steps, batch, work, accum, shard_rank, shard_count, device_us;
    float lr;
    uint64_t seed;
    int forward;
    long long vary_every;  /* --vary-every K: steps K-1, 2K-1, ... change their launch pattern */
    int vary;              /* --vary: 0 skip (layer 0's backward left out), 1 swap (layers 1 and 2
                            * in the other order), 2 extra (one more backward of the last layer) */
    const char *dump;
} layers_opts_t;

static const char layers_usage[] =
    "usage: layers [options]\n"
    "A synthetic L-layer model, CUDA Driver API only: all parameters in one allocation, all\n"
    "gradients in another (layer l at offset l*N); each step backward runs from the last layer to\n"
    "the first (layer_backward, one launch per layer and pass), then one sgd_apply over the whole\n"
    "buffer.\n"
    "  --layers L             layers (default 6)\n"
    "  --size N               parameters per layer (default 65536)\n"
    "  --steps S              training steps (default 10; 0 allowed)\n"
    "  --batch B              samples per backward pass for this process (default 4)\n"
    "  --work W               extra rounds per element in layer_backward: time only, the result\n"
    "                         does not depend on W (default 0)\n"
    "  --device-us U          before each layer_backward, a layer_busy launch that keeps the\n"
    "                         stream busy U microseconds without host work (a GPU kernel's time;\n"
    "                         on hostcuda a sleep on the stream's worker; default 0: none)\n"
    "  --vary-every K         every K-th step (steps K-1, 2K-1, ...) launches its backward\n"
    "                         differently (--vary), the same on every rank (default 0: never)\n"
    "  --vary skip|swap|extra skip: layer 0's backward is left out; swap: layers 1 and 2 run in\n"
    "                         the other order (same result); extra: the last layer's backward runs\n"
    "                         once more at the end of the pass (its gradient doubles) (default skip)\n"
    "  --accum A              backward passes per step (gradient accumulation; default 1); pass a\n"
    "                         of step t reads global samples [(t*A + a)*C*B, (t*A + a + 1)*C*B),\n"
    "                         rank R the slice [.. + R*B, .. + (R+1)*B) (C = --shard-count)\n"
    "  --forward on|off       a cheap forward launch per layer before backward (default on)\n"
    "  --lr LR                learning rate (default 0.05)\n"
    "  --seed S               data and initial-weight seed (default 1)\n"
    "  --shard-rank R         this process's rank among --shard-count (default 0)\n"
    "  --shard-count C        (default 1)\n"
    "  --dump FILE            write the final parameters: raw little-endian float32, layer 0 first\n"
    "                         (--save FILE: the same)\n"
    "  --help                 this text\n"
    "Output (stdout): per step `step S time_ms T` (host wall time of the step, including the\n"
    "stream sync at its end), then `mean_step_ms X` (mean over the steps after the first two; all\n"
    "steps when there are at most two; nan for none) and `checksum SUM HASH` (SUM: the final\n"
    "parameters summed in double, %.17g; HASH: FNV-1a 64 of the --dump bytes). Exit: 0 ok, 1 CUDA\n"
    "or I/O error, 2 bad options.\n";

static void layers_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "layers: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'layers --help'.\n");
    exit(2);
}

static long long layers_parse_int(const char *opt, const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "layers: %s: invalid value '%s' (an integer in [%lld, %lld])\n"
                        "Try 'layers --help'.\n", opt, s, lo, hi);
        exit(2);
    }
    return v;
}

static void layers_parse_opts(int argc, char **argv, layers_opts_t *o)
{
    enum { O_LAYERS = 0x100, O_SIZE, O_STEPS, O_BATCH, O_WORK, O_ACCUM, O_FORWARD, O_LR, O_SEED,
           O_RANK, O_COUNT, O_DUMP, O_HELP, O_DEVICE_US, O_VARY_EVERY, O_VARY };
    static const struct option longopts[] = {
        {"layers", required_argument, NULL, O_LAYERS},
        {"size", required_argument, NULL, O_SIZE},
        {"steps", required_argument, NULL, O_STEPS},
        {"batch", required_argument, NULL, O_BATCH},
        {"work", required_argument, NULL, O_WORK},
        {"device-us", required_argument, NULL, O_DEVICE_US},
        {"vary-every", required_argument, NULL, O_VARY_EVERY},
        {"vary", required_argument, NULL, O_VARY},
        {"accum", required_argument, NULL, O_ACCUM},
        {"forward", required_argument, NULL, O_FORWARD},
        {"lr", required_argument, NULL, O_LR},
        {"seed", required_argument, NULL, O_SEED},
        {"shard-rank", required_argument, NULL, O_RANK},
        {"shard-count", required_argument, NULL, O_COUNT},
        {"dump", required_argument, NULL, O_DUMP},
        {"save", required_argument, NULL, O_DUMP},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    *o = (layers_opts_t){.layers = 6, .size = 65536, .steps = 10, .batch = 4, .accum = 1,
                         .shard_count = 1, .lr = 0.05f, .seed = 1, .forward = 1};
    opterr = 0;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (c) {
        case O_LAYERS: o->layers = layers_parse_int("--layers", optarg, 1, 4096); break;
        case O_SIZE: o->size = layers_parse_int("--size", optarg, 1, 1ll << 28); break;
        case O_STEPS: o->steps = layers_parse_int("--steps", optarg, 0, 1000000000); break;
        case O_BATCH: o->batch = layers_parse_int("--batch", optarg, 1, 1 << 20); break;
        case O_WORK: o->work = layers_parse_int("--work", optarg, 0, 1 << 30); break;
        case O_DEVICE_US: o->device_us = layers_parse_int("--device-us", optarg, 0, 10000000); break;
        case O_VARY_EVERY: o->vary_every = layers_parse_int("--vary-every", optarg, 0, 1 << 30); break;
        case O_VARY:
            if (!strcmp(optarg, "skip")) o->vary = 0;
            else if (!strcmp(optarg, "swap")) o->vary = 1;
            else if (!strcmp(optarg, "extra")) o->vary = 2;
            else layers_usage_error("--vary: invalid value '%s' (skip, swap or extra)", optarg);
            break;
        case O_ACCUM: o->accum = layers_parse_int("--accum", optarg, 1, 1 << 16); break;
        case O_SEED: o->seed = (uint64_t)layers_parse_int("--seed", optarg, 0, INT64_MAX); break;
        case O_RANK: o->shard_rank = layers_parse_int("--shard-rank", optarg, 0, 1 << 20); break;
        case O_COUNT: o->shard_count = layers_parse_int("--shard-count", optarg, 1, 1 << 20); break;
        case O_DUMP: o->dump = optarg; break;
        case O_FORWARD:
            if (!strcmp(optarg, "on")) o->forward = 1;
            else if (!strcmp(optarg, "off")) o->forward = 0;
            else layers_usage_error("--forward: invalid value '%s' (on or off)", optarg);
            break;
        case O_LR:
            errno = 0;
            o->lr = strtof(optarg, &end);
            if (errno || end == optarg || *end || !isfinite(o->lr) || !(o->lr > 0.0f))
                layers_usage_error("--lr: invalid value '%s' (a finite number > 0)", optarg);
            break;
        case O_HELP: fputs(layers_usage, stdout); exit(0);
        case ':': layers_usage_error("option '%s' needs a value", argv[optind - 1]); break;
        default: layers_usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        layers_usage_error("unexpected argument '%s'", argv[optind]);
    if (o->shard_rank >= o->shard_count) {
        fprintf(stderr, "layers: --shard-rank %lld must be below --shard-count %lld\n"
                        "Try 'layers --help'.\n", o->shard_rank, o->shard_count);
        exit(2);
    }
    if (o->layers * o->size > (1ll << 30))
        layers_usage_error("--layers x --size: more than 2^30 parameters%s", "");
}

static void layers_cu_fail(const char *call, CUresult r, int line)
{
    const char *name = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = "unknown error";
    fprintf(stderr, "layers: %s failed: %s (%d) at layers.c:%d\n", call, name, (int)r, line);
    exit(1);
}
#define LAYERS_CK(call)                                                                        \
    do {                                                                                       \
        CUresult layers_r_ = (call);                                                           \
        if (layers_r_ != CUDA_SUCCESS)                                                         \
            layers_cu_fail(#call, layers_r_, __LINE__);                                        \
    } while (0)

static CUstream layers_stream;

/* grid-stride launch over `work` items: 128 threads per block, at most 1024 blocks */
static void layers_launch(CUfunction f, long long work, void **args)
{
    long long blocks = (work + 127) / 128;
    if (blocks < 1) blocks = 1;
    if (blocks > 1024) blocks = 1024;
    LAYERS_CK(cuLaunchKernel(f, (unsigned)blocks, 1, 1, 128, 1, 1, 0, layers_stream, args, NULL));
}

static uint64_t layers_mix64(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double layers_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    layers_opts_t o;
    layers_parse_opts(argc, argv, &o);
    const long long L = o.layers, N = o.size, total = L * N;

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction k_fwd, k_bwd, k_sgd;
    LAYERS_CK(cuInit(0));
    LAYERS_CK(cuDeviceGet(&dev, 0));
    fprintf(stderr, "layers: layers=%lld size=%lld params=%lld batch=%lld accum=%lld work=%lld "
                    "forward=%s shard=%lld/%lld lr=%.9g seed=%llu steps=%lld\n",
            L, N, total, o.batch, o.accum, o.work, o.forward ? "on" : "off", o.shard_rank,
            o.shard_count, (double)o.lr, (unsigned long long)o.seed, o.steps);
    LAYERS_CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    LAYERS_CK(cuCtxSetCurrent(ctx));
    LAYERS_CK(cuStreamCreate(&layers_stream, CU_STREAM_DEFAULT));
    LAYERS_CK(cuModuleLoadData(&mod, layers_kernels_ptx));
    LAYERS_CK(cuModuleGetFunction(&k_fwd, mod, "layer_forward"));
    LAYERS_CK(cuModuleGetFunction(&k_bwd, mod, "layer_backward"));
    LAYERS_CK(cuModuleGetFunction(&k_sgd, mod, "sgd_apply"));
    CUfunction k_busy;
    LAYERS_CK(cuModuleGetFunction(&k_busy, mod, "layer_busy"));

    /* initial parameters on the host: uniform(-1, 1) * 0.5, the same on every rank */
    float *host = malloc(sizeof(float) * (size_t)total);
    if (!host) {
        fprintf(stderr, "layers: out of host memory\n");
        return 1;
    }
    for (long long i = 0; i < total; i++)
        host[i] = 0.5f * ((float)(layers_mix64(layers_mix64(o.seed ^ 0x1417ull) ^ (uint64_t)i) >> 40) *
                          0x1p-23f - 1.0f);

    CUdeviceptr d_params, d_grads, d_act;
    size_t bytes = sizeof(float) * (size_t)total;
    LAYERS_CK(cuMemAlloc(&d_params, bytes));
    LAYERS_CK(cuMemAlloc(&d_grads, bytes));
    LAYERS_CK(cuMemAlloc(&d_act, sizeof(float) * (size_t)N));
    LAYERS_CK(cuMemcpyHtoD(d_params, host, bytes));

    /* the mean over the step's samples: this rank's A*B of them; the all-reduce's mean over the
     * ranks makes it the mean over all C*A*B */
    float scale = 1.0f / (float)(o.batch * o.accum);
    int batch = (int)o.batch, work = (int)o.work;
    long long n = N, n_all = total;
    double sum_ms = 0.0;
    long long n_ms = 0;
    for (long long step = 0; step < o.steps; step++) {
        double t0 = layers_now_ms();
        LAYERS_CK(cuMemsetD32Async(d_grads, 0, (size_t)total, layers_stream));
        if (o.forward)
            for (long long l = 0; l < L; l++) {
                CUdeviceptr p = d_params + (CUdeviceptr)(l * N) * sizeof(float);
                void *a[] = {&d_act, &p, &n};
                layers_launch(k_fwd, N, a);
            }
        for (long long pass = 0; pass < o.accum; pass++) {
            long long first = ((step * o.accum + pass) * o.shard_count + o.shard_rank) * o.batch;
            int vary = o.vary_every > 0 && (step + 1) % o.vary_every == 0 ? o.vary : -1;
            for (long long i = 0; i < L + (vary == 2); i++) {
                long long l = i < L ? L - 1 - i : L - 1; /* vary extra: the last layer again */
                if (vary == 0 && l == 0)
                    continue;
                if (vary == 1 && L >= 3 && (l == 1 || l == 2))
                    l = 3 - l;
                CUdeviceptr g = d_grads + (CUdeviceptr)(l * N) * sizeof(float);
                CUdeviceptr p = d_params + (CUdeviceptr)(l * N) * sizeof(float);
                unsigned long long seed = layers_mix64(o.seed * 0x9e3779b97f4a7c15ull + (uint64_t)l + 1);
                if (o.device_us > 0) {
                    void *b[] = {&o.device_us};
                    LAYERS_CK(cuLaunchKernel(k_busy, 1, 1, 1, 1, 1, 1, 0, layers_stream, b, NULL));
                }
                void *a[] = {&g, &n, &p, &seed, &work, &first, &batch, &scale};
                layers_launch(k_bwd, N, a);
            }
        }
        void *u[] = {&d_params, &d_grads, &n_all, &o.lr};
        layers_launch(k_sgd, total, u);
        LAYERS_CK(cuStreamSynchronize(layers_stream));
        double ms = layers_now_ms() - t0;
        printf("step %lld time_ms %.3f\n", step, ms);
        fflush(stdout);
        if (step >= 2 || o.steps <= 2) {
            sum_ms += ms;
            n_ms++;
        }
    }
    if (n_ms)
        printf("mean_step_ms %.3f\n", sum_ms / (double)n_ms);
    else
        printf("mean_step_ms nan\n");

    LAYERS_CK(cuMemcpyDtoH(host, d_params, bytes));
    unsigned char *le = malloc(bytes);
    if (!le) {
        fprintf(stderr, "layers: out of host memory\n");
        return 1;
    }
    double sum = 0.0;
    uint64_t hash = 0xcbf29ce484222325ull;
    for (long long i = 0; i < total; i++) {
        uint32_t u32;
        memcpy(&u32, &host[i], 4);
        unsigned char *b = le + 4 * i;
        b[0] = (unsigned char)u32; b[1] = (unsigned char)(u32 >> 8);
        b[2] = (unsigned char)(u32 >> 16); b[3] = (unsigned char)(u32 >> 24);
        sum += (double)host[i];
        for (int k = 0; k < 4; k++)
            hash = (hash ^ b[k]) * 0x100000001b3ull;
    }
    int rc = 0;
    if (o.dump) {
        FILE *f = fopen(o.dump, "wb");
        if (!f || fwrite(le, 1, bytes, f) != bytes || fclose(f) != 0) {
            fprintf(stderr, "layers: cannot write %s: %s\n", o.dump, strerror(errno));
            rc = 1;
        }
    }
    printf("checksum %.17g %016llx\n", sum, (unsigned long long)hash);

    free(le);
    free(host);
    LAYERS_CK(cuMemFree(d_params));
    LAYERS_CK(cuMemFree(d_grads));
    LAYERS_CK(cuMemFree(d_act));
    LAYERS_CK(cuModuleUnload(mod));
    LAYERS_CK(cuStreamDestroy(layers_stream));
    LAYERS_CK(cuDevicePrimaryCtxRelease(dev));
    return rc;
}
