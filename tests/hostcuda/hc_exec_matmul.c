/* hc_exec_matmul — runs llm.c's matmul_forward_kernel4 (train_gpt2_fp32.cu, from its PTX) through
 * the Driver API as llm.c launches it (blocks of 16x16 threads, each block a 128x128 tile) and
 * compares out = inp @ weight^T + bias with a host computation in double.
 *   hc_exec_matmul PTX BT C OC [REPEAT]
 * Exit 0: the launch succeeded and every element is within 1e-5 relative (+1e-6 absolute) of the
 * host value; 1: a mismatch (both sides printed); 3: the launch or a copy failed (its error is
 * printed: llm.c's kernel writes whole tiles, so BT or OC not a multiple of 128 overruns).
 * The buffers are allocated at exactly their size, so an overrun leaves the allocation.
 * Must not: pass on a launch error or a mismatch (exit 0 only when every element matches). */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL "_Z22matmul_forward_kernel4PfPKfS1_S1_ii"

static int check(CUresult rc, const char *what)
{
    if (rc == CUDA_SUCCESS)
        return 0;
    const char *n = "?";
    cuGetErrorName(rc, &n);
    printf("%s: %s\n", what, n);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: hc_exec_matmul PTX BT C OC [REPEAT]\n");
        return 2;
    }
    int BT = atoi(argv[2]), C = atoi(argv[3]), OC = atoi(argv[4]), rep = argc > 5 ? atoi(argv[5]) : 1;
    if (BT <= 0 || C <= 0 || OC <= 0 || rep <= 0) {
        fprintf(stderr, "hc_exec_matmul: BT, C, OC and REPEAT must be positive\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    if (check(cuInit(0), "cuInit") || check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        check(cuDevicePrimaryCtxRetain(&ctx, dev), "retain") || check(cuCtxSetCurrent(ctx), "set") ||
        check(cuModuleLoad(&mod, argv[1]), "cuModuleLoad") || check(cuModuleGetFunction(&f, mod, KERNEL), KERNEL))
        return 3;
    size_t ni = (size_t)BT * C, nw = (size_t)OC * C, no = (size_t)BT * OC;
    float *inp = malloc(ni * 4), *w = malloc(nw * 4), *b = malloc((size_t)OC * 4), *out = malloc(no * 4);
    if (!inp || !w || !b || !out)
        return 2;
    for (size_t i = 0; i < ni; i++)
        inp[i] = (float)((int)(i * 7 % 23) - 11) / 16.0f;
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)((int)(i * 5 % 19) - 9) / 32.0f;
    for (int i = 0; i < OC; i++)
        b[i] = (float)(i % 7) / 8.0f;
    CUdeviceptr di, dw, db, dout;
    if (check(cuMemAlloc(&di, ni * 4), "alloc") || check(cuMemAlloc(&dw, nw * 4), "alloc") ||
        check(cuMemAlloc(&db, (size_t)OC * 4), "alloc") || check(cuMemAlloc(&dout, no * 4), "alloc") ||
        check(cuMemcpyHtoD(di, inp, ni * 4), "copy") || check(cuMemcpyHtoD(dw, w, nw * 4), "copy") ||
        check(cuMemcpyHtoD(db, b, (size_t)OC * 4), "copy"))
        return 3;
    void *args[] = {&dout, &di, &dw, &db, &C, &OC};
    unsigned gx = (unsigned)((BT + 127) / 128), gy = (unsigned)((OC + 127) / 128);
    for (int r = 0; r < rep; r++)
        if (check(cuLaunchKernel(f, gx, gy, 1, 16, 16, 1, 0, NULL, args, NULL), "cuLaunchKernel"))
            return 3;
    if (check(cuCtxSynchronize(), "launch") || check(cuMemcpyDtoH(out, dout, no * 4), "copy back"))
        return 3;
    int bad = 0;
    for (int i = 0; i < BT; i++)
        for (int o = 0; o < OC; o++) {
            double s = b[o];
            for (int c = 0; c < C; c++)
                s += (double)inp[(size_t)i * C + c] * w[(size_t)o * C + c];
            double g = out[(size_t)i * OC + o];
            if (!(fabs(g - s) <= 1e-5 * fabs(s) + 1e-6) && bad++ < 10)
                printf("MISMATCH out[%d][%d]: interpreter %.9g, host %.9g\n", i, o, g, s);
        }
    printf("%s: %dx%d @ %dx%d, %d launch(es), %d mismatches\n", bad ? "FAIL" : "ok", BT, C, OC, C, rep, bad);
    return bad ? 1 : 0;
}
