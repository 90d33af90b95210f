/* ash_hook.h — private to intercept/: the hook table generated from hooks.def, lazy init, routing.
 *
 * Folder intercept/ owns: the CUDA boundary: real driver, hook list, `dlsym`/`cuGetProcAddress`
 * routing, kernel cache; fills the one real-driver table (`intercept/coll_driver.c`)
 *
 * Owns: the typed real-pointer slots (ash_real.<exported name>, PFN types from cudaTypedefs.h),
 * the prototypes of every hook, the real -> hook map used by the resolver doors, and the lazy
 * init (pthread_once, from whichever door is used first; never an ELF constructor).
 * Invariant: a slot is written once, inside init, before ash_hook_ready is released; a NULL
 * slot (the driver lacks the symbol) makes its hook answer CUDA_ERROR_NOT_SUPPORTED.
 * Threading: hooks call ash_hook_init() (one acquire load once ready) before reading a slot.
 * A thread inside init, or inside a resolver door (ash_hook_depth > 0), passes straight through.
 */
#ifndef ASH_HOOK_H
#define ASH_HOOK_H

#include <cuda.h>
#include <cudaTypedefs.h>
#if !defined(__CUDA_API_VERSION_INTERNAL)
/* cudaTypedefs.h declares the 7000 primary-context variants (the exported unversioned symbols,
 * which static cudart asks for at 7000) only for the driver's own build; same text as there. */
typedef CUresult (CUDAAPI *PFN_cuDevicePrimaryCtxRelease_v7000)(CUdevice_v1 dev);
typedef CUresult (CUDAAPI *PFN_cuDevicePrimaryCtxReset_v7000)(CUdevice_v1 dev);
typedef CUresult (CUDAAPI *PFN_cuDevicePrimaryCtxSetFlags_v7000)(CUdevice_v1 dev, unsigned int flags);
#endif
#include <stdatomic.h>

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "intercept/ must see the exported names: do not build it with CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif
/* cuda.h maps cuGetProcAddress to cuGetProcAddress_v2 (as it maps cuMemAlloc to cuMemAlloc_v2).
 * We export BOTH driver symbols, the legacy 4-argument "cuGetProcAddress" and the 5-argument
 * "cuGetProcAddress_v2", so the macro must go: every other name in hooks.def is spelled as the
 * exported symbol already, and is not a macro in cuda.h without PER_THREAD_DEFAULT_STREAM. */
#undef cuGetProcAddress
#undef cuDeviceGetUuid /* cuda.h: -> cuDeviceGetUuid_v2; both exports are hooked, each by its name */
#undef cuDevicePrimaryCtxRelease  /* cuda.h: -> _v2; static cudart asks for the 7000 ones: both hooked */
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxSetFlags
#undef cuGraphAddKernelNode /* cuda.h: -> _v2; the legacy exports are hooked too, each by its name */
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
#undef cuGraphAddNode /* cuda.h: -> cuGraphAddNode_v2 (edge data); the 12.2 export is hooked too */

#define ASH_EXPORT __attribute__((visibility("default")))
#define ASH_LIKELY(x) __builtin_expect(!!(x), 1)
#define ASH_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The real driver's entry points, one typed slot per hooked symbol. */
typedef struct {
#define ASH_HOOK(kind, name, pfn, params, args) pfn name;
#include "hooks.def"
#undef ASH_HOOK
} ash_real_t;
extern ash_real_t ash_real;

/* ASH_HOOK_ID_<name>: index of each hook in the generated tables. */
typedef enum {
#define ASH_HOOK(kind, name, pfn, params, args) ASH_HOOK_ID_##name,
#include "hooks.def"
#undef ASH_HOOK
    ASH_HOOK_COUNT_
} ash_hook_id_t;

/* Prototypes of the exported hooks (the definitions are checked against their PFN types). */
#define ASH_HOOK(kind, name, pfn, params, args) ASH_EXPORT CUresult CUDAAPI name params;
#include "hooks.def"
#undef ASH_HOOK

extern const char *const ash_hook_names[ASH_HOOK_COUNT_];

/* ---- lazy init ---- */
extern _Atomic int ash_hook_ready;
void ash_hook_init_slow(void);
static inline void ash_hook_init(void)
{
    if (ASH_UNLIKELY(!atomic_load_explicit(&ash_hook_ready, memory_order_acquire)))
        ash_hook_init_slow();
}

/* Thread-local depth: > 0 while this thread is inside init or inside a resolver door; nested
 * dlsym / cuGetProcAddress calls then pass straight through to the real resolver. */
extern __thread int ash_hook_depth __attribute__((tls_model("initial-exec")));

/* ---- routing (doors.c and hook_table.c) ---- */
static inline int ash_hook_is_cu_name(const char *s)
{
    return s != NULL && s[0] == 'c' && s[1] == 'u' && s[2] >= 'A' && s[2] <= 'Z';
}
/* Map a pointer returned by a real resolver for `name`: one of the driver's hooked exports ->
 * that symbol's hook; one of our hooks -> itself; anything else (NULL included) -> unchanged. */
void *ash_hook_route(void *p, const char *name);
/* 1 if p is one of our exported hooks. */
int ash_hook_is_hook(const void *p);
/* The exported name of hook p, or NULL when p is not one of our hooks. */
const char *ash_hook_name_of(const void *p);
/* How a cuGetProcAddress answer was routed: not at all, by pointer identity, or by name. */
typedef enum { ASH_ROUTE_NONE = 0, ASH_ROUTE_IDENTITY, ASH_ROUTE_NAME } ash_route_t;
/* Map the real resolver's answer p to (symbol, version, flags): by identity as ash_hook_route;
 * else (unless ACCELSHIM_ROUTE_BY_NAME=0) to the hook implementing exactly the PFN typedef the
 * driver answers that request with (pfn_versions.def); else p unchanged. */
void *ash_hook_route_proc(void *p, const char *symbol, int version, cuuint64_t flags, ash_route_t *route);

/* The real dlsym (dlvsym(RTLD_NEXT, "dlsym", GLIBC_2.34 / 2.2.5 / 2.17)); NULL if not found. */
void *ash_hook_real_dlsym(void *handle, const char *name);
/* A driver entry point we call but do not hook (cuFuncGetName...), through the REAL
 * cuGetProcAddress_v2 (then legacy cuGetProcAddress, then dlsym on the driver); NULL if absent. */
void *ash_hook_driver_proc(const char *name, int cuda_version);
/* The real driver's exported symbol NAME (exact name, real dlsym); NULL when absent. Init only. */
void *ash_hook_driver_export(const char *name);
/* Fill the shim's one real-driver table (shim/core/ash_driver.h) from the real driver's exports
 * (intercept/coll_driver.c). Init only. */
void ash_hook_give_sync_driver(void);

/* The device handle to give the driver for one the program passed (hooks_device.c): the literal
 * ordinal 0 -> the rank's device; its handle -> itself; anything else unchanged, with a warning. */
CUdevice ash_hook_device_map(CUdevice dev);

/* A hook whose real symbol is missing: warn (capped) and answer CUDA_ERROR_NOT_SUPPORTED. */
CUresult ash_hook_missing(const char *name);

/* Call the real `name` with `args`, or answer NOT_SUPPORTED when the driver lacks it. */
#define ASH_CALL_REAL(name, args)                                                          \
    do {                                                                                   \
        __typeof__(ash_real.name) ash__real = ash_real.name;                               \
        if (ASH_UNLIKELY(ash__real == NULL))                                               \
            return ash_hook_missing(#name);                                                \
        return ash__real args;                                                             \
    } while (0)

#endif /* ASH_HOOK_H */
