/* crash.c — crash reports: backtrace on SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT (see ash_crash.h).
 *
 * The handler uses only write(2), sigaction, raise and libunwind's local unwinder (unw_init_local2
 * from the signal's ucontext, unw_step, unw_get_proc_name: documented async-signal-safe enough
 * for this use), and formats numbers itself (no stdio, no malloc). Invariant: the signal does to
 * the process what it would have done without us: a handler of the program's runs first and, if
 * it returns (it repaired the fault), the program goes on with no report; otherwise the report,
 * then the default action (re-raised). A fault inside the handler is fatal at once (blocked).
 * Threading: an alternate stack is per thread: the installing thread gets a static one; any other
 * thread gets its own (mmap'ed, unmapped at its exit) the first time it creates or retains a
 * context or reaches a sync point (ash_crash_thread: off the launch fast path). A thread that does
 * neither runs the handler on its own stack (a stack overflow there is not reported). Callers:
 * lifecycle.c (init), sync.c (after MPI initialised; each sync point), intercept/hooks_device.c.
 * Must not: call stdio or malloc in the handler; change what the signal does to the process (the
 * program's own handler runs first; then the default action); report a fault the program's handler
 * repaired; include anything above shim/core/.
 */
#include "ash_crash.h"

#include "ash_log.h"
#include "ash_options.h"
#include "ash_world.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define CRASH_MAX_FRAMES 48
#define CRASH_ALTSTACK (64 * 1024)

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define CRASH_NSIG ((int)(sizeof crash_signals / sizeof crash_signals[0]))

static struct sigaction crash_prev[CRASH_NSIG]; /* what was there when ours went on top */
static int crash_prev_lib[CRASH_NSIG];           /* 1: a library's (report first, then chain) */
static struct sigaction crash_mark[CRASH_NSIG];  /* before the collectives opened */
static int crash_mark_ok[CRASH_NSIG];
static _Atomic int crash_enabled;
static pthread_key_t crash_key;          /* a thread's own alternate stack, unmapped at its exit */
static pthread_once_t crash_key_once = PTHREAD_ONCE_INIT;
static int crash_key_ok;
static __thread int crash_thread_seen;   /* this thread's alternate stack was looked at */
static volatile sig_atomic_t crash_active;
static char crash_stack[CRASH_ALTSTACK] __attribute__((aligned(16)));

/* ---- tiny async-signal-safe formatting --------------------------------------------------- */

typedef struct { char b[768]; size_t n; } crash_line_t;

static void cl_str(crash_line_t *l, const char *s)
{
    while (s && *s && l->n < sizeof l->b - 1)
        l->b[l->n++] = *s++;
}

static void cl_hex(crash_line_t *l, uintptr_t v, int width)
{
    char t[2 + 16];
    int i = 0;
    do {
        t[i++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v && i < 16);
    while (i < width && i < 16)
        t[i++] = '0';
    cl_str(l, "0x");
    while (i > 0 && l->n < sizeof l->b - 1)
        l->b[l->n++] = t[--i];
}

static void cl_dec(crash_line_t *l, long v)
{
    char t[24];
    int i = 0;
    unsigned long u = v < 0 ? (unsigned long)-v : (unsigned long)v;
    do {
        t[i++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        t[i++] = '-';
    while (i > 0 && l->n < sizeof l->b - 1)
        l->b[l->n++] = t[--i];
}

static void cl_begin(crash_line_t *l)
{
    l->n = 0;
    cl_str(l, "[accelshim rank ");
    cl_dec(l, ash_world()->rank);
    cl_str(l, "] ");
}

static void cl_emit(crash_line_t *l)
{
    l->b[l->n++] = '\n';
    const char *p = l->b;
    size_t left = l->n;
    while (left > 0) {
        ssize_t w = write(STDERR_FILENO, p, left);
        if (w <= 0)
            return;
        p += w;
        left -= (size_t)w;
    }
}

static const char *crash_signame(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    }
    return "signal";
}

/* "name+0xoff" or "??" */
static void cl_where(crash_line_t *l, unw_cursor_t *cur)
{
    char name[256];
    unw_word_t off = 0;
    if (unw_get_proc_name(cur, name, sizeof name, &off) == 0 && name[0]) {
        cl_str(l, name);
        cl_str(l, "+");
        cl_hex(l, (uintptr_t)off, 0);
    } else {
        cl_str(l, "??");
    }
}

static void crash_report(int sig, siginfo_t *si, void *uc)
{
    crash_line_t l;
    unw_cursor_t cur;
    int have = unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0;

    cl_begin(&l);
    cl_str(&l, "crash: ");
    cl_str(&l, crash_signame(sig));
    if (sig != SIGABRT && si) {
        cl_str(&l, " (address ");
        cl_hex(&l, (uintptr_t)si->si_addr, 0);
        cl_str(&l, ")");
    }
    if (have) {
        cl_str(&l, " in ");
        cl_where(&l, &cur);
    }
    cl_str(&l, "; backtrace:");
    cl_emit(&l);
    for (int i = 0; have && i < CRASH_MAX_FRAMES; i++) {
        unw_word_t ip = 0;
        unw_get_reg(&cur, UNW_REG_IP, &ip);
        cl_begin(&l);
        cl_str(&l, "  #");
        cl_dec(&l, i);
        cl_str(&l, " ");
        cl_hex(&l, (uintptr_t)ip, 16);
        cl_str(&l, " ");
        cl_where(&l, &cur);
        cl_emit(&l);
        if (unw_step(&cur) <= 0)
            break;
    }
}

static void crash_handler(int sig, siginfo_t *si, void *uc);

static int crash_is_handler(const struct sigaction *a)
{
    if (a->sa_flags & SA_SIGINFO)
        return a->sa_sigaction != NULL;
    return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN && a->sa_handler != NULL;
}

static int crash_same(const struct sigaction *a, const struct sigaction *b)
{
    if ((a->sa_flags & SA_SIGINFO) != (b->sa_flags & SA_SIGINFO))
        return 0;
    return (a->sa_flags & SA_SIGINFO) ? a->sa_sigaction == b->sa_sigaction : a->sa_handler == b->sa_handler;
}

static int crash_is_ours(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == crash_handler;
}

/* call a saved handler as the kernel would have: its mask added, SA_RESETHAND honoured */
static void crash_call(const struct sigaction *p, int sig, siginfo_t *si, void *uc)
{
    sigset_t old;
    if (p->sa_flags & SA_RESETHAND) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
    }
    pthread_sigmask(SIG_BLOCK, &p->sa_mask, &old);
    if (p->sa_flags & SA_SIGINFO)
        p->sa_sigaction(sig, si, uc);
    else
        p->sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* after the program's handler returned: does the signal end the process now? Only when that
 * handler restored the default action and raised the signal again (it is pending: blocked
 * while we run). Otherwise the program goes on (a repaired page) or faults again (its handler
 * runs again, as it would without us). */
static int crash_fatal_now(int sig)
{
    struct sigaction cur;
    sigset_t pend;
    if (sigaction(sig, NULL, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
        return 0;
    return sigpending(&pend) == 0 && sigismember(&pend, sig) == 1;
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
    int idx = 0;
    while (idx < CRASH_NSIG && crash_signals[idx] != sig)
        idx++;
    if (idx < CRASH_NSIG && crash_is_handler(&crash_prev[idx]) && !crash_prev_lib[idx]) {
        /* the program's own handler first: it may repair the fault and return (guard pages,
         * JITs, GC write barriers); report only a signal that now ends the process */
        struct sigaction p = crash_prev[idx];
        crash_call(&p, sig, si, uc);
        if (crash_fatal_now(sig) && !crash_active) {
            crash_active = 1;
            crash_report(sig, si, uc);
        }
        return; /* a pending re-raise is delivered now, with the default action */
    }
    if (!crash_active) {
        crash_active = 1;
        crash_report(sig, si, uc);
    }
    /* chain: the library's handler that we went on top of (Open MPI's) gets the same call */
    if (idx < CRASH_NSIG && crash_is_handler(&crash_prev[idx]))
        crash_call(&crash_prev[idx], sig, si, uc);
    /* default action, re-raised: delivered when we return (SIGSEGV etc. also re-fault) */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* our handler as installed: on the alternate stack, nothing extra blocked */
static struct sigaction crash_ours(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    return sa;
}

/* at init: on top of whatever is there (default, or a handler the program installed before its
 * first CUDA call: called first, see crash_handler); an ignored signal is left alone */
static void crash_set(void)
{
    struct sigaction sa = crash_ours();
    for (int i = 0; i < CRASH_NSIG; i++) {
        struct sigaction old;
        if (sigaction(crash_signals[i], NULL, &old) != 0)
            continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue; /* the program ignores it on purpose */
        if (crash_is_ours(&old))
            continue;
        crash_prev[i] = old;
        crash_prev_lib[i] = 0;
        sigaction(crash_signals[i], &sa, NULL);
    }
}

void ash_crash_install(void)
{
    long on = 1;
    if (ash_opt_int(ASH_OPT_CRASH_HANDLER, &on) == ASH_OK && on == 0) {
        ash_info("crash", "ACCELSHIM_CRASH_HANDLER=0: no crash reports");
        return;
    }
    stack_t ss, old;
    memset(&ss, 0, sizeof ss);
    if (sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE)) {
        ss.ss_sp = crash_stack;
        ss.ss_size = sizeof crash_stack;
        if (sigaltstack(&ss, NULL) != 0)
            ash_debug("crash", "sigaltstack failed: a stack overflow will not be reported");
    }
    crash_thread_seen = 1;
    crash_set();
    crash_enabled = 1;
}

static void crash_thread_exit(void *mem)
{
    stack_t off;
    memset(&off, 0, sizeof off);
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, NULL);
    munmap(mem, CRASH_ALTSTACK);
}

static void crash_key_make(void)
{
    crash_key_ok = pthread_key_create(&crash_key, crash_thread_exit) == 0;
}

void ash_crash_thread(void)
{
    if (crash_thread_seen || !crash_enabled)
        return;
    crash_thread_seen = 1;
    stack_t ss, old;
    if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
        return; /* the program gave this thread one: keep it */
    pthread_once(&crash_key_once, crash_key_make);
    if (!crash_key_ok)
        return;
    void *mem = mmap(NULL, CRASH_ALTSTACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                     -1, 0);
    if (mem == MAP_FAILED)
        return;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = mem;
    ss.ss_size = CRASH_ALTSTACK;
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(mem, CRASH_ALTSTACK);
        return;
    }
    if (pthread_setspecific(crash_key, mem) != 0)
        crash_thread_exit(mem);
}

void ash_crash_mark(void)
{
    if (!crash_enabled)
        return;
    for (int i = 0; i < CRASH_NSIG; i++)
        crash_mark_ok[i] = sigaction(crash_signals[i], NULL, &crash_mark[i]) == 0;
}

/* after a library (Open MPI) initialised: for each signal, what changed since ash_crash_mark
 * is the library's doing. Over a handler the library installed where ours was, go on top
 * (report first, then chain to it); where the library replaced the program's handler, put the
 * program's back; a handler the program installed after ours (unchanged by the library) is
 * never displaced. */
void ash_crash_reinstall(void)
{
    if (!crash_enabled)
        return;
    struct sigaction sa = crash_ours();
    for (int i = 0; i < CRASH_NSIG; i++) {
        struct sigaction cur;
        if (!crash_mark_ok[i] || sigaction(crash_signals[i], NULL, &cur) != 0)
            continue;
        if (crash_is_ours(&cur) || crash_same(&cur, &crash_mark[i]))
            continue; /* still ours, or the program's own: left alone */
        if (crash_is_ours(&crash_mark[i])) {
            crash_prev[i] = cur;
            crash_prev_lib[i] = 1;
            sigaction(crash_signals[i], &sa, NULL);
        } else if (crash_is_handler(&crash_mark[i])) {
            sigaction(crash_signals[i], &crash_mark[i], NULL);
            ash_debug("crash", "%s: the program's handler restored over the one MPI installed",
                      crash_signame(crash_signals[i]));
        }
    }
}
