/* hcrt_internal.h — private to hostcudart (the CUDA runtime on the Driver API, libcudart.so.13).
 * What it owns: the per-thread runtime state (current device, last error, call configuration),
 * the process-wide sticky error, the registry of fatbins / kernels / variables nvcc's stubs
 * register, and the one boundary where a CUresult becomes a cudaError_t (hcrt_ret).
 * Every driver call goes through the driver's public symbols (linked -lcuda) so an interposer
 * preloaded before us sees each of them. Threading: the registry is guarded by one mutex; the
 * per-thread state is _Thread_local. */
#ifndef HCRT_INTERNAL_H
#define HCRT_INTERNAL_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stddef.h>

#define HCRT_API __attribute__((visibility("default")))

/* the one exit of every runtime call: records a failure as the thread's last error (and a
 * sticky one for the process), returns it; a pending sticky error wins over success */
cudaError_t hcrt_ret(cudaError_t e);
cudaError_t hcrt_from_cu(CUresult r);
#define HCRT_CU(call) hcrt_ret(hcrt_from_cu(call))
/* every call that needs a context: a sticky error already set, else make the runtime's context
 * current (the thread's own current context if the program made one, else the device's primary) */
cudaError_t hcrt_enter(void);
/* the device the runtime's context belongs to */
int hcrt_current_device(void);

/* a registered kernel (host stub -> entry name) and variable (host shadow -> device name) */
typedef struct hcrt_fatbin hcrt_fatbin;
typedef struct hcrt_kernel hcrt_kernel;
hcrt_kernel *hcrt_kernel_by_host(const void *host_fun);
/* the CUfunction of a kernel in the current context (loads its fatbin there on first use) */
cudaError_t hcrt_kernel_function(hcrt_kernel *k, CUfunction *out);
cudaError_t hcrt_func_of(const void *host_fun, CUfunction *out);
cudaError_t hcrt_symbol(const void *host_var, CUdeviceptr *dptr, size_t *bytes);
/* cudaDeviceReset: forget every module loaded in ctx */
void hcrt_forget_context(CUcontext ctx);
/* the shared launch: stream as the caller's default-stream mode resolved it */
cudaError_t hcrt_launch(hcrt_kernel *k, dim3 grid, dim3 block, void **args, size_t shared, CUstream s);

/* a call hostcudart does not implement: one line on stderr the first time, NotSupported */
cudaError_t hcrt_unimplemented(const char *name, int *said);

#endif
