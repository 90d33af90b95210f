/* image.c — the reader of the images a program loads (explain mode and the step watch ask it for
 * their PTX): PTX text as it is; a fatbin
 * (magic 0xBA55ED50: a 16-byte header {u32 magic, u16 version 1, u16 header size 16, u64 size of
 * the entries}, then entries {u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload size,
 * u32 compressed size, u32, u16 minor, u16 major, u32 arch, u32 name offset, u32 name size,
 * u64 flags (0x2000 LZ4, 0x8000 zstd), u64, u64 uncompressed size} and their payloads); the
 * wrapper cudart registers ({u32 magic 0x466243B1, u32 version, fatbin pointer, ...}); an ELF
 * cubin (SASS only). Of a fatbin's PTX entries it takes the highest arch. zstd and LZ4 are
 * opened at run time (libzstd.so.1, liblz4.so.1).
 * Must not: read past a bound a header gives; link libzstd or liblz4; depend on hostcuda (its
 * reader of the same format is its own) or on anything of the shim above shim/core/; fail the
 * program (an unreadable image is named as such).
 */
#include "ash_image.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FB_MAGIC 0xBA55ED50u
#define FB_WRAP_MAGIC 0x466243B1u
#define FB_MAX ((uint64_t)1 << 32)
#define FB_ENTRY_MIN 64
#define FB_LZ4 0x2000u
#define FB_ZSTD 0x8000u

static uint16_t rd16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static size_t (*zstd_decompress)(void *, size_t, const void *, size_t);
static unsigned (*zstd_is_error)(size_t);
static size_t (*zstd_frame_size)(const void *, size_t);
static int (*lz4_decompress)(const char *, char *, int, int);
static pthread_once_t libs_once = PTHREAD_ONCE_INIT;

/* libc's dlsym, never the public name: inside libaccelshim.so `dlsym` is the shim's own hook */
static void *img_dlsym(void *handle, const char *name)
{
    static void *(*real)(void *, const char *);
    if (!real)
        *(void **)&real = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real)
        *(void **)&real = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return real ? real(handle, name) : NULL;
}

static void libs_open(void)
{
    void *z = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (z) {
        zstd_decompress = (size_t (*)(void *, size_t, const void *, size_t))img_dlsym(z, "ZSTD_decompress");
        zstd_is_error = (unsigned (*)(size_t))img_dlsym(z, "ZSTD_isError");
        zstd_frame_size = (size_t (*)(const void *, size_t))img_dlsym(z, "ZSTD_findFrameCompressedSize");
        if (!zstd_is_error || !zstd_frame_size)
            zstd_decompress = NULL;
    }
    void *l = dlopen("liblz4.so.1", RTLD_NOW | RTLD_LOCAL);
    if (l)
        lz4_decompress = (int (*)(const char *, char *, int, int))img_dlsym(l, "LZ4_decompress_safe");
}

/* the payload of one PTX entry as text, or NULL with why in what */
static char *inflate(const unsigned char *src, uint64_t n, uint64_t flags, uint64_t out_n, char *what, size_t wl)
{
    pthread_once(&libs_once, libs_open);
    if (!(flags & (FB_ZSTD | FB_LZ4)))
        out_n = n;
    if (out_n == 0 || out_n > FB_MAX) {
        snprintf(what, wl, "fatbin: a PTX entry with an implausible size %llu", (unsigned long long)out_n);
        return NULL;
    }
    char *text = malloc(out_n + 1);
    if (!text) {
        snprintf(what, wl, "fatbin: no memory for its PTX");
        return NULL;
    }
    if (flags & FB_ZSTD) {
        size_t fn = zstd_decompress ? zstd_frame_size(src, n) : 0;
        size_t got = zstd_decompress && !zstd_is_error(fn) ? zstd_decompress(text, out_n, src, fn) : 0;
        if (!zstd_decompress || zstd_is_error(got) || got == 0) {
            snprintf(what, wl, "fatbin: zstd-compressed PTX that %s", zstd_decompress ? "does not decompress"
                                                                                    : "needs libzstd.so.1 (not found)");
            free(text);
            return NULL;
        }
        out_n = got;
    } else if (flags & FB_LZ4) {
        int got = !lz4_decompress || n > 0x7fffffff || out_n > 0x7fffffff
                      ? -1 : lz4_decompress((const char *)src, text, (int)n, (int)out_n);
        if (got <= 0) {
            snprintf(what, wl, "fatbin: LZ4-compressed PTX that %s", lz4_decompress ? "does not decompress"
                                                                                 : "needs liblz4.so.1 (not found)");
            free(text);
            return NULL;
        }
        out_n = (uint64_t)got;
    } else {
        memcpy(text, src, n);
    }
    text[out_n] = 0;
    return text;
}

static int is_ptx_text(const unsigned char *u)
{
    /* PTX from nvcc opens with comments or a directive; read byte by byte (a short text ends at
     * its NUL before anything further is looked at) */
    size_t i = 0;
    while (u[i] == ' ' || u[i] == '\t' || u[i] == '\n' || u[i] == '\r')
        i++;
    return (u[i] == '/' && (u[i + 1] == '/' || u[i + 1] == '*')) || u[i] == '.';
}

void ash_image_ptx(const void *image, size_t len, char **ptx, char *what, size_t wl)
{
    const unsigned char *u = image;
    *ptx = NULL;
    (void)len;
    if (!u) {
        snprintf(what, wl, "no image");
        return;
    }
    if (u[0] == 0x7f && u[1] == 'E' && u[2] == 'L' && u[3] == 'F') {
        snprintf(what, wl, "ELF cubin: SASS only, no PTX");
        return;
    }
    if (u[0] == 0xb1 && u[1] == 0x43 && u[2] == 0x62 && u[3] == 0x46) { /* the wrapper */
        uint32_t version = rd32(u + 4);
        const void *data;
        memcpy(&data, u + 8, sizeof data);
        const unsigned char *d = data;
        if ((version != 1 && version != 2) || !d || rd32(d) != FB_MAGIC) {
            snprintf(what, wl, "fatbin wrapper (version %u) that does not point at a fatbin", version);
            return;
        }
        u = d;
    }
    if (!(u[0] == 0x50 && u[1] == 0xed && u[2] == 0x55 && u[3] == 0xba)) {
        if (is_ptx_text(u)) {
            *ptx = strdup((const char *)u);
            snprintf(what, wl, *ptx ? "PTX text" : "PTX text (no memory to keep it)");
        } else {
            snprintf(what, wl, "an image of unknown format (not PTX, fatbin or ELF)");
        }
        return;
    }
    if (rd16(u + 4) != 1 || rd16(u + 6) != 16 || rd64(u + 8) > FB_MAX) {
        snprintf(what, wl, "fatbin with an unknown header (version %u, size %u)", rd16(u + 4), rd16(u + 6));
        return;
    }
    const unsigned char *p = u + 16, *end = u + 16 + rd64(u + 8), *best = NULL;
    uint32_t best_arch = 0;
    int nptx = 0, nelf = 0;
    while (p < end) {
        if ((uint64_t)(end - p) < FB_ENTRY_MIN) {
            snprintf(what, wl, "fatbin with a truncated entry");
            return;
        }
        uint32_t hsize = rd32(p + 4);
        uint64_t psize = rd64(p + 8);
        if (hsize < FB_ENTRY_MIN || hsize > (uint64_t)(end - p) || psize > (uint64_t)(end - p) - hsize) {
            snprintf(what, wl, "fatbin whose entry %d overruns it", nptx + nelf);
            return;
        }
        uint32_t arch = rd32(p + 28);
        if (rd16(p) == 1) {
            nptx++;
            if (!best || arch > best_arch)
                best = p, best_arch = arch;
        } else {
            nelf++;
        }
        p += hsize + psize;
    }
    if (!best) {
        snprintf(what, wl, "fatbin: SASS only (%d cubin entr%s, no PTX)", nelf, nelf == 1 ? "y" : "ies");
        return;
    }
    uint32_t hsize = rd32(best + 4), csize = rd32(best + 16);
    uint64_t psize = rd64(best + 8), flags = rd64(best + 40), usize = rd64(best + 56);
    uint64_t n = (flags & (FB_ZSTD | FB_LZ4)) && csize && csize <= psize ? csize : psize;
    *ptx = inflate(best + hsize, n, flags, usize, what, wl);
    if (*ptx)
        snprintf(what, wl, "fatbin: PTX compute_%u%s of %d PTX and %d cubin entries", best_arch,
                 flags & FB_ZSTD ? " (zstd)" : flags & FB_LZ4 ? " (LZ4)" : "", nptx, nelf);
}

char *ash_image_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            char *nb = realloc(b, cap = (cap ? cap * 2 : 1 << 20) + 65536 + 1);
            if (!nb) {
                free(b);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            b = nb;
        }
        size_t got = fread(b + n, 1, 65536, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    b[n] = 0;
    *len = n;
    return b;
}
