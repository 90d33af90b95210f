/* rt_mlp.cu — the second legacy-style test trainer: the same MLP as mlp.c, written the way most
 * single-GPU trainers are (CUDA runtime API, <<<...>>> launches, nvcc's default static cudart), so
 * the driver is reached ONLY the way cudart reaches it: dlopen("libcuda.so.1") + cuGetProcAddress.
 * Same model, data generator, init, kernels (mlp_kernels.cu, compiled into this binary), launch
 * order, options (those of mlp that apply: not --checkpoint or fault injection), stdout format
 * (`step t loss L`, `checksum SUM HASH`) and --save format as mlp; host side shared through
 * mlp_data.h. Single-threaded, one stream. Needs a real driver: cudart uses private driver tables
 * (cuGetExportTable) that hostcuda does not provide. Policy positions: as mlp (mlp.c's header).
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_data.h"    /* first: mlp_kernels.cu #defines MLP_ACT_* */
#include "mlp_kernels.cu" /* the kernels, as __global__ functions (ash_kernel.h under nvcc) */

typedef mlp_common_opts_t rt_opts_t; /* rt_mlp takes exactly the common options */

static const char rt_usage[] =
    "usage: rt_mlp [options]\n"
    "Trains a 16-32(tanh)-4 MLP (MSE) on a synthetic deterministic stream, CUDA runtime API\n"
    "(static cudart, <<<>>> launches); the same model, data, init and kernels as mlp.\n"
    MLP_COMMON_USAGE
    "  --help                 this text\n"
    "Output (stdout): `step t loss L` (%.9g) per step, then `checksum SUM HASH` (%.17g, FNV-1a 64\n"
    "of the --save bytes), as mlp. Exit: 0 ok, 1 CUDA or I/O error, 2 bad options.\n";

static void rt_parse_opts(int argc, char **argv, rt_opts_t *o)
{
    static const struct option longopts[] = {MLP_COMMON_LONGOPTS, {NULL, 0, NULL, 0}};
    mlp_common_defaults(o);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        if (c == MLP_O_HELP) {
            fputs(rt_usage, stdout);
            exit(0);
        }
        if (!mlp_common_option(c, optarg, o))
            mlp_bad_option(c, argv);
    }
    mlp_common_finish(argc, argv, o);
}

/* ---- CUDA runtime plumbing ---- */

static void rt_fail(const char *call, cudaError_t e, int line)
{
    fprintf(stderr, "rt_mlp: %s failed: %s (%d: %s) at rt_mlp.cu:%d\n", call, cudaGetErrorName(e),
            (int)e, cudaGetErrorString(e), line);
    exit(1);
}
#define RT_CK(call)                                                                            \
    do {                                                                                       \
        cudaError_t rt_e_ = (call);                                                            \
        if (rt_e_ != cudaSuccess)                                                              \
            rt_fail(#call, rt_e_, __LINE__);                                                   \
    } while (0)
/* after each <<<>>>: the launch's own error (configuration, missing image), not a sync */
#define RT_LAUNCHED() RT_CK(cudaGetLastError())

/* grid-stride launch shape over `work` items: 128 threads per block, at most 1024 blocks (mlp's) */
static unsigned rt_blocks(long long work)
{
    long long blocks = (work + 127) / 128;
    if (blocks < 1) blocks = 1;
    if (blocks > 1024) blocks = 1024;
    return (unsigned)blocks;
}

static float *rt_alloc_floats(long long n)
{
    void *p = NULL;
    RT_CK(cudaMalloc(&p, (size_t)n * sizeof(float)));
    return (float *)p;
}

int main(int argc, char **argv)
{
    mlp_prog = "rt_mlp";
    rt_opts_t o;
    rt_parse_opts(argc, argv, &o);
    const int B = (int)o.batch;

    uint64_t init_seed = o.init_seed_set ? o.init_seed : o.seed;
    if (o.init_per_process && !o.init_seed_set)
        init_seed = mlp_per_process_seed();
    fprintf(stderr, "rt_mlp: in=%d hidden=%d out=%d params=%d batch=%d shard=%lld/%lld optimizer=%s "
                    "update=%s lr=%.9g clip=%.9g seed=%llu init_seed=%llu steps=%lld\n",
            MLP_IN, MLP_HID, MLP_OUT, MLP_NPARAMS, B, o.shard_rank, o.shard_count,
            o.adam ? "adam" : "sgd", o.per_tensor ? "per-tensor" : "fused", (double)o.lr,
            (double)o.clip, (unsigned long long)o.seed, (unsigned long long)init_seed, o.steps);

    FILE *dump = NULL;
    if (o.dump_samples && !(dump = fopen(o.dump_samples, "w"))) {
        fprintf(stderr, "rt_mlp: cannot open %s: %s\n", o.dump_samples, strerror(errno));
        return 1;
    }

    static float params[MLP_NPARAMS];
    mlp_init_params(params, init_seed);
    mlp_teacher_t teacher;
    mlp_teacher_init(&teacher, o.seed);

    /* device 0 (the shim remaps it), one stream; cudart creates the primary context lazily */
    cudaStream_t stream;
    RT_CK(cudaSetDevice(0));
    RT_CK(cudaStreamCreate(&stream));

    /* device buffers: parameters and gradients each in ONE allocation, tensors in order */
    float *d_params = rt_alloc_floats(MLP_NPARAMS), *d_grads = rt_alloc_floats(MLP_NPARAMS);
    float *d_m = NULL, *d_v = NULL;
    float *d_x = rt_alloc_floats((long long)B * MLP_IN);
    float *d_y = rt_alloc_floats((long long)B * MLP_OUT);
    float *d_h = rt_alloc_floats((long long)B * MLP_HID);
    float *d_dh = rt_alloc_floats((long long)B * MLP_HID);
    float *d_yhat = rt_alloc_floats((long long)B * MLP_OUT);
    float *d_dy = rt_alloc_floats((long long)B * MLP_OUT);
    float *d_loss = rt_alloc_floats(1), *d_normsq = rt_alloc_floats(1);
    float *d_scale = rt_alloc_floats(1);
    RT_CK(cudaMemcpy(d_params, params, sizeof params, cudaMemcpyHostToDevice));
    if (o.adam) {
        d_m = rt_alloc_floats(MLP_NPARAMS);
        d_v = rt_alloc_floats(MLP_NPARAMS);
        RT_CK(cudaMemsetAsync(d_m, 0, sizeof(float) * MLP_NPARAMS, stream));
        RT_CK(cudaMemsetAsync(d_v, 0, sizeof(float) * MLP_NPARAMS, stream));
    }
    static const float one = 1.0f; /* mlp: cuMemsetD32Async(0x3f800000); the runtime has no D32 */
    RT_CK(cudaMemcpyAsync(d_scale, &one, sizeof one, cudaMemcpyHostToDevice, stream));

    float *hx = (float *)malloc(sizeof(float) * (size_t)B * MLP_IN);
    float *hy = (float *)malloc(sizeof(float) * (size_t)B * MLP_OUT);
    if (!hx || !hy) {
        fprintf(stderr, "rt_mlp: out of host memory\n");
        return 1;
    }

    const int rows = B, n_params = MLP_NPARAMS, n_yhat = B * MLP_OUT;
    const float dy_scale = 2.0f / (float)(B * MLP_OUT);
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    float *W1 = d_params + mlp_tensors[0].offset, *bias1 = d_params + mlp_tensors[1].offset;
    float *W2 = d_params + mlp_tensors[2].offset, *bias2 = d_params + mlp_tensors[3].offset;
    float *dW1 = d_grads + mlp_tensors[0].offset, *db1 = d_grads + mlp_tensors[1].offset;
    float *dW2 = d_grads + mlp_tensors[2].offset, *db2 = d_grads + mlp_tensors[3].offset;

    for (long long step = 0; step < o.steps; step++) {
        uint64_t first = (uint64_t)step * (uint64_t)o.shard_count * (uint64_t)B +
                         (uint64_t)o.shard_rank * (uint64_t)B;
        for (int r = 0; r < B; r++) {
            mlp_sample(&teacher, o.seed, first + (uint64_t)r, hx + r * MLP_IN, hy + r * MLP_OUT);
            if (dump)
                fprintf(dump, "%llu\n", (unsigned long long)(first + (uint64_t)r));
        }
        RT_CK(cudaMemcpyAsync(d_x, hx, sizeof(float) * (size_t)B * MLP_IN, cudaMemcpyHostToDevice, stream));
        RT_CK(cudaMemcpyAsync(d_y, hy, sizeof(float) * (size_t)B * MLP_OUT, cudaMemcpyHostToDevice, stream));
        RT_CK(cudaMemsetAsync(d_grads, 0, sizeof(float) * MLP_NPARAMS, stream));

        /* forward: h = tanh(x W1^T + b1); yhat = h W2^T + b2 */
        linear_forward<<<rt_blocks((long long)B * MLP_HID), 128, 0, stream>>>(
            d_h, W1, bias1, d_x, rows, MLP_IN, MLP_HID, MLP_ACT_TANH);
        RT_LAUNCHED();
        linear_forward<<<rt_blocks((long long)B * MLP_OUT), 128, 0, stream>>>(
            d_yhat, W2, bias2, d_h, rows, MLP_HID, MLP_OUT, MLP_ACT_NONE);
        RT_LAUNCHED();
        mse_loss<<<1, 1, 0, stream>>>(d_loss, d_yhat, d_y, rows, MLP_OUT);
        RT_LAUNCHED();

        /* backward: mean gradients over the local batch */
        mse_grad<<<rt_blocks(n_yhat), 128, 0, stream>>>(d_dy, d_yhat, d_y, n_yhat, dy_scale);
        RT_LAUNCHED();
        linear_backward_weight<<<rt_blocks(MLP_OUT * MLP_HID + MLP_OUT), 128, 0, stream>>>(
            dW2, db2, d_dy, d_h, rows, MLP_HID, MLP_OUT);
        RT_LAUNCHED();
        linear_backward_input<<<rt_blocks((long long)B * MLP_HID), 128, 0, stream>>>(
            d_dh, d_dy, W2, d_h, rows, MLP_HID, MLP_OUT, MLP_ACT_TANH);
        RT_LAUNCHED();
        linear_backward_weight<<<rt_blocks(MLP_HID * MLP_IN + MLP_HID), 128, 0, stream>>>(
            dW1, db1, d_dh, d_x, rows, MLP_IN, MLP_HID);
        RT_LAUNCHED();

        if (o.clip > 0.0f) {
            grad_norm_squared<<<1, 1, 0, stream>>>(d_normsq, d_grads, n_params);
            RT_LAUNCHED();
            clip_scale<<<1, 1, 0, stream>>>(d_scale, d_normsq, o.clip);
            RT_LAUNCHED();
        }

        int t_adam = (int)(step + 1);
        for (int t = 0; t < (o.per_tensor ? MLP_NTENSORS : 1); t++) {
            int off = o.per_tensor ? mlp_tensors[t].offset : 0;
            int n = o.per_tensor ? mlp_tensors[t].count : MLP_NPARAMS;
            if (o.adam)
                adam_update<<<rt_blocks(n), 128, 0, stream>>>(d_params + off, d_grads + off,
                                                              d_m + off, d_v + off, n, o.lr, b1,
                                                              b2, eps, t_adam, d_scale);
            else
                sgd_update<<<rt_blocks(n), 128, 0, stream>>>(d_params + off, d_grads + off, n,
                                                             o.lr, d_scale);
            RT_LAUNCHED();
        }

        float loss;
        RT_CK(cudaMemcpyAsync(&loss, d_loss, sizeof loss, cudaMemcpyDeviceToHost, stream));
        RT_CK(cudaStreamSynchronize(stream));
        printf("step %lld loss %.9g\n", step, (double)loss);
    }

    RT_CK(cudaStreamSynchronize(stream));
    RT_CK(cudaMemcpy(params, d_params, sizeof params, cudaMemcpyDeviceToHost));

    static unsigned char bytes[sizeof params];
    double sum;
    uint64_t hash;
    mlp_serialise(params, bytes, &sum, &hash);

    int rc = 0;
    if (o.save) {
        FILE *f = fopen(o.save, "wb");
        if (!f || fwrite(bytes, 1, sizeof bytes, f) != sizeof bytes || fclose(f) != 0) {
            fprintf(stderr, "rt_mlp: cannot write %s: %s\n", o.save, strerror(errno));
            rc = 1;
        }
    }
    if (dump && fclose(dump) != 0) {
        fprintf(stderr, "rt_mlp: cannot write %s: %s\n", o.dump_samples, strerror(errno));
        rc = 1;
    }
    printf("checksum %.17g %016llx\n", sum, (unsigned long long)hash);

    free(hx);
    free(hy);
    float *bufs[] = {d_params, d_grads, d_m, d_v, d_x, d_y, d_h, d_dh, d_yhat, d_dy,
                     d_loss, d_normsq, d_scale};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            RT_CK(cudaFree(bufs[i]));
    RT_CK(cudaStreamDestroy(stream));
    return rc;
}
