/* explain.c — explain mode's recorder (ash_explain.h): the images the program loads, parsed once
 * with the PTX reader and its kernel facts; every launch (and memset) with its argument values
 * and, for each 8-byte argument that points into a live allocation (shim/core/alloc.c), that
 * allocation and the offset, resolved at the launch (an allocation freed later stays named).
 * At exit (the report step) reading.c writes the explanation to ACCELSHIM_EXPLAIN.
 * Invariant: at most EXP_MAX_LAUNCHES launches are kept (later ones are counted as dropped).
 * Must not: change a launch, its arguments or its result; issue CUDA work; fail the program (an
 *   image it cannot read or a file it cannot write is named in the log and the file).
 */
#include "ash_explain.h"

#include "ash_alloc.h"
#include "ash_file.h"
#include "ash_image.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_shim.h"
#include "explain_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXP_MAX_LAUNCHES 200000
#define EXP_MAX_ARGS 4096

int ash_explain_on;

static pthread_mutex_t exp_lock = PTHREAD_MUTEX_INITIALIZER;
static exp_state_t S;
static size_t cap_images, cap_kernels, cap_bufs, cap_launches, cap_args;
static char exp_path[ASH_OPT_VALUE_MAX];

#define GROW(arr, n, cap)                                                                  \
    ((size_t)(n) < (cap) ? 1 : exp_grow((void **)&(arr), &(cap), sizeof *(arr), (size_t)(n) + 1))

static int exp_grow(void **arr, size_t *cap, size_t elem, size_t need)
{
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *n = realloc(*arr, c * elem);
    if (!n)
        return 0;
    *arr = n;
    *cap = c;
    return 1;
}

static void exp_exit(void);

void ash_explain_init(void)
{
    const char *p = ash_opt_str(ASH_OPT_EXPLAIN);
    if (p == NULL || *p == 0)
        return;
    snprintf(exp_path, sizeof exp_path, "%s", p);
    ash_explain_on = 1;
    ash_shim_at_exit(ASH_EXIT_STEP_REPORT, exp_exit);
    ash_info("explain", "explain mode: the program's kernels and launches go to %s at exit", exp_path);
}

void ash_explain_image(const char *api, const void *image, const char *path)
{
    if (!ash_explain_on)
        return;
    char *owned = NULL;
    size_t len = 0;
    char what[256];
    if (image == NULL && path != NULL) {
        owned = ash_image_read_file(path, &len);
        image = owned;
        if (!owned)
            snprintf(what, sizeof what, "file %s could not be read: %s", path, strerror(errno));
    }
    char *ptx = NULL;
    if (image)
        ash_image_ptx(image, len, &ptx, what, sizeof what);
    exp_image_t im = {.api = strdup(api), .what = NULL};
    char name[64];
    pthread_mutex_lock(&exp_lock);
    snprintf(name, sizeof name, "image%d", S.nimages);
    pthread_mutex_unlock(&exp_lock);
    if (ptx) {
        char err[512];
        im.has_ptx = 1;
        if (ash_ptx_parse(ptx, name, &im.m, err, sizeof err) == 0) {
            if (ash_ptx_facts_compute(&im.m, &im.fx, err, sizeof err) == 0)
                im.parsed = 1;
            else
                ash_ptx_free(&im.m);
        }
        if (!im.parsed) {
            im.error = strdup(err);
            ash_warn("explain", "%s: %s: its PTX does not parse: %s", api, what, err);
        }
        free(ptx);
    }
    if (path) {
        char w2[512];
        snprintf(w2, sizeof w2, "%s (%s)", what, path);
        im.what = strdup(w2);
    } else {
        im.what = strdup(what);
    }
    free(owned);
    pthread_mutex_lock(&exp_lock);
    if (GROW(S.images, S.nimages, cap_images))
        S.images[S.nimages++] = im;
    pthread_mutex_unlock(&exp_lock);
}

/* the kernel of this name (caller holds the lock); -1 without memory */
static int exp_kernel(const char *name, const char *demangled, int nparams, const uint32_t *offs,
                      const uint32_t *sizes)
{
    for (int i = S.nkernels - 1; i >= 0; i--)
        if (S.kernels[i].name == name || strcmp(S.kernels[i].name, name) == 0)
            return i;
    if (!GROW(S.kernels, S.nkernels, cap_kernels))
        return -1;
    exp_kernel_t k = {.name = strdup(name), .demangled = strdup(demangled ? demangled : name), .image = -1,
                      .func = -1, .nparams = -1};
    if (!k.name || !k.demangled)
        return -1;
    for (int im = 0; im < S.nimages && k.image < 0; im++) {
        if (!S.images[im].parsed)
            continue;
        int f = ash_ptx_find_func(&S.images[im].m, name);
        if (f >= 0 && S.images[im].m.funcs[f].is_entry && S.images[im].m.funcs[f].defined) {
            k.image = im;
            k.func = f;
        }
    }
    if (k.image >= 0) {
        const ash_ptx_func *fn = &S.images[k.image].m.funcs[k.func];
        k.nparams = fn->nparams;
        k.offs = calloc((size_t)(fn->nparams ? fn->nparams : 1), sizeof *k.offs);
        k.sizes = calloc((size_t)(fn->nparams ? fn->nparams : 1), sizeof *k.sizes);
        if (!k.offs || !k.sizes)
            return -1;
        for (int i = 0; i < fn->nparams; i++) {
            k.offs[i] = (uint32_t)fn->params[i].offset;
            k.sizes[i] = (uint32_t)fn->params[i].size;
        }
    } else if (nparams > 0) {
        k.nparams = nparams;
        k.offs = malloc((size_t)nparams * sizeof *k.offs);
        k.sizes = malloc((size_t)nparams * sizeof *k.sizes);
        if (!k.offs || !k.sizes)
            return -1;
        memcpy(k.offs, offs, (size_t)nparams * sizeof *k.offs);
        memcpy(k.sizes, sizes, (size_t)nparams * sizeof *k.sizes);
    }
    S.kernels[S.nkernels] = k;
    return S.nkernels++;
}

/* the buffer id of the live allocation holding ptr, or -1 (caller holds the lock) */
static int exp_buf(uint64_t ptr, uint64_t *off)
{
    ash_alloc_entry_t e;
    if (ptr == 0 || ash_alloc_find(ptr, &e) != ASH_ALLOC_OK)
        return -1;
    *off = ptr - e.base;
    for (int i = S.nbufs - 1; i >= 0; i--)
        if (S.bufs[i].base == e.base && S.bufs[i].size == e.size)
            return i;
    if (!GROW(S.bufs, S.nbufs, cap_bufs))
        return -1;
    S.bufs[S.nbufs] = (exp_buf_t){e.base, e.size};
    return S.nbufs++;
}

static int exp_add_launch(int kernel, int nargs)
{
    if (S.nlaunches >= EXP_MAX_LAUNCHES) {
        S.dropped++;
        return 0;
    }
    if (!GROW(S.launches, S.nlaunches, cap_launches) || !GROW(S.args, S.nargs + (size_t)nargs, cap_args)) {
        S.dropped++;
        return 0;
    }
    S.launches[S.nlaunches++] = (exp_launch_t){kernel, nargs, S.nargs};
    return 1;
}

/* the parameter block of a launch given by `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/_SIZE) */
static const unsigned char *exp_extra_block(void **extra, size_t *size)
{
    const unsigned char *buf = NULL;
    *size = 0;
    for (int i = 0; extra && extra[i] != (void *)0 && i < 64; i += 2) {
        if (extra[i] == (void *)1)
            buf = extra[i + 1];
        else if (extra[i] == (void *)2 && extra[i + 1])
            memcpy(size, extra[i + 1], sizeof *size);
        else if (extra[i] != (void *)1 && extra[i] != (void *)2)
            break;
    }
    return buf;
}

void ash_explain_launch(const char *name, const char *demangled, int nparams, const uint32_t *offsets,
                        const uint32_t *sizes, void **params, void **extra)
{
    if (!ash_explain_on || name == NULL)
        return;
    pthread_mutex_lock(&exp_lock);
    int k = exp_kernel(name, demangled, nparams, offsets, sizes);
    if (k < 0) {
        S.dropped++;
        goto out;
    }
    const exp_kernel_t *kk = &S.kernels[k];
    int n = kk->nparams > 0 ? (kk->nparams < EXP_MAX_ARGS ? kk->nparams : EXP_MAX_ARGS) : 0;
    if (!exp_add_launch(k, n))
        goto out;
    size_t blen = 0;
    const unsigned char *block = params ? NULL : exp_extra_block(extra, &blen);
    for (int i = 0; i < n; i++) {
        exp_arg_t a = {.buf = -1};
        uint32_t sz = kk->sizes[i] < 8 ? kk->sizes[i] : 8;
        if (params && params[i])
            memcpy(&a.value, params[i], sz);
        else if (block && kk->offs[i] + sz <= blen)
            memcpy(&a.value, block + kk->offs[i], sz);
        if (kk->sizes[i] == 8)
            a.buf = exp_buf(a.value, &a.off);
        S.args[S.nargs++] = a;
    }
out:
    pthread_mutex_unlock(&exp_lock);
}

void ash_explain_memset(const char *api, uint64_t ptr, size_t bytes)
{
    (void)api;
    if (!ash_explain_on)
        return;
    pthread_mutex_lock(&exp_lock);
    if (exp_add_launch(EXP_MEMSET, 1)) {
        exp_arg_t a = {.value = bytes, .buf = -1};
        a.buf = exp_buf(ptr, &a.off);
        S.args[S.nargs++] = a;
    }
    pthread_mutex_unlock(&exp_lock);
}

static void exp_exit(void)
{
    pthread_mutex_lock(&exp_lock);
    int fd = ash_open_output(exp_path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        ash_error("explain", "cannot create %s: %s (it must not exist yet)", exp_path, strerror(errno));
        if (fd >= 0)
            close(fd);
    } else {
        exp_write(&S, f);
        if (fclose(f) != 0)
            ash_error("explain", "writing %s failed: %s", exp_path, strerror(errno));
    }
    pthread_mutex_unlock(&exp_lock);
}
