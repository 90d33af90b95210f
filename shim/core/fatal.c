/* fatal.c — the one way to stop the program (see ash_fatal.h for when _exit is required).
 *
 * Invariant: one line per fatal error, formatted on the stack and written with one write(2);
 * the first fatal error wins (a second caller, e.g. the watchdog racing the sync thread, waits
 * for the first one's exit). Threading: any thread. Callers: every module that can stop the job.
 * Kept apart from the lifecycle (shim/lifecycle.c) so that libaccelshim-io.so can link it with the options.
 * Must not: allocate or use stdio's buffers for the line (formatted on the stack, one write(2));
 * return; let a second fatal error overwrite the first one's status; depend on anything of the shim
 * but ash_fatal.h (libaccelshim-io.so links it).
 */
#include "ash_fatal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static _Atomic int ash_fatal_now_code;

const char *ash_exit_name(int code)
{
    switch (code) {
#define ASH__EXIT_NAME(e, v, s, doc) case v: return s;
        ASH_EXIT_LIST(ASH__EXIT_NAME)
#undef ASH__EXIT_NAME
    }
    return "?";
}

int ash_fatal_code(void) { return atomic_load(&ash_fatal_now_code); }

/* Claim the fatal path; a second claimant waits for the first one's end. */
static void ash_fatal_claim(int code)
{
    int none = 0;
    if (!atomic_compare_exchange_strong(&ash_fatal_now_code, &none, code))
        for (;;)
            pause();
}

static void ash_fatal_line(const char *fmt, va_list ap)
{
    char line[1536];
    int n = snprintf(line, sizeof line, "accelshim: ");
    size_t room = sizeof line - (size_t)n - 1; /* keep one byte for the newline */
    int m = vsnprintf(line + n, room, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < room ? (size_t)m : room - 1);
    line[len++] = '\n';
    (void)!write(2, line, len);
}

_Noreturn void ash_fatal(ash_exit_t code, const char *fmt, ...)
{
    ash_fatal_claim((int)code);
    va_list ap;
    va_start(ap, fmt);
    ash_fatal_line(fmt, ap);
    va_end(ap);
    exit((int)code);
}

/* stdio is flushed only where no other thread holds the stream (a blocked flush would hang). */
static void ash_fatal_flush(FILE *f)
{
    if (ftrylockfile(f) == 0) {
        fflush_unlocked(f);
        funlockfile(f);
    }
}

_Noreturn void ash_fatal_now_reported(ash_exit_t code)
{
    ash_fatal_claim((int)code);
    ash_fatal_flush(stdout);
    ash_fatal_flush(stderr);
    _exit((int)code);
}

_Noreturn void ash_fatal_now(ash_exit_t code, const char *fmt, ...)
{
    ash_fatal_claim((int)code);
    va_list ap;
    va_start(ap, fmt);
    ash_fatal_line(fmt, ap);
    va_end(ap);
    ash_fatal_flush(stdout);
    ash_fatal_flush(stderr);
    _exit((int)code);
}
