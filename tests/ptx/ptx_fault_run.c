/* ptx_fault_run.c — runs one faulty kernel of fault_kernels.ptx (or llm.c's matmul_forward_kernel4)
 * on hostcuda with HOSTCUDA_EXEC=ptx and prints what the driver answered, for
 * tests/ptx/test_ptx_faults.sh to check:
 *   launch=NAME sync=NAME again=NAME alloc=NAME addr=0xADDR base=0xBASE
 * (cuLaunchKernel, cuCtxSynchronize, a second cuCtxSynchronize and a cuMemAlloc after it: the
 * stickiness; addr: the address thread 5 touched (freed: thread 0, the first of all to fault),
 * base: its buffer). Modes: read write freed
 * misaligned null shared hang barrier assert printf ok; `load PTX NAME` (prints load=RESULT
 * get=RESULT for entry NAME cut out alone); `whole PTX GOOD BAD` (the whole file as one module:
 * load=, bad=, good= (cuModuleGetFunction), launch= and wrong= for GOOD, out = in * 3 + 1); and `llmc PTX C OC` (BT = 128 rows; prints
 * maxrel=X for a successful launch, its result against a C matmul).
 * Usage: ptx_fault_run MODE [PTX_FILE] | load PTX NAME | llmc PTX C OC. Exit 0 when it ran to
 * the end, 77 without an interpreter.
 */
#include "ptxt.h"

#include <math.h>

static void report(CUresult launch, CUdeviceptr addr, CUdeviceptr base)
{
    CUresult sync = launch == CUDA_SUCCESS ? cuCtxSynchronize() : launch;
    CUresult again = cuCtxSynchronize();
    CUdeviceptr d;
    CUresult alloc = cuMemAlloc(&d, 64);
    printf("launch=%s sync=%s again=%s alloc=%s addr=0x%llx base=0x%llx\n", ptxt_err(launch), ptxt_err(sync),
           ptxt_err(again), ptxt_err(alloc), (unsigned long long)addr, (unsigned long long)base);
    fflush(stdout);
}

static int llmc(const char *path, int C, int OC)
{
    enum { BT = 128 };
    char *text = ptxt_slurp(path);
    if (!text)
        return 1;
    const char *name = "_Z22matmul_forward_kernel4PfPKfS1_S1_ii";
    ptxt_need_interpreter(text, name);
    CUmodule m;
    CUfunction f;
    PTXT_CHECK(ptxt_get(text, name, &m, &f));
    float *inp = malloc(sizeof(float) * BT * C), *w = malloc(sizeof(float) * OC * C), *b = malloc(sizeof(float) * OC);
    float *out = malloc(sizeof(float) * BT * OC);
    for (int i = 0; i < BT * C; i++)
        inp[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    for (int i = 0; i < OC * C; i++)
        w[i] = (float)((i * 53) % 89) / 89.0f - 0.5f;
    for (int i = 0; i < OC; i++)
        b[i] = (float)i * 0.01f;
    /* exact sizes, the weights last: the first row past them lies beyond every allocation */
    CUdeviceptr dout, dinp, db, dw;
    PTXT_CHECK(cuMemAlloc(&dout, sizeof(float) * BT * OC));
    PTXT_CHECK(cuMemAlloc(&dinp, sizeof(float) * BT * C));
    PTXT_CHECK(cuMemAlloc(&db, sizeof(float) * OC));
    PTXT_CHECK(cuMemAlloc(&dw, sizeof(float) * OC * C));
    PTXT_CHECK(cuMemcpyHtoD(dinp, inp, sizeof(float) * BT * C));
    PTXT_CHECK(cuMemcpyHtoD(dw, w, sizeof(float) * OC * C));
    PTXT_CHECK(cuMemcpyHtoD(db, b, sizeof(float) * OC));
    void *args[] = {&dout, &dinp, &dw, &db, &C, &OC};
    CUresult r = cuLaunchKernel(f, BT / 128, (unsigned)(OC + 127) / 128, 1, 16, 16, 1, 0, NULL, args, NULL);
    if (r == CUDA_SUCCESS)
        r = cuCtxSynchronize();
    if (r == CUDA_SUCCESS) {
        PTXT_CHECK(cuMemcpyDtoH(out, dout, sizeof(float) * BT * OC));
        double maxrel = 0;
        for (int i = 0; i < BT; i++)
            for (int o = 0; o < OC; o++) {
                double s = b[o], mag = fabs(b[o]);
                for (int k = 0; k < C; k++)
                    s += (double)inp[i * C + k] * w[o * C + k], mag += fabs((double)inp[i * C + k] * w[o * C + k]);
                double rel = fabs(out[i * OC + o] - s) / (mag > 0 ? mag : 1);
                if (rel > maxrel)
                    maxrel = rel;
            }
        printf("maxrel=%.3g\n", maxrel);
    }
    report(r, dw + sizeof(float) * OC * C, dw);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ptx_fault_run MODE [PTX_FILE] | llmc PTX C OC\n");
        return 2;
    }
    const char *mode = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    ptxt_start();
    if (!strcmp(mode, "load")) {   /* load PTX NAME: the result of loading entry NAME alone */
        if (argc < 4) {
            fprintf(stderr, "usage: ptx_fault_run load PTX NAME\n");
            return 2;
        }
        char *all = ptxt_slurp(argv[2]), *one = all ? ptxt_entry_module(all, argv[3]) : NULL;
        if (!one) {
            fprintf(stderr, "ptx_fault_run: no entry %s in %s\n", argv[3], argv[2]);
            return 2;
        }
        CUmodule m;
        CUfunction f;
        CUresult r = cuModuleLoadData(&m, one);
        printf("load=%s", ptxt_err(r));
        if (r == CUDA_SUCCESS)
            printf(" get=%s", ptxt_err(cuModuleGetFunction(&f, m, argv[3])));
        printf("\n");
        return 0;
    }
    if (!strcmp(mode, "whole")) {   /* whole PTX GOOD BAD: one module; GOOD runs (out = in * 3 + 1), BAD is refused */
        if (argc < 5) {
            fprintf(stderr, "usage: ptx_fault_run whole PTX GOOD BAD\n");
            return 2;
        }
        char *all = ptxt_slurp(argv[2]);
        CUmodule m;
        CUfunction good, bad;
        CUresult r = all ? cuModuleLoadData(&m, all) : CUDA_ERROR_FILE_NOT_FOUND;
        printf("load=%s", ptxt_err(r));
        if (r == CUDA_SUCCESS) {
            printf(" bad=%s", ptxt_err(cuModuleGetFunction(&bad, m, argv[4])));
            CUresult g = cuModuleGetFunction(&good, m, argv[3]);
            printf(" good=%s", ptxt_err(g));
            if (g == CUDA_SUCCESS) {
                enum { N = 64 };
                int in[N], out[N], wrong = 0;
                for (int i = 0; i < N; i++)
                    in[i] = i - 7;
                CUdeviceptr din, dout;
                PTXT_CHECK(cuMemAlloc(&din, sizeof in));
                PTXT_CHECK(cuMemAlloc(&dout, sizeof out));
                PTXT_CHECK(cuMemcpyHtoD(din, in, sizeof in));
                void *args[] = {&din, &dout};
                CUresult l = cuLaunchKernel(good, 1, 1, 1, N, 1, 1, 0, NULL, args, NULL);
                if (l == CUDA_SUCCESS)
                    l = cuMemcpyDtoH(out, dout, sizeof out);
                for (int i = 0; l == CUDA_SUCCESS && i < N; i++)
                    wrong += out[i] != in[i] * 3 + 1;
                printf(" launch=%s wrong=%d", ptxt_err(l), wrong);
            }
        }
        printf("\n");
        return 0;
    }
    if (!strcmp(mode, "llmc")) {
        if (argc < 5) {
            fprintf(stderr, "usage: ptx_fault_run llmc PTX C OC\n");
            return 2;
        }
        return llmc(argv[2], atoi(argv[3]), atoi(argv[4]));
    }
    char dir[4096], path[4200];
    ptxt_self_dir(argv[0], dir, sizeof dir);
    snprintf(path, sizeof path, "%s/fault_kernels.ptx", dir);
    char *text = ptxt_slurp(argc > 2 ? argv[2] : path);
    if (!text)
        return 1;
    ptxt_need_interpreter(text, "f_read");
    CUmodule m;
    PTXT_CHECK(cuModuleLoadData(&m, text));
    enum { N = 64 };
    int host[N];
    for (int i = 0; i < N; i++)
        host[i] = i == 5 ? 7 : i % 4;
    CUdeviceptr out, p;
    PTXT_CHECK(cuMemAlloc(&out, sizeof host));
    PTXT_CHECK(cuMemAlloc(&p, sizeof host));   /* the buffer under test, allocated last */
    PTXT_CHECK(cuMemcpyHtoD(p, host, sizeof host));
    CUfunction f;
    int n = N, bad = 3;
    CUresult r;
    if (!strcmp(mode, "read") || !strcmp(mode, "ok") || !strcmp(mode, "freed")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_read"));
        if (!strcmp(mode, "ok"))
            bad = -n;   /* thread 5 reads p[0]: in bounds */
        if (!strcmp(mode, "freed")) {
            bad = 5 - n;   /* in bounds, but the buffer is gone */
            PTXT_CHECK(cuMemFree(p));
        }
        void *args[] = {&p, &out, &n, &bad};
        r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        /* freed: every thread's read faults; thread 0's, at the base, is the first */
        report(r, strcmp(mode, "freed") ? p + 4 * (CUdeviceptr)(n + bad) : p, p);
    } else if (!strcmp(mode, "null")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_read"));
        CUdeviceptr null = 0;
        bad = 5 - n;   /* every thread reads through a null pointer; thread 0's address is 0 */
        void *args[] = {&null, &out, &n, &bad};
        r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        report(r, 0, 0);
    } else if (!strcmp(mode, "shared")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_shared"));
        int far = 100000;
        void *args[] = {&p, &out, &far};
        r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        report(r, 0, p);
    } else if (!strcmp(mode, "write")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_write"));
        void *args[] = {&p, &n, &bad};
        r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        report(r, p + 4 * (CUdeviceptr)(n + bad), p);
    } else if (!strcmp(mode, "misaligned")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_misaligned"));
        void *args[] = {&p, &out};
        r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        report(r, p + 22, p);
    } else if (!strcmp(mode, "hang")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_hang"));
        PTXT_CHECK(cuMemsetD32(p, 0, N));
        void *args[] = {&p, &out};
        r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        report(r, 0, p);
    } else if (!strcmp(mode, "barrier")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_barrier"));
        void *args[] = {&out};
        r = cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL);
        report(r, 0, p);
    } else if (!strcmp(mode, "assert")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_assert"));
        void *args[] = {&p, &out};
        r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        report(r, 0, p);
    } else if (!strcmp(mode, "printf")) {
        PTXT_CHECK(cuModuleGetFunction(&f, m, "f_printf"));
        void *args[] = {&p};
        r = cuLaunchKernel(f, 2, 1, 1, 4, 1, 1, 0, NULL, args, NULL);
        printf("launched\n");
        report(r, 0, p);
    } else {
        fprintf(stderr, "ptx_fault_run: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
