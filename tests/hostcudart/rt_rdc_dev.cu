// rt_rdc_dev.cu — the second translation unit of rt_rdc (see rt_rdc_main.cu).
#include <cstdio>
__device__ int hits = 5;
__constant__ float scale[4];

static __device__ __noinline__ float unit_bias(float x) { return x - 2.0f; }   // same name as rt_rdc_main.cu's, other body
template <typename T> __device__ __noinline__ T twice_of(T x) { return x + x; }

__device__ float dev_affine(float x) { return unit_bias(twice_of(x) + x + 3.0f); }   // 3x + 1, then - 2

__global__ void dev_fill(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = (float)i;
        atomicAdd(&hits, 1);
        if (i == 0)
            printf("dev unit says: filling %d\n", n);
    }
}
