/* hooks_launch.c — the launch hooks (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel
 * and their _ptsz twins; each takes a CUfunction or a CUkernel) and the name hooks that record
 * handle -> name (cuModuleGetFunction, cuLibraryGetKernel, cuKernelGetFunction).
 *
 * Fast path (a learned kernel that matched no rule): one lock-free cache lookup, two flag tests
 * (the entry's, and the step watch's global one: ash_unfired.h),
 * a relaxed counter bump, a tail call to the variant's own real function. Anything else (first
 * launch, a matched rule) goes through ash_launch_slow, which inits, learns, and calls the sync
 * engine's ash_launch_prepare when rules != NULL, and ash_launch_done after a successful real
 * launch (ready points: overlap). The application gets the driver's CUresult.
 * Must not: lock, allocate or log on the fast path; decide a sync point itself (ash_launch_prepare
 * does); launch on another stream or skip the real launch; change the CUresult the driver gave.
 */
#include "ash_explain.h"
#include "ash_hook.h"
#include "ash_kernels.h"
#include "ash_log.h"
#include "ash_observer.h"
#include "ash_unfired.h"

static __attribute__((noinline, cold)) ash_kentry_t *ash_launch_slow(const void *f, CUstream s, void **params,
                                                                   void **extra)
{
    ash_hook_init();
    ash_kentry_t *k = ash_kernel_lookup(f);
    if (k == NULL || !k->learned)
        k = ash_kernel_learn(f);
    if (ASH_UNLIKELY(ash_explain_on) && k != NULL) /* explain mode: every launch, before it */
        ash_explain_launch(k->info.name, k->info.demangled, k->info.nparams, k->info.param_offsets,
                           k->info.param_sizes, params, extra);
    if (k != NULL && k->info.rules != NULL) {
        ash_status_t st = ash_launch_prepare(&k->info, s, params, extra);
        if (st != ASH_OK)
            ASH_WARN_CAPPED("launch", "sync before %s failed: %s; launching anyway", k->info.name, ash_status_name(st));
    }
    if (ASH_UNLIKELY(ash_unfired_watch_on) && k != NULL) /* the step watch: until a gradient rule fires */
        ash_unfired_launch(&k->info, params, extra);
    return k;
}

/* Each variant is two functions: the hook — fast path: one cache lookup, one flag test, a
 * relaxed counter bump and ONE tail call whose target is the real twin, or the cold slow twin
 * (first launch, a matched rule, a missing real symbol), so the arguments are never touched —
 * and that slow twin, which learns / prepares, then calls the real twin itself. */
/* PTSZ: the _ptsz twin, where stream 0 means the calling thread's default stream; the engine
 * (which calls the legacy-named real functions) is handed CU_STREAM_PER_THREAD for it. */
#define ASH_LAUNCH_PAIR(name, PTSZ, PARAMS, STREAM, KPARAMS, EXTRA, args)                  \
    static __attribute__((noinline, cold)) CUresult name##_slow PARAMS                     \
    {                                                                                      \
        CUstream ash__s = (STREAM);                                                        \
        if ((PTSZ) && ash__s == NULL)                                                      \
            ash__s = CU_STREAM_PER_THREAD;                                                 \
        ash_kentry_t *k = ash_launch_slow((const void *)f, ash__s, (KPARAMS), (EXTRA));    \
        __typeof__(ash_real.name) real = ash_real.name;                                    \
        if (ASH_UNLIKELY(real == NULL))                                                    \
            return ash_hook_missing(#name);                                                \
        if (k != NULL)                                                                     \
            ash_kernel_count(k);                                                           \
        uint64_t ash__t0 = ash_observe_launches_on ? ash_observe_now_ns() : 0;             \
        CUresult ash__r = real args;                                                       \
        if (ASH_UNLIKELY(ash_observe_launches_on)) /* --trace-launches: slow path only */  \
            ash_observe_launch(k ? k->info.demangled : NULL, ash__t0, (int)ash__r);        \
        if (k != NULL && k->info.rules != NULL && ash__r == CUDA_SUCCESS)                  \
            ash_launch_done(&k->info, ash__s, (KPARAMS), (EXTRA)); /* ready points */       \
        return ash__r;                                                                     \
    }                                                                                      \
    ASH_EXPORT CUresult CUDAAPI name PARAMS                                                \
    {                                                                                      \
        ash_kentry_t *k = ash_kernel_lookup((const void *)f);                              \
        __typeof__(ash_real.name) target = ash_real.name;                                  \
        if (ASH_LIKELY(k != NULL && !k->slow && target != NULL && !ash_unfired_watch_on))  \
            ash_kernel_count(k);                                                           \
        else                                                                               \
            target = name##_slow;                                                          \
        return target args;                                                                \
    }

#define ASH_LAUNCH_PARAMS                                                                  \
    (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, \
     unsigned int bz, unsigned int shmem, CUstream s, void **params, void **extra)
#define ASH_LAUNCH_ARGS (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra)
ASH_LAUNCH_PAIR(cuLaunchKernel, 0, ASH_LAUNCH_PARAMS, s, params, extra, ASH_LAUNCH_ARGS)
ASH_LAUNCH_PAIR(cuLaunchKernel_ptsz, 1, ASH_LAUNCH_PARAMS, s, params, extra, ASH_LAUNCH_ARGS)

#define ASH_LAUNCH_EX_PARAMS (const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
#define ASH_LAUNCH_EX_ARGS (config, f, params, extra)
ASH_LAUNCH_PAIR(cuLaunchKernelEx, 0, ASH_LAUNCH_EX_PARAMS, config ? config->hStream : NULL, params, extra,
                ASH_LAUNCH_EX_ARGS)
ASH_LAUNCH_PAIR(cuLaunchKernelEx_ptsz, 1, ASH_LAUNCH_EX_PARAMS, config ? config->hStream : NULL, params, extra,
                ASH_LAUNCH_EX_ARGS)

#define ASH_LAUNCH_COOP_PARAMS                                                             \
    (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, \
     unsigned int bz, unsigned int shmem, CUstream s, void **params)
#define ASH_LAUNCH_COOP_ARGS (f, gx, gy, gz, bx, by, bz, shmem, s, params)
ASH_LAUNCH_PAIR(cuLaunchCooperativeKernel, 0, ASH_LAUNCH_COOP_PARAMS, s, params, NULL, ASH_LAUNCH_COOP_ARGS)
ASH_LAUNCH_PAIR(cuLaunchCooperativeKernel_ptsz, 1, ASH_LAUNCH_COOP_PARAMS, s, params, NULL, ASH_LAUNCH_COOP_ARGS)

/* ---- names ---- */

ASH_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    ash_hook_init();
    if (ASH_UNLIKELY(ash_real.cuModuleGetFunction == NULL))
        return ash_hook_missing("cuModuleGetFunction");
    CUresult r = ash_real.cuModuleGetFunction(hfunc, hmod, name);
    if (r == CUDA_SUCCESS && hfunc != NULL)
        ash_kernel_note(*hfunc, name, 0);
    return r;
}

ASH_EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    ash_hook_init();
    if (ASH_UNLIKELY(ash_real.cuLibraryGetKernel == NULL))
        return ash_hook_missing("cuLibraryGetKernel");
    CUresult r = ash_real.cuLibraryGetKernel(pKernel, library, name);
    if (r == CUDA_SUCCESS && pKernel != NULL)
        ash_kernel_note(*pKernel, name, 1);
    return r;
}

ASH_EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    ash_hook_init();
    if (ASH_UNLIKELY(ash_real.cuKernelGetFunction == NULL))
        return ash_hook_missing("cuKernelGetFunction");
    CUresult r = ash_real.cuKernelGetFunction(pFunc, kernel);
    if (r == CUDA_SUCCESS && pFunc != NULL) {
        const char *name = ash_kernel_name(kernel);
        if (name != NULL)
            ash_kernel_note(*pFunc, name, 0);
    }
    return r;
}
