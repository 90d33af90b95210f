/* launch_overhead.c — times N calls of cuLaunchKernel, exactly as a program linked against
 * libcuda makes them (through its PLT: the shim's hook when preloaded, else the driver's). Prints
 * "launches N best_ns_per_launch X" (best of R repeats after a warm-up). With --ptx FILE it loads
 * that module and launches ash_itest_fill (hostcuda); without, it launches a dummy handle (the
 * bench's fake driver, whose cuLaunchKernel only returns). Driven by launch_overhead.sh, which runs
 * it with and without LD_PRELOAD=libaccelshim.so side by side, and under callgrind.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef CUresult (*sync_fn)(CUstream);

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what, int r)
{
    fprintf(stderr, "launch_overhead: %s failed (%d)\n", what, r);
    exit(1);
}

int main(int argc, char **argv)
{
    long n = 1000000, repeat = 5, sync_every = 0;
    const char *ptx_path = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--launches") == 0)
            n = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--repeat") == 0)
            repeat = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--ptx") == 0)
            ptx_path = argv[i + 1];
        else if (strcmp(argv[i], "--sync-every") == 0)
            sync_every = atol(argv[i + 1]);
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        die("dlopen libcuda.so.1", 0);
    int r = cuInit(0);
    if (r != CUDA_SUCCESS)
        die("cuInit", r);
    sync_fn sync = (sync_fn)dlsym(lib, "cuStreamSynchronize");
    CUfunction f = (CUfunction)(uintptr_t)0x1000;
    void *params[3] = {NULL, NULL, NULL};
    CUdeviceptr buf = 0;
    int v = 1, count = 32;
    if (ptx_path != NULL) {
        CUresult (*get)(CUdevice *, int) = (CUresult (*)(CUdevice *, int))dlsym(lib, "cuDeviceGet");
        CUresult (*retain)(CUcontext *, CUdevice) = (CUresult (*)(CUcontext *, CUdevice))dlsym(lib, "cuDevicePrimaryCtxRetain");
        CUresult (*setcur)(CUcontext) = (CUresult (*)(CUcontext))dlsym(lib, "cuCtxSetCurrent");
        CUresult (*load)(CUmodule *, const void *) = (CUresult (*)(CUmodule *, const void *))dlsym(lib, "cuModuleLoadData");
        CUresult (*getfn)(CUfunction *, CUmodule, const char *) =
            (CUresult (*)(CUfunction *, CUmodule, const char *))dlsym(lib, "cuModuleGetFunction");
        CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult (*)(CUdeviceptr *, size_t))dlsym(lib, "cuMemAlloc_v2");
        CUdevice dev;
        CUcontext ctx;
        CUmodule mod;
        FILE *fp = fopen(ptx_path, "rb");
        if (fp == NULL)
            die("open ptx", 0);
        static char ptx[1 << 16];
        size_t len = fread(ptx, 1, sizeof ptx - 1, fp);
        fclose(fp);
        ptx[len] = '\0';
        if ((r = get(&dev, 0)) || (r = retain(&ctx, dev)) || (r = setcur(ctx)) || (r = load(&mod, ptx)) ||
            (r = getfn(&f, mod, "ash_itest_fill")) || (r = alloc(&buf, 4096)))
            die("hostcuda setup", r);
        params[0] = &buf;
        params[1] = &v;
        params[2] = &count;
    }
    /* warm-up: the first launch of a handle is the shim's slow path (learning) */
    for (int i = 0; i < 1000; i++)
        if ((r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL)) != CUDA_SUCCESS)
            die("cuLaunchKernel", r);
    if (sync)
        sync(NULL);
    double best = 1e30;
    for (long rep = 0; rep < repeat; rep++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
            if (sync_every && (i + 1) % sync_every == 0)
                sync(NULL);
        }
        if (sync)
            sync(NULL);
        double ns = (now_ns() - t0) / (double)n;
        if (ns < best)
            best = ns;
    }
    printf("launches %ld best_ns_per_launch %.2f\n", n, best);
    return 0;
}
