/* driver.c — the one real-driver table the shim calls for itself (see ash_driver.h).
 *
 * Invariant: filled once by intercept/ during init (ash_driver_set), before any sync point, and
 * never written again. Threading: read-only after init. Callers: every module that calls the
 * real driver on its own behalf, through ASH_CU.
 * Must not: hold our hooks (only the real driver's entry points); be written after init; issue
 * device work of its own.
 */
#include "ash_driver.h"

#include "ash_log.h"

#include <stdio.h>

ash_coll_driver_t ash_drv;
static int ash_drv_ready;

const ash_coll_driver_t *ash_driver(void) { return ash_drv_ready ? &ash_drv : NULL; }

void ash_driver_set(const ash_coll_driver_t *d)
{
    ash_drv = *d;
    ash_drv_ready = 1;
}

const char *ash_cu_name(CUresult r)
{
    static __thread char buf[32] __attribute__((tls_model("initial-exec")));
    const char *n = NULL;
    if (ash_drv.cuGetErrorName && ash_drv.cuGetErrorName(r, &n) == CUDA_SUCCESS && n)
        return n;
    snprintf(buf, sizeof buf, "CUresult %d", (int)r);
    return buf;
}

void ash_cu_breadcrumb(const char *file, int line, const char *call, CUresult r)
{
    ash_debug("trace", "%s:%d: %s -> %s", file, line, call, ash_cu_name(r));
}

void ash_cu_error(const char *subsys, const char *call, CUresult r)
{
    ash_error(subsys, "%s failed: %s (%d)", call, ash_cu_name(r), (int)r);
}
