/* llmc_cuda13_compat.h — passed with `nvcc -include` when tests/thirdparty builds llm.c's
 * train_gpt2.cu against CUDA 13, whose cudaMemAdvise takes a struct cudaMemLocation where llm.c
 * (written for CUDA 12) passes a device ordinal (llmc/cuda_utils.cuh: cudaCpuDeviceId). This
 * C++ overload maps the ordinal to the location CUDA 12 meant: cudaCpuDeviceId -> the host,
 * any other value -> that device. The corpus itself is never modified.
 */
#ifndef LLMC_CUDA13_COMPAT_H
#define LLMC_CUDA13_COMPAT_H
#include <cuda_runtime_api.h>

#if defined(__cplusplus) && defined(CUDART_VERSION) && CUDART_VERSION >= 13000
static inline cudaError_t cudaMemAdvise(const void *ptr, size_t count, enum cudaMemoryAdvise advice, int device)
{
    struct cudaMemLocation loc;
    loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    loc.id = device == cudaCpuDeviceId ? 0 : device;
    return cudaMemAdvise(ptr, count, advice, loc);
}
#endif
#endif /* LLMC_CUDA13_COMPAT_H */
