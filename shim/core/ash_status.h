/* ash_status.h — private to the shim: the shim's own result codes.
 *
 * Folder shim/core/ owns: the bottom layer every part uses: typed options table (`options.c`),
 * world discovery, logging, crash reports, the one way to fail (`ash_fatal.h`: exit statuses), the
 * real-driver table (`ash_driver.h`), the allocation table; calls nothing above it
 *
 * ash_status_t is for the shim's internal results only; a hook always hands the application the
 * driver's CUresult unchanged. One X-macro list makes the enum and ash_status_name(). The first
 * four values equal ash_alloc_status_t's (OK, INVALID, NOT_FOUND, NOMEM) so that table's results
 * map one to one. Real-driver calls are checked with ASH_CU / ASH_CU_CHECK (ash_driver.h), which
 * leave a one-line breadcrumb at debug level, so a failure reads like a backtrace.
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

#endif /* ASH_STATUS_H */
