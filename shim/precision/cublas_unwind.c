/* cublas_unwind.c — matmul_exclude: is a GEMM called (directly or further up) from an excluded
 * function? Walks the calling thread's stack with libunwind and matches each frame's symbol name
 * (as libunwind reads it from the object's symbol table: static functions included, C++ names
 * mangled) against the policy's globs; frames inside libaccelshim.so itself are skipped.
 * libunwind is dlopen'ed RTLD_LOCAL ("libunwind.so.8") on first use, so its _Unwind_* exports
 * never interpose on the application's C++ exception handling, and a process without exclusions
 * never loads it. Cost: one unw_backtrace (return addresses) per GEMM; the names are resolved
 * once per distinct chain of return addresses (hash cache, mutex). Threading: any thread.
 * Must not: link libunwind or load it RTLD_GLOBAL (its _Unwind_* would interpose on the
 * application's exceptions); load it in a process without exclusions; match frames inside
 * libaccelshim.so.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "cublas.h"

#include "ash_hook.h"
#include "ash_log.h"
#include "ash_policy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define ASH__XS(x) #x
#define ASH__S(x) ASH__XS(x)
#define ASH_UNW_MAX_FRAMES 64
#define ASH_UNW_CACHE 1024 /* distinct call chains remembered; a full cache resolves every time */

static struct {
    pthread_once_t once;
    int ok;
    int (*backtrace)(void **, int);
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*get_proc_name)(unw_cursor_t *, char *, size_t, unw_word_t *);
    void *self_base;
    pthread_mutex_t lock;
    uint64_t key[ASH_UNW_CACHE]; /* 0 = empty */
    unsigned char excluded[ASH_UNW_CACHE];
} U = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void ash_unw_load(void)
{
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        ash_error("cublas", "matmul_exclude needs libunwind (libunwind.so.8): %s; every fp32 GEMM "
                  "stays in fp32", e ? e : "not found");
        return;
    }
    /* the names behind libunwind's macros (unw_init_local -> _ULx86_64_init_local ...) */
    *(void **)&U.backtrace = ash_hook_real_dlsym(h, "unw_backtrace");
    *(void **)&U.getcontext = ash_hook_real_dlsym(h, ASH__S(unw_tdep_getcontext));
    *(void **)&U.init_local = ash_hook_real_dlsym(h, ASH__S(unw_init_local));
    *(void **)&U.step = ash_hook_real_dlsym(h, ASH__S(unw_step));
    *(void **)&U.get_reg = ash_hook_real_dlsym(h, ASH__S(unw_get_reg));
    *(void **)&U.get_proc_name = ash_hook_real_dlsym(h, ASH__S(unw_get_proc_name));
    if (!U.backtrace || !U.getcontext || !U.init_local || !U.step || !U.get_reg || !U.get_proc_name) {
        ash_error("cublas", "libunwind.so.8 lacks an entry point accelshim needs; every fp32 GEMM "
                  "stays in fp32");
        return;
    }
    Dl_info info;
    if (dladdr((void *)&ash_unw_load, &info) != 0)
        U.self_base = info.dli_fbase;
    U.ok = 1;
}

int ash_cublas_unwind_ready(void)
{
    pthread_once(&U.once, ash_unw_load);
    return U.ok ? 0 : -1;
}

static int ash_unw_own_frame(unw_word_t ip)
{
    Dl_info info;
    return dladdr((void *)(uintptr_t)ip, &info) != 0 && info.dli_fbase == U.self_base;
}

/* Resolve every frame's name and match it (the slow path, once per distinct chain). */
static __attribute__((noinline)) int ash_unw_walk(const char *const *globs, size_t n)
{
    unw_context_t ctx;
    unw_cursor_t cur;
    char name[512];
    if (U.getcontext(&ctx) != 0 || U.init_local(&cur, &ctx) != 0)
        return 0;
    for (int depth = 0; depth < ASH_UNW_MAX_FRAMES && U.step(&cur) > 0; depth++) {
        unw_word_t ip = 0, off = 0;
        if (U.get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
            break;
        if (ash_unw_own_frame(ip))
            continue;
        if (U.get_proc_name(&cur, name, sizeof name, &off) != 0)
            continue;
        for (size_t i = 0; i < n; i++) {
            if (ash_policy_glob_match(globs[i], name)) {
                ash_debug("cublas", "GEMM called from %s: kept in fp32 (matmul_exclude \"%s\")", name,
                          globs[i]);
                return 1;
            }
        }
    }
    return 0;
}

__attribute__((noinline)) int ash_cublas_caller_excluded(const char *const *globs, size_t n)
{
    if (n == 0 || ash_cublas_unwind_ready() != 0)
        return 0;
    void *ips[ASH_UNW_MAX_FRAMES];
    int depth = U.backtrace(ips, ASH_UNW_MAX_FRAMES);
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < depth; i++)
        h = (h ^ (uint64_t)(uintptr_t)ips[i]) * 0x100000001b3ull;
    if (h == 0)
        h = 1;
    size_t slot = (size_t)(h % ASH_UNW_CACHE);
    pthread_mutex_lock(&U.lock);
    for (size_t probe = 0; probe < 8; probe++) {
        size_t s = (slot + probe) % ASH_UNW_CACHE;
        if (U.key[s] == h) {
            int ex = U.excluded[s];
            pthread_mutex_unlock(&U.lock);
            return ex;
        }
    }
    pthread_mutex_unlock(&U.lock);
    int ex = ash_unw_walk(globs, n);
    pthread_mutex_lock(&U.lock);
    for (size_t probe = 0; probe < 8; probe++) {
        size_t s = (slot + probe) % ASH_UNW_CACHE;
        if (U.key[s] == 0) {
            U.key[s] = h;
            U.excluded[s] = (unsigned char)ex;
            break;
        }
    }
    pthread_mutex_unlock(&U.lock);
    return ex;
}
