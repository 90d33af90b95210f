/* accelshim.h — the public API exported by libaccelshim.so (names accelshim_*).
 *
 * A program may call these through dlsym(RTLD_DEFAULT, "accelshim_version") to learn whether it
 * runs under the shim; tests use the debug queries. Every function is safe from any thread and
 * initialises the shim lazily if needed.
 */
#ifndef ACCELSHIM_H
#define ACCELSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCELSHIM_VERSION_STRING "0.1.0"

/* "0.1.0": the library's version. */
const char *accelshim_version(void);

/* Debug: the live allocation (recorded by the allocation hooks) containing ptr.
 * 0 and *base, *size, *device (physical ordinal), *kind (ash_alloc_kind_t) filled (each may be
 * NULL); -1 when no recorded allocation contains ptr. */
int accelshim_alloc_lookup(uint64_t ptr, uint64_t *base, uint64_t *size, int *device, int *kind);

/* Debug: bytes live now and the peak on a physical device (0..63); 0, or -1 for a bad device. */
int accelshim_alloc_stats(int device, uint64_t *current, uint64_t *peak, uint64_t *count);

/* Debug: what the shim learned about a kernel handle (CUfunction or CUkernel) at its first
 * launch: 0 and the fields filled (each may be NULL; strings live as long as the process), or -1
 * when the handle was never launched through the shim. launches is approximate under races. */
int accelshim_kernel_info(const void *handle, const char **name, const char **demangled, int *nparams,
                          int *is_kernel, unsigned long long *launches);

/* Debug: this process's rank, local rank, world size and physical device (-1: not chosen yet). */
void accelshim_world(int *rank, int *local_rank, int *size, int *device);

#ifdef __cplusplus
}
#endif

#endif /* ACCELSHIM_H */
