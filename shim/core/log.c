/* log.c — the shim's logger (see ash_log.h): level check first, stack formatting, one write(2).
 *
 * Invariant: never allocates, never takes a lock, never calls stdio; a line longer than the
 * stack buffer is truncated and ends with "...". Threading: the level and rank are atomics; the
 * recursion guard is thread-local (initial-exec TLS: no allocation on first touch).
 * Callers: every module of the shim and intercept/.
 * Must not: allocate, take a lock or call stdio's writers; write more than one write(2) per line;
 * call anything above shim/core/.
 */
#include "ash_log.h"

#include "ash_status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define ASH_LOG_LINE_MAX 1024

_Atomic int ash_log_level_now = ASH_LOG_WARN;
static _Atomic int ash_log_rank = -1;
static __thread int ash_log_depth __attribute__((tls_model("initial-exec")));

static const char *const ash_log_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void ash_log_set_level(ash_log_level_t level)
{
    if ((int)level < ASH_LOG_ERROR || level > ASH_LOG_DEBUG)
        return;
    atomic_store_explicit(&ash_log_level_now, (int)level, memory_order_relaxed);
}

void ash_log_set_rank(int rank) { atomic_store_explicit(&ash_log_rank, rank, memory_order_relaxed); }

const char *ash_log_level_name(ash_log_level_t level)
{
    if ((int)level < ASH_LOG_ERROR || level > ASH_LOG_DEBUG)
        return "?";
    return ash_log_names[level];
}

int ash_log_parse_level(const char *text, ash_log_level_t *out)
{
    static const char *const lower[] = {"error", "warn", "info", "debug"};
    if (text == NULL || out == NULL)
        return ASH_ERR_INVALID;
    for (int i = 0; i <= ASH_LOG_DEBUG; i++) {
        if (strcasecmp(text, lower[i]) == 0) {
            *out = (ash_log_level_t)i;
            return ASH_OK;
        }
    }
    return ASH_ERR_CONFIG;
}

static void ash_log_emit(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

void ash_log_write(ash_log_level_t level, const char *subsys, const char *fmt, ...)
{
    if (!ash_log_enabled(level) || ash_log_depth > 0)
        return;
    int saved_errno = errno; /* a hook must not change the application's errno */
    ash_log_depth++;
    char line[ASH_LOG_LINE_MAX];
    int rank = atomic_load_explicit(&ash_log_rank, memory_order_relaxed);
    char rank_text[16];
    if (rank >= 0)
        snprintf(rank_text, sizeof rank_text, "%d", rank);
    else
        strcpy(rank_text, "?");
    int n = snprintf(line, sizeof line, "[accelshim rank %s] %s %s: ", rank_text,
                     ash_log_level_name(level), subsys ? subsys : "shim");
    if (n < 0)
        n = 0;
    size_t used = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + used, sizeof line - used, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    used += (size_t)m;
    if (used >= sizeof line - 1) { /* truncated: mark it and keep room for the newline */
        used = sizeof line - 1;
        memcpy(line + used - 4, "...", 3);
        used -= 1;
    }
    line[used++] = '\n';
    ash_log_emit(line, used);
    ash_log_depth--;
    errno = saved_errno;
}

#define ASH__STATUS_NAME(e, v, s) case e: return s;
const char *ash_status_name(ash_status_t st)
{
    switch (st) {
        ASH_STATUS_LIST(ASH__STATUS_NAME)
    }
    return "unknown status";
}
#undef ASH__STATUS_NAME
