/* ash_log.h — private to the shim: leveled logging to stderr, safe inside interception hooks.
 *
 * Every line: "[accelshim rank R] LEVEL subsys: message\n" (R is "?" until the world is known).
 * The level (ACCELSHIM_LOG = error|warn|info|debug, default warn) is checked BEFORE formatting;
 * a line is formatted on the stack with vsnprintf and written with one write(2): no malloc, no
 * stdio lock, so it is usable in any hook. A thread already inside the logger drops nested lines
 * (recursion guard). ASH_WARN_CAPPED prints a call site's first ASH_LOG_WARN_CAP lines, then one
 * "further ... suppressed" line. Threading: any thread, any time, before or after init.
 */
#ifndef ASH_LOG_H
#define ASH_LOG_H

#include <stdatomic.h>

typedef enum { ASH_LOG_ERROR = 0, ASH_LOG_WARN = 1, ASH_LOG_INFO = 2, ASH_LOG_DEBUG = 3 } ash_log_level_t;

#define ASH_LOG_WARN_CAP 10

extern _Atomic int ash_log_level_now; /* read relaxed on every check; set by ash_log_set_level */

static inline int ash_log_enabled(ash_log_level_t level)
{
    return (int)level <= atomic_load_explicit(&ash_log_level_now, memory_order_relaxed);
}

void ash_log_set_level(ash_log_level_t level);
void ash_log_set_rank(int rank); /* < 0: unknown ("?") */
/* Parse "error|warn|info|debug" (case-insensitive); ASH_OK or ASH_ERR_CONFIG (out untouched). */
int ash_log_parse_level(const char *text, ash_log_level_t *out);
const char *ash_log_level_name(ash_log_level_t level);

void ash_log_write(ash_log_level_t level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define ASH_LOG(level, subsys, ...)                                                        \
    do {                                                                                   \
        if (ash_log_enabled(level))                                                        \
            ash_log_write((level), (subsys), __VA_ARGS__);                                 \
    } while (0)
#define ash_error(subsys, ...) ASH_LOG(ASH_LOG_ERROR, subsys, __VA_ARGS__)
#define ash_warn(subsys, ...) ASH_LOG(ASH_LOG_WARN, subsys, __VA_ARGS__)
#define ash_info(subsys, ...) ASH_LOG(ASH_LOG_INFO, subsys, __VA_ARGS__)
#define ash_debug(subsys, ...) ASH_LOG(ASH_LOG_DEBUG, subsys, __VA_ARGS__)

/* A warning that repeats (e.g. once per call): this call site prints at most ASH_LOG_WARN_CAP. */
#define ASH_WARN_CAPPED(subsys, ...)                                                       \
    do {                                                                                   \
        static _Atomic unsigned ash__seen;                                                 \
        if (ash_log_enabled(ASH_LOG_WARN)) {                                               \
            unsigned ash__n = atomic_fetch_add_explicit(&ash__seen, 1, memory_order_relaxed); \
            if (ash__n < ASH_LOG_WARN_CAP)                                                 \
                ash_log_write(ASH_LOG_WARN, (subsys), __VA_ARGS__);                        \
            else if (ash__n == ASH_LOG_WARN_CAP)                                           \
                ash_log_write(ASH_LOG_WARN, (subsys), "further warnings from %s:%d suppressed", \
                              __FILE__, __LINE__);                                         \
        }                                                                                  \
    } while (0)

#endif /* ASH_LOG_H */
