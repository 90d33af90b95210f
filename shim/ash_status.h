/* ash_status.h — private to the shim: the shim's own result codes and the check macros.
 *
 * ash_status_t is for the shim's internal results only; a hook always hands the application the
 * driver's CUresult unchanged. One X-macro list makes the enum and ash_status_name(). The first
 * four values equal ash_alloc_status_t's (OK, INVALID, NOT_FOUND, NOMEM) so that table's results
 * map one to one. ASH_CHECK returns the failure to its caller and leaves a one-line breadcrumb at
 * debug level (file:line and the call), so a failure reads like a backtrace (NCCL's checks.h).
 */
#ifndef ASH_STATUS_H
#define ASH_STATUS_H

#define ASH_STATUS_LIST(X)                                          \
    X(ASH_OK, 0, "ok")                                              \
    X(ASH_ERR_INVALID, 1, "invalid argument")                       \
    X(ASH_ERR_NOT_FOUND, 2, "not found")                            \
    X(ASH_ERR_NOMEM, 3, "out of memory")                            \
    X(ASH_ERR_UNSUPPORTED, 4, "not supported by the driver")        \
    X(ASH_ERR_DRIVER, 5, "driver call failed")                      \
    X(ASH_ERR_CONFIG, 6, "bad configuration value")                 \
    X(ASH_ERR_NOT_SET, 7, "option not set")                         \
    X(ASH_ERR_INTERNAL, 8, "internal error")

#define ASH__STATUS_ENUM(e, v, s) e = v,
typedef enum { ASH_STATUS_LIST(ASH__STATUS_ENUM) } ash_status_t;
#undef ASH__STATUS_ENUM

const char *ash_status_name(ash_status_t st);

/* Evaluate an ash_status_t call; on failure log "file:line: call -> name" at debug and return it. */
#define ASH_CHECK(call)                                                                    \
    do {                                                                                   \
        ash_status_t ash__st = (call);                                                     \
        if (ash__st != ASH_OK) {                                                           \
            ash_log_breadcrumb(__FILE__, __LINE__, #call, ash_status_name(ash__st));       \
            return ash__st;                                                                \
        }                                                                                  \
    } while (0)

/* Same, but store the failure in `st` and jump to `label` (single-exit cleanup form). */
#define ASH_CHECK_GOTO(call, st, label)                                                    \
    do {                                                                                   \
        (st) = (call);                                                                     \
        if ((st) != ASH_OK) {                                                              \
            ash_log_breadcrumb(__FILE__, __LINE__, #call, ash_status_name(st));            \
            goto label;                                                                    \
        }                                                                                  \
    } while (0)

/* Defined in shim/log.c; declared here so the macros need only this header. */
void ash_log_breadcrumb(const char *file, int line, const char *call, const char *result);

#endif /* ASH_STATUS_H */
