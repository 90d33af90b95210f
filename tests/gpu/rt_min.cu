// rt_min.cu — the smallest ordinary CUDA runtime program: nvcc's defaults (cudart linked
// statically), one kernel launched with <<<>>>, cudaMalloc/cudaMemcpy. On a GPU it prints
// "rt_min: ok" and exits 0. On hostcuda it stops in initialisation (hostcuda refuses cudart's
// private export tables): the first runtime call fails and the program says which, exit 1.
// test_cudart_routing.sh records its cuGetProcAddress requests through the shim.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void rt_min_add(float *x, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += v;
}

#define RT_CK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "rt_min: %s failed: %s (%d: %s)\n", #call, cudaGetErrorName(e_), (int)e_, \
                    cudaGetErrorString(e_));                                                       \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main()
{
    const int n = 256;
    float h[n], *d = nullptr;
    for (int i = 0; i < n; i++)
        h[i] = (float)i;
    RT_CK(cudaSetDevice(0));
    RT_CK(cudaMalloc(&d, sizeof h));
    RT_CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    rt_min_add<<<1, n>>>(d, 1.0f, n);
    RT_CK(cudaGetLastError());
    RT_CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    RT_CK(cudaFree(d));
    for (int i = 0; i < n; i++)
        if (h[i] != (float)i + 1.0f) {
            fprintf(stderr, "rt_min: x[%d] = %g, want %g\n", i, (double)h[i], (double)i + 1.0);
            return 1;
        }
    printf("rt_min: ok\n");
    return 0;
}
