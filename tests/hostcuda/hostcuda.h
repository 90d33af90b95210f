/* hostcuda.h — test-only extras exported by hostcuda's libcuda.so.1 (tests/hostcuda).
 *
 * hostcuda is the CUDA 13 Driver API on host memory (DESIGN.md §6). Besides the cu* functions of
 * cuda.h it exports these three for tests. Link with -lcuda against build/tests/hostcuda, or look
 * them up with dlsym: they are absent from the real driver.
 * Environment: HOSTCUDA_DEVICES (default 8), HOSTCUDA_MEM_BYTES (per device, default 1 GiB; k/M/G
 * suffixes accepted), HOSTCUDA_STRICT (default 1; 0 makes device memory host-readable, for
 * debugging), HOSTCUDA_KERNEL_LIBS (colon-separated libraries holding hostcuda_kernel_NAME).
 */
#ifndef HOSTCUDA_H
#define HOSTCUDA_H

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Calls so far to one exported symbol, by its exact exported name (e.g. "cuMemAlloc_v2",
 * "cuLaunchKernel_ptsz"); 0 for a name hostcuda does not export. */
unsigned long long hostcuda_call_count(const char *exported_symbol);

/* Set every call counter back to 0. */
void hostcuda_reset_call_counts(void);

/* The read-write host address of device memory p (hostcuda's private view), or NULL if p is not
 * in a device arena. Tests use it to inspect device memory without a copy; like the GPU's memory
 * it shows only work that has completed, so synchronise first. */
void *hostcuda_host_view(CUdeviceptr p);

#ifdef __cplusplus
}
#endif

#endif /* HOSTCUDA_H */
