/* stepfacts.c — the kernel facts the step watch needs (ash_stepfacts.h): each image loaded while
 * the watch is on is read for its PTX (shim/core/image.c), parsed and analysed once
 * (shim/ptx/: ash_ptx_parse, ash_ptx_facts_compute); a kernel's record (its parameter layout and,
 * per parameter, read / written) is made at its first lookup and kept.
 * Invariant: a record says READ or WRITE only where the facts do (atomic counts as a write, as
 * the facts count it); a kernel of no readable image, or one that writes through an address its
 * facts do not follow (untracked_write: a table of pointers), has no record (the watch then has
 * no evidence). Threading: one mutex for the image list and the records. Callers: unfired.c.
 * Must not: issue CUDA work; fail the program (an unreadable image is a debug line); change an
 * image; be called when the step watch is off (the hooks test ash_unfired_watch_on).
 */
#include "ash_stepfacts.h"

#include "ash_image.h"
#include "ash_log.h"
#include "ash_ptx.h"
#include "ash_ptx_facts.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SF_MAX_IMAGES 256
#define SF_MAX_KERNELS 1024

typedef struct {
    ash_ptx_module m;
    ash_ptx_facts fx;
} sf_image_t;

typedef struct {
    const char *name; /* the module's own copy */
    ash_stepfacts_kernel_t k;
} sf_kernel_t;

static struct {
    pthread_mutex_t lock;
    sf_image_t *img[SF_MAX_IMAGES];
    int nimg;
    sf_kernel_t kern[SF_MAX_KERNELS];
    int nkern;
} SF = {.lock = PTHREAD_MUTEX_INITIALIZER};

void ash_stepfacts_image(const char *api, const void *image, const char *path)
{
    char what[256] = "no image", err[512];
    char *owned = NULL, *ptx = NULL;
    size_t len = 0;
    if (image == NULL && path != NULL) {
        image = owned = ash_image_read_file(path, &len);
        if (!owned)
            snprintf(what, sizeof what, "file %s could not be read: %s", path, strerror(errno));
    }
    if (image)
        ash_image_ptx(image, len, &ptx, what, sizeof what);
    free(owned);
    if (!ptx) {
        ash_debug("sync", "step watch: %s: %s: no kernel facts from it", api, what);
        return;
    }
    sf_image_t *im = calloc(1, sizeof *im);
    if (!im) {
        free(ptx);
        return;
    }
    int ok = ash_ptx_parse(ptx, "image", &im->m, err, sizeof err) == 0;
    free(ptx);
    if (ok && ash_ptx_facts_compute(&im->m, &im->fx, err, sizeof err) != 0) {
        ash_ptx_free(&im->m);
        ok = 0;
    }
    if (!ok) {
        ash_debug("sync", "step watch: %s: %s: its PTX does not parse (%s): no kernel facts from it",
                  api, what, err);
        free(im);
        return;
    }
    pthread_mutex_lock(&SF.lock);
    if (SF.nimg < SF_MAX_IMAGES) {
        SF.img[SF.nimg++] = im;
        im = NULL;
    }
    pthread_mutex_unlock(&SF.lock);
    if (im) { /* more images than kept: their kernels have no facts */
        ash_ptx_facts_free(&im->fx);
        ash_ptx_free(&im->m);
        free(im);
    }
}

/* A record for function f of image im (lock held); NULL without memory, or when the function
 * writes where its facts cannot say (untracked_write). */
static const ash_stepfacts_kernel_t *sf_make(const sf_image_t *im, int f)
{
    if (SF.nkern >= SF_MAX_KERNELS)
        return NULL;
    const ash_ptx_func *fn = &im->m.funcs[f];
    const ash_ptx_ffacts *ff = &im->fx.funcs[f];
    if (ff->untracked_write || ff->nparams != fn->nparams) /* it writes where its facts cannot say */
        return NULL;
    size_t n = fn->nparams > 0 ? (size_t)fn->nparams : 1;
    uint32_t *offs = calloc(n, sizeof *offs), *sizes = calloc(n, sizeof *sizes);
    unsigned char *acc = calloc(n, 1);
    if (!offs || !sizes || !acc) {
        free(offs);
        free(sizes);
        free(acc);
        return NULL;
    }
    for (int i = 0; i < fn->nparams; i++) {
        offs[i] = (uint32_t)fn->params[i].offset;
        sizes[i] = (uint32_t)fn->params[i].size;
        const ash_ptx_pfact *p = &ff->params[i];
        if (p->is_ptr)
            acc[i] = (unsigned char)((p->read ? ASH_SF_READ : 0u) | (p->written || p->atomic ? ASH_SF_WRITE : 0u));
    }
    sf_kernel_t *k = &SF.kern[SF.nkern++];
    k->name = fn->name;
    k->k = (ash_stepfacts_kernel_t){.nparams = fn->nparams, .offs = offs, .sizes = sizes, .acc = acc};
    return &k->k;
}

const ash_stepfacts_kernel_t *ash_stepfacts_find(const char *name)
{
    const ash_stepfacts_kernel_t *r = NULL;
    if (!name)
        return NULL;
    pthread_mutex_lock(&SF.lock);
    for (int i = 0; i < SF.nkern && !r; i++)
        if (!strcmp(SF.kern[i].name, name))
            r = &SF.kern[i].k;
    for (int i = SF.nimg - 1; i >= 0 && !r; i--) {
        int f = ash_ptx_find_func(&SF.img[i]->m, name);
        if (f >= 0 && SF.img[i]->m.funcs[f].is_entry && SF.img[i]->m.funcs[f].defined)
            r = sf_make(SF.img[i], f);
    }
    pthread_mutex_unlock(&SF.lock);
    return r;
}
