/* kernels.c — the kernel cache (see ash_kernels.h): learn a handle on its first launch, hand the
 * sync engine a stable ash_kernel_info_t, and report launch counts at exit.
 *
 * Learning (under ash_kernels_lock, once per handle): the name from cuFuncGetName /
 * cuKernelGetName when the driver has them (12.3+; resolved through the REAL cuGetProcAddress),
 * else the name recorded by the cuModuleGetFunction / cuLibraryGetKernel / cuKernelGetFunction
 * hooks; parameter offsets and sizes from cuFuncGetParamInfo / cuKernelGetParamInfo (12.4+), else
 * unknown (nparams -1); the demangled name from __cxa_demangle in libstdc++.so.6, dlopen'ed on the
 * first C++ name (absent: demangled = mangled); the rules from the sync engine's matcher. At debug
 * level each learned kernel is logged once: "kernel NAME (DEMANGLED) params=[8,8,4]".
 * Must not: match policy rules itself (it asks the sync engine's matcher, once per kernel); change
 * an ash_kernel_info_t once published; link libstdc++ (dlopen'ed on the first C++ name); call the
 * driver's name and parameter queries through our hooks.
 */
#include "ash_kernels.h"

#include "accelshim.h"
#include "ash_explain.h"
#include "ash_hook.h"
#include "ash_log.h"
#include "ash_observer.h"
#include "ash_policy.h"
#include "ash_shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ASH_KERNELS_INITIAL_BITS 10
#define ASH_KERNELS_MAX_PARAMS 512

/* the first table is static: lookups before any insert need no NULL check and no allocation */
static struct {
    ash_ktable_t t;
    _Atomic(ash_kentry_t *) slots[1u << ASH_KERNELS_INITIAL_BITS];
} ash_ktable0 = {{64 - ASH_KERNELS_INITIAL_BITS, (1u << ASH_KERNELS_INITIAL_BITS) - 1}, {NULL}};

_Atomic(ash_ktable_t *) ash_ktable = &ash_ktable0.t;

static pthread_mutex_t ash_kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t ash_kernels_used; /* entries in the current table; under the lock */
static ash_kernel_match_fn ash_kernels_matcher;

/* driver entry points we call but do not hook; resolved on the first learn */
static int ash_kernels_resolved;
static PFN_cuFuncGetName_v12030 ash_fn_func_name;
static PFN_cuKernelGetName_v12030 ash_fn_kernel_name;
static PFN_cuFuncGetParamInfo_v12040 ash_fn_func_param;
static PFN_cuKernelGetParamInfo_v12040 ash_fn_kernel_param;

static int ash_demangle_tried;

static void ash_kernels_report(void);

void ash_kernels_init(void)
{
    ash_kernels_matcher = ash_sync_matcher();
    ash_shim_on_exit(ash_kernels_report);
}

/* ---- table (caller holds the lock) ---- */

static void ash_ktable_put(ash_ktable_t *t, ash_kentry_t *e)
{
    size_t i = ash_kernel_hash(e->info.handle, t->shift);
    for (;;) {
        ash_kentry_t *cur = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (cur == NULL || cur->info.handle == e->info.handle) {
            atomic_store_explicit(&t->slots[i], e, memory_order_release);
            return;
        }
        i = (i + 1) & t->mask;
    }
}

/* Insert or replace e; grows the table at half load. 0 or -1 (no memory: e not published). */
static int ash_kernels_publish(ash_kentry_t *e, int replacing)
{
    ash_ktable_t *t = atomic_load_explicit(&ash_ktable, memory_order_relaxed);
    if (!replacing && (ash_kernels_used + 1) * 2 > t->mask + 1) {
        size_t cap = (t->mask + 1) * 2;
        ash_ktable_t *n = calloc(1, sizeof *n + cap * sizeof n->slots[0]);
        if (n == NULL)
            return -1;
        n->shift = t->shift - 1;
        n->mask = cap - 1;
        for (size_t i = 0; i <= t->mask; i++) {
            ash_kentry_t *old = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
            if (old != NULL)
                ash_ktable_put(n, old);
        }
        atomic_store_explicit(&ash_ktable, n, memory_order_release); /* the old table is kept */
        t = n;
    }
    ash_ktable_put(t, e);
    if (!replacing)
        ash_kernels_used++;
    return 0;
}

static char *ash_strdup_or(const char *s, const char *fallback)
{
    char *d = strdup(s ? s : fallback);
    return d;
}

void ash_kernel_note(const void *h, const char *name, int is_kernel)
{
    if (h == NULL || name == NULL)
        return;
    pthread_mutex_lock(&ash_kernels_lock);
    ash_kentry_t *old = ash_kernel_lookup(h);
    if (old != NULL && old->info.is_kernel == is_kernel && strcmp(old->info.name, name) == 0)
        goto out; /* asked again for the same name: nothing new */
    ash_kentry_t *e = calloc(1, sizeof *e);
    char *copy = strdup(name);
    if (e == NULL || copy == NULL) {
        free(e);
        free(copy);
        goto out;
    }
    e->info.handle = h;
    e->info.name = copy;
    e->info.demangled = copy;
    e->info.is_kernel = is_kernel;
    e->info.nparams = -1;
    e->slow = 1; /* learned on its first launch */
    if (ash_kernels_publish(e, old != NULL) != 0) {
        free(copy);
        free(e);
    }
out:
    pthread_mutex_unlock(&ash_kernels_lock);
}

const char *ash_kernel_name(const void *h)
{
    ash_kentry_t *e = ash_kernel_lookup(h);
    return e ? e->info.name : NULL;
}

/* ---- learning (caller holds the lock) ---- */

static void ash_kernels_resolve(void)
{
    if (ash_kernels_resolved)
        return;
    ash_kernels_resolved = 1;
    ash_fn_func_name = (PFN_cuFuncGetName_v12030)ash_hook_driver_proc("cuFuncGetName", 12030);
    ash_fn_kernel_name = (PFN_cuKernelGetName_v12030)ash_hook_driver_proc("cuKernelGetName", 12030);
    ash_fn_func_param = (PFN_cuFuncGetParamInfo_v12040)ash_hook_driver_proc("cuFuncGetParamInfo", 12040);
    ash_fn_kernel_param = (PFN_cuKernelGetParamInfo_v12040)ash_hook_driver_proc("cuKernelGetParamInfo", 12040);
    ash_debug("kernels", "driver name/param queries: cuFuncGetName %s, cuKernelGetName %s, cuFuncGetParamInfo %s, "
              "cuKernelGetParamInfo %s", ash_fn_func_name ? "yes" : "no", ash_fn_kernel_name ? "yes" : "no",
              ash_fn_func_param ? "yes" : "no", ash_fn_kernel_param ? "yes" : "no");
}

static const char *ash_kernels_demangle(const char *name, char **owned)
{
    int missing = 0;
    *owned = ash_policy_demangle(name, ash_hook_real_dlsym, &missing); /* as accelshim-policy match */
    if (missing && !ash_demangle_tried) {
        ash_demangle_tried = 1;
        ash_info("kernels", "no __cxa_demangle (libstdc++.so.6): C++ kernel names stay mangled");
    }
    return *owned ? *owned : name;
}

/* Parameter layout: count, offsets, sizes. nparams -1 when the driver cannot say. */
static int ash_kernels_params(const void *h, int is_kernel, uint32_t **offs, uint32_t **sizes)
{
    *offs = *sizes = NULL;
    if ((is_kernel ? (void *)ash_fn_kernel_param : (void *)ash_fn_func_param) == NULL)
        return -1;
    uint32_t o[ASH_KERNELS_MAX_PARAMS], s[ASH_KERNELS_MAX_PARAMS];
    int n = 0;
    for (; n < ASH_KERNELS_MAX_PARAMS; n++) {
        size_t off = 0, sz = 0;
        CUresult r = is_kernel ? ash_fn_kernel_param((CUkernel)h, (size_t)n, &off, &sz)
                               : ash_fn_func_param((CUfunction)h, (size_t)n, &off, &sz);
        if (r == CUDA_ERROR_INVALID_VALUE)
            break; /* past the last parameter */
        if (r != CUDA_SUCCESS)
            return -1;
        o[n] = (uint32_t)off;
        s[n] = (uint32_t)sz;
    }
    if (n == 0)
        return 0;
    *offs = malloc((size_t)n * sizeof(uint32_t));
    *sizes = malloc((size_t)n * sizeof(uint32_t));
    if (*offs == NULL || *sizes == NULL) {
        free(*offs);
        free(*sizes);
        *offs = *sizes = NULL;
        return -1;
    }
    memcpy(*offs, o, (size_t)n * sizeof(uint32_t));
    memcpy(*sizes, s, (size_t)n * sizeof(uint32_t));
    return n;
}

static void ash_kernels_log(const ash_kernel_info_t *k)
{
    char sizes[512];
    size_t used = 0;
    sizes[0] = '\0';
    for (int i = 0; i < k->nparams && used + 16 < sizeof sizes; i++)
        used += (size_t)snprintf(sizes + used, sizeof sizes - used, "%s%u", i ? "," : "", k->param_sizes[i]);
    if (k->demangled != k->name && strcmp(k->demangled, k->name) != 0)
        ash_debug("kernels", "kernel %s (%s) params=%s%s%s%s", k->name, k->demangled, k->nparams < 0 ? "unknown" : "[",
                  sizes, k->nparams < 0 ? "" : "]", k->rules ? " matched" : "");
    else
        ash_debug("kernels", "kernel %s params=%s%s%s%s", k->name, k->nparams < 0 ? "unknown" : "[", sizes,
                  k->nparams < 0 ? "" : "]", k->rules ? " matched" : "");
}

/* Another learned handle with e's name (the same kernel in another module or context)? Caller
 * holds the lock; linear, but only once per handle. */
static int ash_kernels_name_seen(const ash_kentry_t *e)
{
    ash_ktable_t *t = atomic_load_explicit(&ash_ktable, memory_order_relaxed);
    for (size_t i = 0; i <= t->mask; i++) {
        ash_kentry_t *o = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (o != NULL && o != e && o->learned && strcmp(o->info.name, e->info.name) == 0)
            return 1;
    }
    return 0;
}

ash_kentry_t *ash_kernel_learn(const void *h)
{
    pthread_mutex_lock(&ash_kernels_lock);
    ash_kentry_t *old = ash_kernel_lookup(h);
    ash_kentry_t *e = NULL;
    if (old != NULL && old->learned) {
        e = old;
        goto out;
    }
    ash_kernels_resolve();
    int is_kernel = old ? old->info.is_kernel : -1; /* -1: nobody recorded this handle */
    const char *name = NULL;
    ash_hook_depth++; /* the driver's queries may resolve symbols: pass them through */
    if (is_kernel != 1 && ash_fn_func_name && ash_fn_func_name(&name, (CUfunction)h) == CUDA_SUCCESS && name)
        is_kernel = 0;
    else if (is_kernel != 0 && ash_fn_kernel_name && ash_fn_kernel_name(&name, (CUkernel)h) == CUDA_SUCCESS && name)
        is_kernel = 1;
    else
        name = old ? old->info.name : NULL;
    if (is_kernel < 0)
        is_kernel = 0;
    uint32_t *offs = NULL, *sizes = NULL;
    int nparams = ash_kernels_params(h, is_kernel, &offs, &sizes);
    ash_hook_depth--;

    e = calloc(1, sizeof *e);
    char *mangled = ash_strdup_or(name, "?");
    if (e == NULL || mangled == NULL) {
        free(e);
        free(mangled);
        free(offs);
        free(sizes);
        e = old; /* may be NULL: the launch goes on uncounted */
        goto out;
    }
    char *dem = NULL;
    const char *d = ash_kernels_demangle(mangled, &dem);
    e->info.handle = h;
    e->info.name = mangled;
    e->info.demangled = d;
    e->info.is_kernel = is_kernel;
    e->info.nparams = nparams;
    e->info.param_offsets = offs;
    e->info.param_sizes = sizes;
    e->info.rules = ash_kernels_matcher ? ash_kernels_matcher(&e->info) : NULL;
    e->learned = 1;
    e->slow = e->info.rules != NULL || ash_observe_launches_on || ash_explain_on; /* observed / explained: slow path */
    if (old != NULL)
        atomic_store_explicit(&e->launches, atomic_load_explicit(&old->launches, memory_order_relaxed),
                              memory_order_relaxed);
    if (ash_kernels_publish(e, old != NULL) != 0) {
        free(dem);
        free(mangled);
        free(offs);
        free(sizes);
        free(e);
        e = old;
        goto out;
    }
    if (ash_log_enabled(ASH_LOG_DEBUG) && !ash_kernels_name_seen(e))
        ash_kernels_log(&e->info);
out:
    pthread_mutex_unlock(&ash_kernels_lock);
    return e;
}

/* ---- debug API (declared in include/accelshim.h) ---- */

ASH_EXPORT int accelshim_kernel_info(const void *handle, const char **name, const char **demangled, int *nparams,
                                     int *is_kernel, unsigned long long *launches)
{
    ash_kentry_t *e = ash_kernel_lookup(handle);
    if (e == NULL || !e->learned)
        return -1;
    if (name)
        *name = e->info.name;
    if (demangled)
        *demangled = e->info.demangled;
    if (nparams)
        *nparams = e->info.nparams;
    if (is_kernel)
        *is_kernel = e->info.is_kernel;
    if (launches)
        *launches = atomic_load_explicit(&e->launches, memory_order_relaxed);
    return 0;
}

/* ---- exit report ---- */

typedef struct {
    const char *name; /* demangled */
    unsigned long long launches;
} ash_kernels_row_t;

static int ash_kernels_by_name(const void *a, const void *b)
{
    return strcmp(((const ash_kernels_row_t *)a)->name, ((const ash_kernels_row_t *)b)->name);
}

static int ash_kernels_by_count(const void *a, const void *b)
{
    unsigned long long x = ((const ash_kernels_row_t *)a)->launches, y = ((const ash_kernels_row_t *)b)->launches;
    return x < y ? 1 : x > y ? -1 : ash_kernels_by_name(a, b);
}

/* At exit (info level): total launches, and the 20 busiest kernels, handles of one name merged. */
static void ash_kernels_report(void)
{
    pthread_mutex_lock(&ash_kernels_lock);
    ash_ktable_t *t = atomic_load_explicit(&ash_ktable, memory_order_relaxed);
    ash_kernels_row_t *rows = calloc(t->mask + 1, sizeof *rows);
    size_t n = 0;
    unsigned long long total = 0;
    for (size_t i = 0; i <= t->mask; i++) {
        ash_kentry_t *e = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (e == NULL || !e->learned)
            continue;
        unsigned long long c = atomic_load_explicit(&e->launches, memory_order_relaxed);
        total += c;
        if (rows != NULL)
            rows[n++] = (ash_kernels_row_t){e->info.demangled, c};
    }
    size_t distinct = 0;
    if (rows != NULL && n > 0) {
        qsort(rows, n, sizeof *rows, ash_kernels_by_name);
        for (size_t i = 0; i < n; i++) {
            if (distinct > 0 && strcmp(rows[distinct - 1].name, rows[i].name) == 0)
                rows[distinct - 1].launches += rows[i].launches;
            else
                rows[distinct++] = rows[i];
        }
        qsort(rows, distinct, sizeof *rows, ash_kernels_by_count);
    }
    ash_info("report", "%llu kernel launches through the shim, %zu distinct kernels", total, distinct);
    for (size_t i = 0; i < distinct && i < 20; i++)
        ash_info("report", "  %10llu  %s", rows[i].launches, rows[i].name);
    free(rows);
    pthread_mutex_unlock(&ash_kernels_lock);
}
