/* cublas.h — private to shim/precision/cublas*.c: the fp32-GEMM downcast policy (issue 10).
 *
 * Folder shim/precision/ owns: the cuBLAS / cuBLASLt feature: fp32 GEMM compute type
 * (`precision.matmul`), caller exclusion
 *
 * Owns: which compute type an fp32 GEMM runs with (precision.matmul in the policy, overridden by
 * ACCELSHIM_MATMUL), the matmul_exclude check on the caller's stack (cublas_unwind.c, libunwind
 * dlopen'ed RTLD_LOCAL on first use), and the per-compute-type GEMM counts of the exit report.
 * Threading: init once (pthread_once) from the first cuBLAS hook; afterwards read-only, except the
 * atomic counters and the mutex-guarded caches.
 */
#ifndef ASH_CUBLAS_H
#define ASH_CUBLAS_H

#include <stddef.h>

/* 1 when a frame of the calling thread's stack (outside the shim) has a symbol name matching one
 * of the N globs; 0 otherwise (also when libunwind is missing: see cublas_unwind.c for the
 * fallback). Cached per distinct chain of return addresses. */
int ash_cublas_caller_excluded(const char *const *globs, size_t n);
/* 0 when libunwind could be loaded (or was already); -1 otherwise (the reason is logged once). */
int ash_cublas_unwind_ready(void);

#endif /* ASH_CUBLAS_H */
