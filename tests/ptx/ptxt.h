/* ptxt.h — helpers shared by the PTX interpreter's tests in tests/ptx (not part of hostcuda).
 *
 * ptxt_start() puts HOSTCUDA_EXEC=ptx into the environment (unless the caller set one), initialises
 * the driver and makes device 0's primary context current. ptxt_slurp() reads a file;
 * ptxt_entry_module() cuts one `.entry` out of an nvcc PTX file (header + that entry), so a kernel
 * the interpreter refuses fails only its own case. ptxt_get() loads a module and finds a function;
 * when hostcuda answers CUDA_ERROR_NOT_FOUND (no host twin and no interpreter in this build) the
 * test has nothing to check and skips (exit 77), it never passes.
 * Single-threaded; each test is its own process.
 */
#ifndef PTXT_H
#define PTXT_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline const char *ptxt_err(CUresult r)
{
    const char *n = NULL;
    if (cuGetErrorName(r, &n) != CUDA_SUCCESS || !n)
        return "(unknown CUresult)";
    return n;
}

#define PTXT_CHECK(call)                                                                        \
    do {                                                                                        \
        CUresult r_ = (call);                                                                   \
        if (r_ != CUDA_SUCCESS) {                                                               \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,           \
                    ptxt_err(r_), (int)r_);                                                     \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static inline void ptxt_start(void)
{
    setenv("HOSTCUDA_EXEC", "ptx", 0);
    PTXT_CHECK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    PTXT_CHECK(cuDeviceGet(&dev, 0));
    PTXT_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    PTXT_CHECK(cuCtxSetCurrent(ctx));
}

static inline char *ptxt_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = len >= 0 ? calloc(1, (size_t)len + 1) : NULL;
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* the PTX header (up to the first "// .globl") followed by entry NAME's text (from its
 * "// .globl NAME" line to the next "// .globl" or the end); NULL when NAME is absent */
static inline char *ptxt_entry_module(const char *ptx, const char *name)
{
    const char *first = strstr(ptx, "// .globl");
    if (!first)
        return NULL;
    char key[256];
    snprintf(key, sizeof key, "// .globl\t%s\n", name);
    const char *at = strstr(ptx, key);
    if (!at)
        return NULL;
    const char *end = strstr(at + 1, "// .globl");
    size_t hlen = (size_t)(first - ptx), elen = end ? (size_t)(end - at) : strlen(at);
    char *m = malloc(hlen + elen + 1);
    if (!m)
        return NULL;
    memcpy(m, ptx, hlen);
    memcpy(m + hlen, at, elen);
    m[hlen + elen] = 0;
    return m;
}

/* loads PTX text and finds NAME: CUDA_SUCCESS, or the failing call's result (printed) */
static inline CUresult ptxt_get(const char *text, const char *name, CUmodule *mod, CUfunction *fn)
{
    CUresult r = cuModuleLoadData(mod, text);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "# cuModuleLoadData(%s): %s\n", name, ptxt_err(r));
        return r;
    }
    r = cuModuleGetFunction(fn, *mod, name);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "# cuModuleGetFunction(%s): %s\n", name, ptxt_err(r));
        cuModuleUnload(*mod);
    }
    return r;
}

/* skip (77) unless hostcuda can run kernel NAME of TEXT with no host twin */
static inline void ptxt_need_interpreter(const char *text, const char *name)
{
    CUmodule m;
    CUfunction f;
    CUresult r = ptxt_get(text, name, &m, &f);
    if (r == CUDA_ERROR_NOT_FOUND) {
        printf("1..0 # SKIP hostcuda has no PTX interpreter in this build (kernel %s has no host "
               "twin and HOSTCUDA_EXEC=ptx could not run it)\n", name);
        exit(77);
    }
    if (r == CUDA_SUCCESS)
        cuModuleUnload(m);
}

/* the directory of this executable (built files lie next to it) */
static inline void ptxt_self_dir(const char *argv0, char *buf, size_t len)
{
    snprintf(buf, len, "%s", argv0);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(buf, len, ".");
}

#endif /* PTXT_H */
