/* hook_table.c — what hooks.def generates: slots, names, type checks, passthrough hooks, the
 * real -> hook map, the lazy init that loads the real driver, and routing: by pointer identity,
 * then (cuGetProcAddress only) by name, version and flags through pfn_versions.def.
 *
 * Init (once, pthread_once, from the first door used): ash_shim_init (options, world, exit
 * report), dlopen(ACCELSHIM_DRIVER_PATH or "libcuda.so.1", RTLD_NOW|RTLD_LOCAL) — never linked —,
 * one real-dlsym per hooked name into its typed slot, then two sorted arrays (real address ->
 * hook, hook address -> hook) searched with bsearch by the doors. Invariant: the tables are
 * immutable once ash_hook_ready is set. Threading: see ash_hook.h.
 * Must not: run from an ELF constructor; link libcuda (dlopen only); write a slot or a map after
 * ash_hook_ready is set; call through a NULL slot (its hook answers CUDA_ERROR_NOT_SUPPORTED);
 * decide policy.
 */
#include "ash_hook.h"
#include "ash_explain.h"

#include "ash_kernels.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_shim.h"
#include "ash_observer.h"
#include "ash_unfired.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

ash_real_t ash_real;
_Atomic int ash_hook_ready;
__thread int ash_hook_depth __attribute__((tls_model("initial-exec")));

const char *const ash_hook_names[ASH_HOOK_COUNT_] = {
#define ASH_HOOK(kind, name, pfn, params, args) [ASH_HOOK_ID_##name] = #name,
#include "hooks.def"
#undef ASH_HOOK
};

/* The PFN typedef each hook implements, by name (the name-routing fallback matches on it). */
static const char *const ash_hook_pfns[ASH_HOOK_COUNT_] = {
#define ASH_HOOK(kind, name, pfn, params, args) [ASH_HOOK_ID_##name] = #pfn,
#include "hooks.def"
#undef ASH_HOOK
};

/* Every versioned PFN typedef of a hooked base name (generated from cudaTypedefs.h). */
typedef struct {
    const char *base;
    int version, kind; /* kind: 0 plain, 1 _ptds, 2 _ptsz */
    const char *pfn;
} ash_pfn_row_t;
static const ash_pfn_row_t ash_pfn_rows[] = {
#define ASH_PFN(base, ver, kind, pfn) {#base, ver, kind, pfn},
#include "pfn_versions.def"
#undef ASH_PFN
};
#define ASH_PFN_ROWS ((int)(sizeof ash_pfn_rows / sizeof ash_pfn_rows[0]))
static _Atomic unsigned char ash_pfn_warned[ASH_PFN_ROWS];
static int ash_route_by_name = 1;

/* Each hook has exactly the type of its PFN: a wrong parameter list fails the build here. */
#define ASH_HOOK(kind, name, pfn, params, args)                                            \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), pfn),                   \
                   "hook " #name " does not have the type " #pfn);
#include "hooks.def"
#undef ASH_HOOK

/* No hooked name may be a macro (cuda.h maps e.g. cuGetProcAddress -> cuGetProcAddress_v2): the
 * expanded spelling must be the written one, or the export would carry another name. */
#define ASH__XSTR(x) #x
#define ASH__STR(x) ASH__XSTR(x)
#define ASH_HOOK(kind, name, pfn, params, args)                                            \
    _Static_assert(sizeof(ASH__STR(name)) == sizeof(#name), #name " is a macro in cuda.h: #undef it in ash_hook.h");
#include "hooks.def"
#undef ASH_HOOK

/* Generated passthrough hooks (kind PASS): init, then tail-call their own real twin. */
#define ASH__GEN_PASS(name, params, args)                                                  \
    ASH_EXPORT CUresult CUDAAPI name params                                                \
    {                                                                                      \
        ash_hook_init();                                                                   \
        ASH_CALL_REAL(name, args);                                                         \
    }
/* the first two arguments of a copy (dst, src), for the step watch */
#define ASH__COPY_ENDS(d, s, ...) (uint64_t)(uintptr_t)(d), (uint64_t)(uintptr_t)(s)
/* kind COPY: the same, behind one predictable branch that traces the call (--trace-launches). */
#define ASH__GEN_COPY(name, params, args)                                                  \
    ASH_EXPORT CUresult CUDAAPI name params                                                \
    {                                                                                      \
        ash_hook_init();                                                                   \
        if (ASH_UNLIKELY(ash_unfired_watch_on)) /* the step watch: host reads */           \
            ash_unfired_copy(#name, ASH__COPY_ENDS args);                                  \
        if (ASH_UNLIKELY(ash_observe_launches_on)) {                                       \
            __typeof__(ash_real.name) ash__real = ash_real.name;                           \
            if (ash__real == NULL)                                                         \
                return ash_hook_missing(#name);                                            \
            uint64_t ash__t0 = ash_observe_now_ns();                                       \
            CUresult ash__r = ash__real args;                                              \
            ash_observe_copy(#name, (size_t)n, ash__t0, (int)ash__r);                      \
            return ash__r;                                                                 \
        }                                                                                  \
        ASH_CALL_REAL(name, args);                                                         \
    }
/* kind MSET: the same, behind predictable branches that tell explain mode and the step watch
 * what it writes. */
#define ASH__GEN_MSET(name, params, args)                                                  \
    ASH_EXPORT CUresult CUDAAPI name params                                                \
    {                                                                                      \
        ash_hook_init();                                                                   \
        if (ASH_UNLIKELY(ash_explain_on))                                                  \
            ash_explain_memset(#name, (uint64_t)dst, (size_t)n * sizeof v);                \
        if (ASH_UNLIKELY(ash_unfired_watch_on)) /* the step watch: a write */              \
            ash_unfired_memset((uint64_t)dst);                                             \
        ASH_CALL_REAL(name, args);                                                         \
    }
#define ASH__GEN_OWN(name, params, args)
#define ASH_HOOK(kind, name, pfn, params, args) ASH__GEN_##kind(name, params, args)
#include "hooks.def"
#undef ASH_HOOK

/* The hooks' own addresses, for "already a hook" and for handing out. */
static void *ash_hook_fn(ash_hook_id_t id)
{
    switch (id) {
#define ASH_HOOK(kind, name, pfn, params, args) case ASH_HOOK_ID_##name: return (void *)&name;
#include "hooks.def"
#undef ASH_HOOK
    default:
        return NULL;
    }
}

typedef struct {
    uintptr_t addr;
    int id;
} ash_hook_map_t;

static ash_hook_map_t ash_by_real[ASH_HOOK_COUNT_];
static int ash_by_real_n;
static ash_hook_map_t ash_by_hook[ASH_HOOK_COUNT_];
static void *ash_hook_addr[ASH_HOOK_COUNT_];
static void *ash_driver;
static pthread_once_t ash_hook_once = PTHREAD_ONCE_INIT;
static __thread int ash_hook_in_init __attribute__((tls_model("initial-exec")));

static int ash_map_cmp(const void *a, const void *b)
{
    const ash_hook_map_t *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->id - y->id;
}

static const ash_hook_map_t *ash_map_find(const ash_hook_map_t *m, int n, uintptr_t addr)
{
    int lo = 0, hi = n; /* first entry with addr >= key */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (m[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < n && m[lo].addr == addr) ? &m[lo] : NULL;
}

static void ash_hook_load_driver(void)
{
    const char *path = ash_opt_str(ASH_OPT_DRIVER_PATH);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *err = dlerror();
        ash_error("intercept", "cannot load the CUDA driver \"%s\": %s; every hooked call will return "
                  "CUDA_ERROR_NOT_SUPPORTED", path, err ? err : "?");
        return;
    }
    if (ash_hook_real_dlsym(h, "accelshim_version") != NULL) {
        ash_error("intercept", "ACCELSHIM_DRIVER_PATH \"%s\" is accelshim itself, not a CUDA driver", path);
        return;
    }
    ash_driver = h;
#define ASH_HOOK(kind, name, pfn, params, args) ash_real.name = (pfn)ash_hook_real_dlsym(h, #name);
#include "hooks.def"
#undef ASH_HOOK
    void *slots[ASH_HOOK_COUNT_] = {
#define ASH_HOOK(kind, name, pfn, params, args) [ASH_HOOK_ID_##name] = (void *)ash_real.name,
#include "hooks.def"
#undef ASH_HOOK
    };
    int missing = 0;
    for (int i = 0; i < ASH_HOOK_COUNT_; i++) {
        if (slots[i] == NULL) {
            missing++;
            ash_debug("intercept", "driver has no %s: its hook answers CUDA_ERROR_NOT_SUPPORTED", ash_hook_names[i]);
            continue;
        }
        ash_by_real[ash_by_real_n].addr = (uintptr_t)slots[i];
        ash_by_real[ash_by_real_n].id = i;
        ash_by_real_n++;
    }
    qsort(ash_by_real, (size_t)ash_by_real_n, sizeof ash_by_real[0], ash_map_cmp);
    ash_info("intercept", "driver \"%s\": %d of %d hooked symbols present", path, ASH_HOOK_COUNT_ - missing,
             ASH_HOOK_COUNT_);
}

static void ash_hook_do_init(void)
{
    ash_hook_in_init = 1;
    ash_hook_depth++;
    ash_shim_init();
    long by_name = 1; /* the options table validated it (a bad value stopped the process) */
    (void)ash_opt_int(ASH_OPT_ROUTE_BY_NAME, &by_name);
    ash_route_by_name = by_name != 0;
    for (int i = 0; i < ASH_HOOK_COUNT_; i++) {
        ash_hook_addr[i] = ash_hook_fn((ash_hook_id_t)i);
        ash_by_hook[i].addr = (uintptr_t)ash_hook_addr[i];
        ash_by_hook[i].id = i;
    }
    qsort(ash_by_hook, ASH_HOOK_COUNT_, sizeof ash_by_hook[0], ash_map_cmp);
    ash_hook_load_driver();
    ash_hook_give_sync_driver();
    ash_kernels_init();
    atomic_store_explicit(&ash_hook_ready, 1, memory_order_release);
    ash_hook_depth--;
    ash_hook_in_init = 0;
}

void ash_hook_init_slow(void)
{
    if (ash_hook_in_init)
        return; /* re-entered from inside init (e.g. the driver's constructor): use what is set */
    pthread_once(&ash_hook_once, ash_hook_do_init);
}

int ash_hook_is_hook(const void *p)
{
    return ash_map_find(ash_by_hook, ASH_HOOK_COUNT_, (uintptr_t)p) != NULL;
}

/* By pointer identity: one of our hooks -> itself; a hooked driver export -> that symbol's hook
 * (aliases: the name asked for wins); anything else -> NULL. */
static void *ash_route_identity(void *p, const char *name)
{
    if (ash_hook_is_hook(p))
        return p;
    const ash_hook_map_t *m = ash_map_find(ash_by_real, ash_by_real_n, (uintptr_t)p);
    if (m == NULL)
        return NULL;
    for (const ash_hook_map_t *a = m; a < ash_by_real + ash_by_real_n && a->addr == m->addr; a++)
        if (name != NULL && strcmp(ash_hook_names[a->id], name) == 0)
            return ash_hook_addr[a->id];
    return ash_hook_addr[m->id];
}

static int ash_is_hooked_name(const char *name)
{
    for (int i = 0; name != NULL && i < ASH_HOOK_COUNT_; i++)
        if (strcmp(ash_hook_names[i], name) == 0)
            return 1;
    return 0;
}

void *ash_hook_route(void *p, const char *name)
{
    if (p == NULL)
        return NULL;
    ash_hook_init();
    void *h = ash_route_identity(p, name);
    if (h != NULL)
        return h;
    if (ash_is_hooked_name(name))
        ASH_WARN_CAPPED("intercept", "the driver resolved %s to %p, which is not the address of "
                        "any exported symbol we hook; left unhooked", name, p);
    return p;
}

/* What the REAL resolver answers for (symbol, version, flags); NULL on any error. */
static void *ash_real_proc(const char *symbol, int version, cuuint64_t flags)
{
    void *q = NULL;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    ash_hook_depth++;
    if (ash_real.cuGetProcAddress_v2 != NULL) {
        CUdriverProcAddressQueryResult st;
        r = ash_real.cuGetProcAddress_v2(symbol, &q, version, flags, &st);
    } else if (ash_real.cuGetProcAddress != NULL) {
        r = ash_real.cuGetProcAddress(symbol, &q, version, flags);
    }
    ash_hook_depth--;
    return r == CUDA_SUCCESS ? q : NULL;
}

/* The fallback for a pointer that is no exported symbol: the PFN typedef the driver answers
 * (symbol, version, flags) with — among the generated rows of that base, the highest version <=
 * the one asked, per-thread (_ptds/_ptsz) when the lookup was per-thread and such a row exists —
 * and the hook whose hooks.def PFN is exactly that typedef. No such hook: NULL (warned once). */
static void *ash_route_name(void *p, const char *symbol, int version, cuuint64_t flags)
{
    int per_thread;
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
        per_thread = 1;
    else if (flags & CU_GET_PROC_ADDRESS_LEGACY_STREAM)
        per_thread = 0;
    else if (ash_real_proc(symbol, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM) == p)
        per_thread = 0; /* DEFAULT: the driver's choice, seen by asking it both ways */
    else if (ash_real_proc(symbol, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) == p)
        per_thread = 1;
    else
        per_thread = -1;
    const ash_pfn_row_t *plain = NULL, *pt = NULL;
    int first = -1;
    for (int i = 0; i < ASH_PFN_ROWS; i++) {
        const ash_pfn_row_t *r = &ash_pfn_rows[i];
        if (strcmp(r->base, symbol) != 0)
            continue;
        if (first < 0)
            first = i;
        if (r->version > version)
            continue;
        const ash_pfn_row_t **slot = r->kind == 0 ? &plain : &pt;
        if (*slot == NULL || (*slot)->version < r->version)
            *slot = r;
    }
    if (first < 0)
        return NULL; /* a base we hook in no version */
    const ash_pfn_row_t *chosen = per_thread == 1 && pt != NULL ? pt : plain;
    if (per_thread >= 0 && chosen != NULL)
        for (int i = 0; i < ASH_HOOK_COUNT_; i++)
            if (strcmp(ash_hook_pfns[i], chosen->pfn) == 0)
                return ash_hook_addr[i];
    int w = chosen != NULL ? (int)(chosen - ash_pfn_rows) : first;
    if (atomic_exchange_explicit(&ash_pfn_warned[w], 1, memory_order_relaxed) == 0) {
        if (per_thread < 0)
            ash_warn("intercept", "%s (version %d, flags %llu): the driver's pointer %p matches neither its "
                     "legacy- nor its per-thread-stream answer; passed through unhooked",
                     symbol, version, (unsigned long long)flags, p);
        else
            ash_warn("intercept", "%s (version %d, flags %llu): the driver's entry point is none of the "
                     "exported symbols we hook and has the type %s, which no hook implements; passed "
                     "through unhooked", symbol, version,
                     (unsigned long long)flags, chosen != NULL ? chosen->pfn : "(none at this version)");
    }
    return NULL;
}

void *ash_hook_route_proc(void *p, const char *symbol, int version, cuuint64_t flags, ash_route_t *route)
{
    *route = ASH_ROUTE_NONE;
    if (p == NULL || symbol == NULL)
        return p;
    ash_hook_init();
    void *h = ash_route_identity(p, symbol);
    if (h != NULL) {
        *route = ASH_ROUTE_IDENTITY;
        return h;
    }
    if (ash_route_by_name && (h = ash_route_name(p, symbol, version, flags)) != NULL) {
        *route = ASH_ROUTE_NAME;
        return h;
    }
    if (!ash_route_by_name) {
        for (int i = 0; i < ASH_PFN_ROWS; i++) {
            if (strcmp(ash_pfn_rows[i].base, symbol) == 0) {
                ASH_WARN_CAPPED("intercept", "%s (version %d, flags %llu): the driver's pointer %p is not an "
                                "exported symbol and ACCELSHIM_ROUTE_BY_NAME=0: left unhooked", symbol, version,
                                (unsigned long long)flags, p);
                break;
            }
        }
    }
    return p;
}

const char *ash_hook_name_of(const void *p)
{
    const ash_hook_map_t *m = ash_map_find(ash_by_hook, ASH_HOOK_COUNT_, (uintptr_t)p);
    return m != NULL ? ash_hook_names[m->id] : NULL;
}

CUresult ash_hook_missing(const char *name)
{
    ASH_WARN_CAPPED("intercept", "%s: the driver does not export it; returning CUDA_ERROR_NOT_SUPPORTED", name);
    return CUDA_ERROR_NOT_SUPPORTED;
}

void *ash_hook_driver_export(const char *name)
{
    return ash_driver != NULL ? ash_hook_real_dlsym(ash_driver, name) : NULL;
}

void *ash_hook_driver_proc(const char *name, int cuda_version)
{
    ash_hook_init();
    void *p = NULL;
    ash_hook_depth++;
    if (ash_real.cuGetProcAddress_v2 != NULL) {
        CUdriverProcAddressQueryResult q;
        if (ash_real.cuGetProcAddress_v2(name, &p, cuda_version, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS)
            p = NULL;
    } else if (ash_real.cuGetProcAddress != NULL) {
        if (ash_real.cuGetProcAddress(name, &p, cuda_version, CU_GET_PROC_ADDRESS_DEFAULT) != CUDA_SUCCESS)
            p = NULL;
    }
    if (p == NULL && ash_driver != NULL)
        p = ash_hook_real_dlsym(ash_driver, name);
    ash_hook_depth--;
    return p;
}
