/* llmc_cuda13.h — forced into llm.c's train_gpt2.cu (nvcc -include) by test_ptx_facts.sh: CUDA 13's
 * cudaMemAdvise takes a cudaMemLocation where llm.c passes a device number; this overload takes
 * the number. Nothing else of llm.c is changed.
 */
#include <cuda_runtime.h>
static inline cudaError_t cudaMemAdvise(const void *p, size_t n, enum cudaMemoryAdvise advice, int device)
{
    struct cudaMemLocation loc;
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
    return cudaMemAdvise(p, n, advice, loc);
}
