/* ash_driver.h — private to the shim: the ONE table of real-driver entry points the shim calls for
 * itself (collectives, timing events, fusion buffers, recording, the NaN scan, the watchdog).
 *
 * Each entry point is declared once, in ASH_COLL_DRIVER_ENTRIES (collectives/ash_coll.h: exported
 * name, cudaTypedefs.h type, required or optional); intercept/ fills the one instance from the
 * real driver's exports (never our hooks) at init and everyone reads it here; the collectives get
 * a pointer to it. The hooks' passthrough slots (ash_real, intercept/ash_hook.h) are another
 * matter: one per hooked symbol, private to intercept/. Call sites use ASH_CU (NCCL's CUCHECK
 * and cudawrap.h are the model): ASH_CU(cuEventRecord(ev, s)) calls ash_drv.cuEventRecord.
 * Threading: written once during init, before any sync point; read-only afterwards.
 */
#ifndef ASH_DRIVER_H
#define ASH_DRIVER_H

#include "ash_coll.h"
#include "ash_status.h"

#include <cuda.h>

extern ash_coll_driver_t ash_drv; /* all NULL until intercept/ fills it */

/* The table, or NULL when intercept/ could not fill it (the driver lacks a required entry). */
const ash_coll_driver_t *ash_driver(void);
/* intercept/coll_driver.c, once during init. */
void ash_driver_set(const ash_coll_driver_t *d);

/* An optional entry point is present. */
#define ASH_CU_HAS(name) (ash_drv.name != NULL)

/* Call a real-driver entry point; evaluates to its CUresult. A failure (other than
 * CUDA_ERROR_NOT_READY, an answer) leaves a breadcrumb "file:line: call -> CUDA_ERROR_..." at
 * debug, so a failure reads like a backtrace. */
#define ASH_CU(call) ash_cu_result(ash_drv.call, __FILE__, __LINE__, #call)
/* The same in a function returning ash_status_t: a failure is logged at error under subsys
 * ("subsys: call failed: CUDA_ERROR_... (n)") and returned as ASH_ERR_DRIVER. */
#define ASH_CU_CHECK(subsys, call)                                                          \
    do {                                                                                    \
        CUresult ash__r = ASH_CU(call);                                                     \
        if (ash__r != CUDA_SUCCESS) {                                                       \
            ash_cu_error((subsys), #call, ash__r);                                          \
            return ASH_ERR_DRIVER;                                                          \
        }                                                                                   \
    } while (0)

const char *ash_cu_name(CUresult r); /* "CUDA_ERROR_INVALID_VALUE", or "CUresult n" */
void ash_cu_breadcrumb(const char *file, int line, const char *call, CUresult r);
void ash_cu_error(const char *subsys, const char *call, CUresult r);
static inline CUresult ash_cu_result(CUresult r, const char *file, int line, const char *call)
{
    if (__builtin_expect(r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY, 0))
        ash_cu_breadcrumb(file, line, call, r);
    return r;
}

#endif /* ASH_DRIVER_H */
