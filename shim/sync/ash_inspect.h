/* ash_inspect.h — private to the shim: the engine's NaN/Inf check (inspect.c), its own scan
 * kernels (inspect_kernels.cu, embedded as PTX) loaded through the real-driver table in each
 * context that needs them, never through the hooks (invisible to the policy and the allocation
 * table). Threading: the caller serialises (the engine's lock). Caller: sync.c.
 */
#ifndef ASH_INSPECT_H
#define ASH_INSPECT_H

#include "ash_policy.h"
#include "ash_status.h"

#include <cuda.h>
#include <stddef.h>

/* Count NaN and Inf among `count` elements of `dtype` at device address p, on stream s (queued
 * after the app's work there; waits for the answer on the host). Lazily loads the embedded PTX
 * in the current context. ASH_ERR_DRIVER / ASH_ERR_NOMEM on failure (logged). */
ash_status_t ash_inspect_nonfinite(CUdeviceptr p, size_t count, ash_policy_dtype_t dtype, CUstream s,
                                   unsigned long long *nan, unsigned long long *inf);

#endif /* ASH_INSPECT_H */
