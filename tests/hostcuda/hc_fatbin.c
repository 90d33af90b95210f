/* hc_fatbin.c — hostcuda's reader of fatbins: the image nvcc embeds (`nvcc -fatbin`, the
 * .nv_fatbin section) and the wrapper cudart registers (__fatBinC_Wrapper_t, v1 and v2).
 *
 * Layout (as CUDA 11-13 write it): a 16-byte header {u32 magic 0xBA55ED50, u16 version 1, u16
 * header size 16, u64 size of the entries}, then entries back to back, each a header {u16 kind
 * (1 PTX, 2 ELF cubin), u16, u32 header size, u64 payload size, u32 compressed size, u32, u16
 * minor, u16 major, u32 arch, u32 name offset, u32 name size, u64 flags (0x2000 LZ4, 0x8000
 * zstd), u64, u64 uncompressed size} and its payload. hostcuda runs PTX only: it picks the PTX
 * entry of the highest arch <= 90 (its devices are CC 9.0; else the lowest), decompresses it with
 * libzstd.so.1 / liblz4.so.1 opened at run time (HOSTCUDA_ZSTD_LIB / HOSTCUDA_LZ4_LIB override the
 * names), and hands back NUL-terminated text. Every bound is checked against the header's size.
 * Threading: the libraries are opened once (pthread_once); otherwise no shared state.
 * Must not: read past a bound the header gives; run or hand back a cubin (PTX only); link libzstd
 * or liblz4 (opened at run time).
 */
#include "hc_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HC_FATBIN_MAGIC 0xBA55ED50u
#define HC_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define HC_FATBIN_MAX ((uint64_t)1 << 32)  /* sanity bound on a header's size */
#define HC_FB_PTX 1
#define HC_FB_LZ4 0x2000u
#define HC_FB_ZSTD 0x8000u
#define HC_FB_ENTRY_MIN 64

static uint16_t rd16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

int hc_fatbin_kind(const void *image)
{
    const unsigned char *u = image;
    /* byte by byte: a short PTX text stops at its NUL before a read could run past it */
    if (u[0] == 0x50 && u[1] == 0xed && u[2] == 0x55 && u[3] == 0xba)
        return 1;
    if (u[0] == 0xb1 && u[1] == 0x43 && u[2] == 0x62 && u[3] == 0x46)
        return 2;
    return 0;
}

/* ---- decompressors, found at run time */
static size_t (*zstd_decompress)(void *, size_t, const void *, size_t);
static unsigned (*zstd_is_error)(size_t);
static const char *(*zstd_error_name)(size_t);
static size_t (*zstd_frame_size)(const void *, size_t);
static int (*lz4_decompress)(const char *, char *, int, int);
static char zstd_err[256], lz4_err[256];
static pthread_once_t libs_once = PTHREAD_ONCE_INIT;

static void *open_lib(const char *env, const char *dflt, char *err, size_t cap)
{
    const char *name = getenv(env);
    if (!name || !*name)
        name = dflt;
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, cap, "%s (%s)", name, e ? e : "not found");
    }
    return h;
}

static void libs_open(void)
{
    void *z = open_lib("HOSTCUDA_ZSTD_LIB", "libzstd.so.1", zstd_err, sizeof zstd_err);
    if (z) {
        zstd_decompress = (size_t(*)(void *, size_t, const void *, size_t))dlsym(z, "ZSTD_decompress");
        zstd_is_error = (unsigned (*)(size_t))dlsym(z, "ZSTD_isError");
        zstd_error_name = (const char *(*)(size_t))dlsym(z, "ZSTD_getErrorName");
        zstd_frame_size = (size_t(*)(const void *, size_t))dlsym(z, "ZSTD_findFrameCompressedSize");
        if (!zstd_decompress || !zstd_is_error || !zstd_error_name || !zstd_frame_size) {
            snprintf(zstd_err, sizeof zstd_err, "the zstd library lacks ZSTD_decompress/ZSTD_findFrameCompressedSize");
            zstd_decompress = NULL;
        }
    }
    void *l = open_lib("HOSTCUDA_LZ4_LIB", "liblz4.so.1", lz4_err, sizeof lz4_err);
    if (l && !(lz4_decompress = (int (*)(const char *, char *, int, int))dlsym(l, "LZ4_decompress_safe")))
        snprintf(lz4_err, sizeof lz4_err, "the lz4 library lacks LZ4_decompress_safe");
}

static CUresult inflate(const unsigned char *src, uint64_t n, uint64_t flags, uint64_t out_n, char **out)
{
    pthread_once(&libs_once, libs_open);
    if ((flags & (HC_FB_ZSTD | HC_FB_LZ4)) && (out_n == 0 || out_n > HC_FATBIN_MAX)) {
        fprintf(stderr, "hostcuda: fatbin: PTX entry has an implausible uncompressed size %llu\n",
                (unsigned long long)out_n);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    if (!(flags & (HC_FB_ZSTD | HC_FB_LZ4)))
        out_n = n;
    char *text = malloc(out_n + 1);
    if (!text)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (flags & HC_FB_ZSTD) {
        if (!zstd_decompress) {
            fprintf(stderr, "hostcuda: fatbin: the PTX is zstd-compressed (nvcc's default) but libzstd could not be "
                    "loaded: %s; install libzstd1, or build with nvcc --no-compress\n", zstd_err);
            free(text);
            return CUDA_ERROR_NOT_SUPPORTED;
        }
        size_t fn = zstd_frame_size(src, n); /* the payload is padded: decompress the frame only */
        size_t got = zstd_is_error(fn) ? fn : zstd_decompress(text, out_n, src, fn);
        if (zstd_is_error(got) || got == 0) {
            fprintf(stderr, "hostcuda: fatbin: zstd: %s (%zu of %llu bytes)\n",
                    zstd_is_error(got) ? zstd_error_name(got) : "short output", zstd_is_error(got) ? 0 : got,
                    (unsigned long long)out_n);
            free(text);
            return CUDA_ERROR_INVALID_IMAGE;
        }
        out_n = got;
    } else if (flags & HC_FB_LZ4) {
        if (!lz4_decompress) {
            fprintf(stderr, "hostcuda: fatbin: the PTX is LZ4-compressed but liblz4 could not be loaded: %s; "
                    "install liblz4-1\n", lz4_err);
            free(text);
            return CUDA_ERROR_NOT_SUPPORTED;
        }
        int got = n > 0x7fffffff || out_n > 0x7fffffff ? -1 : lz4_decompress((const char *)src, text, (int)n, (int)out_n);
        if (got <= 0) {
            fprintf(stderr, "hostcuda: fatbin: LZ4 data is corrupt (%d of %llu bytes)\n", got, (unsigned long long)out_n);
            free(text);
            return CUDA_ERROR_INVALID_IMAGE;
        }
        out_n = (uint64_t)got;
    } else {
        memcpy(text, src, n);
    }
    text[out_n] = '\0'; /* uncompressed payloads are NUL-padded; the text ends at its first NUL */
    *out = text;
    return CUDA_SUCCESS;
}

CUresult hc_fatbin_ptx(const void *image, char **ptx)
{
    const unsigned char *u = image;
    if (hc_fatbin_kind(u) == 2) { /* the wrapper: {magic, version, data -> fatbin, ...} */
        uint32_t version = rd32(u + 4);
        if (version != 1 && version != 2) {
            fprintf(stderr, "hostcuda: fatbin wrapper version %u is not 1 or 2\n", version);
            return CUDA_ERROR_INVALID_IMAGE;
        }
        const void *data;
        memcpy(&data, u + 8, sizeof data);
        if (!data || hc_fatbin_kind(data) != 1) {
            fprintf(stderr, "hostcuda: fatbin wrapper (v%u) does not point at a fatbin\n", version);
            return CUDA_ERROR_INVALID_IMAGE;
        }
        u = data;
    }
    if (rd16(u + 4) != 1 || rd16(u + 6) != 16) {
        fprintf(stderr, "hostcuda: fatbin header version %u / size %u (want 1 / 16)\n", rd16(u + 4), rd16(u + 6));
        return CUDA_ERROR_INVALID_IMAGE;
    }
    uint64_t size = rd64(u + 8);
    if (size > HC_FATBIN_MAX) {
        fprintf(stderr, "hostcuda: fatbin header claims %llu bytes\n", (unsigned long long)size);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    const unsigned char *p = u + 16, *end = u + 16 + size, *best = NULL;
    uint32_t best_arch = 0;
    int entries = 0, elf = 0;
    while (p < end) {
        if ((uint64_t)(end - p) < HC_FB_ENTRY_MIN) {
            fprintf(stderr, "hostcuda: fatbin entry %d is truncated\n", entries);
            return CUDA_ERROR_INVALID_IMAGE;
        }
        uint32_t hsize = rd32(p + 4);
        uint64_t psize = rd64(p + 8);
        if (hsize < HC_FB_ENTRY_MIN || hsize > (uint64_t)(end - p) || psize > (uint64_t)(end - p) - hsize) {
            fprintf(stderr, "hostcuda: fatbin entry %d: header %u / payload %llu bytes overrun the fatbin\n", entries,
                    hsize, (unsigned long long)psize);
            return CUDA_ERROR_INVALID_IMAGE;
        }
        uint32_t arch = rd32(p + 28);
        if (rd16(p) == HC_FB_PTX) {
            int better = !best || (arch <= 90 ? (best_arch > 90 || arch > best_arch) : (best_arch > 90 && arch < best_arch));
            if (better)
                best = p, best_arch = arch;
        } else {
            elf++;
        }
        entries++;
        p += hsize + psize;
    }
    if (!best) {
        fprintf(stderr, "hostcuda: the fatbin has no PTX entry (%d cubin entries): hostcuda runs PTX only; build "
                "with -gencode arch=compute_XX,code=compute_XX\n", elf);
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    uint32_t hsize = rd32(best + 4), csize = rd32(best + 16);
    uint64_t psize = rd64(best + 8), flags = rd64(best + 40), usize = rd64(best + 56);
    uint64_t n = (flags & (HC_FB_ZSTD | HC_FB_LZ4)) && csize && csize <= psize ? csize : psize;
    return inflate(best + hsize, n, flags, usize, ptx);
}
