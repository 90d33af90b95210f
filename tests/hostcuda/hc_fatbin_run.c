/* hc_fatbin_run.c — a Driver API program that loads an nvcc-made fatbin and runs its kernels on
 * hostcuda with their host implementations (test_kernels.cu: hc_fill, hc_saxpy).
 *   hc_fatbin_run FILE MODE   MODE: data (cuModuleLoadData) | fatbinary (cuModuleLoadFatBinary) |
 *                             library (cuLibraryLoadData) | wrapper1 | wrapper2 (cuLibraryLoadData
 *                             of a __fatBinC_Wrapper_t v1/v2 pointing at the image, as cudart does)
 *   hc_fatbin_run --lz4 PTX OUT   write a fatbin whose one PTX entry is LZ4-compressed (flag
 *                             0x2000), with liblz4.so.1; exit 77 when liblz4 is absent
 * Exit 0 when the kernels computed the right values, 1 on wrong values, 2 when the load failed
 * (the CUresult is printed), 77 for a missing precondition.
 * Must not: pass when a kernel computed a wrong value or the load failed; report a missing
 * precondition as anything but 77.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
#define CK(call)                                                                           \
    do {                                                                                   \
        CUresult r_ = (call);                                                              \
        if (r_ != CUDA_SUCCESS) {                                                          \
            const char *s_ = "?";                                                          \
            cuGetErrorName(r_, &s_);                                                       \
            printf("hc_fatbin_run: %s -> %s (%d)\n", #call, s_, (int)r_);                 \
            return 2;                                                                      \
        }                                                                                  \
    } while (0)

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(1, (size_t)len + 8);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* one PTX entry, LZ4 block compressed, in the layout hc_fatbin.c documents */
static int make_lz4(const char *ptx_path, const char *out_path)
{
    void *h = dlopen("liblz4.so.1", RTLD_NOW);
    int (*compress)(const char *, char *, int, int) = h ? (int (*)(const char *, char *, int, int))dlsym(h, "LZ4_compress_default") : NULL;
    if (!compress) {
        printf("SKIP: liblz4.so.1 not found\n");
        return 77;
    }
    size_t n;
    char *ptx = slurp(ptx_path, &n);
    if (!ptx)
        return 2;
    char *z = malloc(n + n / 255 + 64);
    int zn = compress(ptx, z, (int)n, (int)(n + n / 255 + 64));
    if (zn <= 0)
        return 2;
    uint64_t padded = ((uint64_t)zn + 7) & ~7ull;
    unsigned char hdr[16] = {0}, ent[64] = {0};
    uint32_t magic = 0xBA55ED50u, hs = 64, csize = (uint32_t)zn, arch = 80;
    uint16_t one = 1, sixteen = 16;
    uint64_t size = 64 + padded, flags = 0x2000 | 0x11, usize = n;
    memcpy(hdr, &magic, 4), memcpy(hdr + 4, &one, 2), memcpy(hdr + 6, &sixteen, 2), memcpy(hdr + 8, &size, 8);
    memcpy(ent, &one, 2), memcpy(ent + 4, &hs, 4), memcpy(ent + 8, &padded, 8), memcpy(ent + 16, &csize, 4);
    memcpy(ent + 28, &arch, 4), memcpy(ent + 40, &flags, 8), memcpy(ent + 56, &usize, 8);
    FILE *f = fopen(out_path, "wb");
    static const char zeros[8];
    if (!f || fwrite(hdr, 1, 16, f) != 16 || fwrite(ent, 1, 64, f) != 64 || fwrite(z, 1, (size_t)zn, f) != (size_t)zn ||
        fwrite(zeros, 1, padded - (uint64_t)zn, f) != padded - (uint64_t)zn || fclose(f) != 0)
        return 2;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--lz4") == 0)
        return make_lz4(argv[2], argv[3]);
    if (argc != 3) {
        fprintf(stderr, "usage: hc_fatbin_run FILE data|fatbinary|library|wrapper1|wrapper2 | --lz4 PTX OUT\n");
        return 2;
    }
    size_t n;
    char *image = slurp(argv[1], &n);
    if (!image) {
        printf("hc_fatbin_run: cannot read %s\n", argv[1]);
        return 2;
    }
    const char *mode = argv[2];
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUfunction fill, saxpy;
    struct {
        int magic, version;
        const unsigned long long *data;
        void *filename_or_fatbins;
    } wrapper = {0x466243B1, strcmp(mode, "wrapper2") == 0 ? 2 : 1, (const unsigned long long *)image, NULL};
    if (strcmp(mode, "data") == 0 || strcmp(mode, "fatbinary") == 0) {
        CUmodule mod;
        if (strcmp(mode, "data") == 0)
            CK(cuModuleLoadData(&mod, image));
        else
            CK(cuModuleLoadFatBinary(&mod, image));
        CK(cuModuleGetFunction(&fill, mod, "hc_fill"));
        CK(cuModuleGetFunction(&saxpy, mod, "hc_saxpy"));
    } else if (strcmp(mode, "library") == 0 || strncmp(mode, "wrapper", 7) == 0) {
        CUlibrary lib;
        CUkernel kf, ks;
        CK(cuLibraryLoadData(&lib, strcmp(mode, "library") == 0 ? (const void *)image : (const void *)&wrapper, NULL,
                             NULL, 0, NULL, NULL, 0));
        CK(cuLibraryGetKernel(&kf, lib, "hc_fill"));
        CK(cuLibraryGetKernel(&ks, lib, "hc_saxpy"));
        CK(cuKernelGetFunction(&fill, kf));
        CK(cuKernelGetFunction(&saxpy, ks));
    } else {
        printf("hc_fatbin_run: unknown mode %s\n", mode);
        return 2;
    }
    CUdeviceptr x, y;
    CK(cuMemAlloc(&x, N * sizeof(float)));
    CK(cuMemAlloc(&y, N * sizeof(float)));
    float vx = 3.0f, vy = 1.0f, a = 2.0f;
    int cnt = N;
    void *fx[] = {&x, &vx, &cnt}, *fy[] = {&y, &vy, &cnt}, *sp[] = {&y, &x, &a, &cnt};
    CK(cuLaunchKernel(fill, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, fx, NULL));
    CK(cuLaunchKernel(fill, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, fy, NULL));
    CK(cuLaunchKernel(saxpy, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, sp, NULL));
    static float out[N];
    CK(cuMemcpyDtoH(out, y, sizeof out));
    for (int i = 0; i < N; i++)
        if (out[i] != 7.0f) {
            printf("hc_fatbin_run: y[%d] = %g, want 7 (2 * 3 + 1)\n", i, (double)out[i]);
            return 1;
        }
    printf("hc_fatbin_run: %s %s: hc_fill + hc_saxpy ran, y = 7 everywhere\n", argv[1], mode);
    return 0;
}
