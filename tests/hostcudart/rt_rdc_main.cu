// rt_rdc_main.cu — with rt_rdc_dev.cu, a program built as CMake's CUDA_SEPARABLE_COMPILATION
// builds one (nvcc -rdc=true -cudart shared, two translation units, a device link): a kernel
// here calls a device function and reads a __device__ and a __constant__ variable defined in the
// other unit; host code here launches a kernel defined there; each unit has its own static
// device function `unit_bias` (different bodies: a link that confused them gives other numbers)
// and instantiates the same template (weak in both); both print from the device (each unit's
// format string is its own `$str`). Prints one line per check; exit 0 when all pass.
#include <cstdio>
#include <cuda_runtime.h>

extern __device__ int hits;                 // defined in rt_rdc_dev.cu
extern __constant__ float scale[4];         // defined there, set from here by cudaMemcpyToSymbol
__device__ float dev_affine(float x);       // defined there
__global__ void dev_fill(float *y, int n);  // a kernel of the other unit, launched from here

static __device__ __noinline__ float unit_bias(float x) { return x + 0.5f; }
template <typename T> __device__ __noinline__ T twice_of(T x) { return x + x; }

__global__ void main_kernel(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = unit_bias(twice_of(dev_affine(y[i]))) * scale[i % 4];
        atomicAdd(&hits, 1);
        if (i == 0)
            printf("main unit says: scale[0] is %g\n", scale[0]);   // $str: a name each unit has
    }
}

static int failures;
static void check(const char *what, bool ok, double got, double want)
{
    printf("%s %s: got %g, want %g\n", ok ? "ok" : "FAIL", what, got, want);
    failures += !ok;
}

int main()
{
    const int n = 1000;
    static float h[n];
    float *d;
    const float sc[4] = {1.0f, 2.0f, 0.5f, -1.0f};
    if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess || cudaMemcpyToSymbol(scale, sc, sizeof sc) != cudaSuccess) {
        printf("FAIL setup: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    dev_fill<<<(n + 127) / 128, 128>>>(d, n);   // y[i] = i, and hits += 1 per element
    main_kernel<<<(n + 255) / 256, 256>>>(d, n);
    cudaError_t e = cudaGetLastError();
    cudaError_t s = cudaDeviceSynchronize();
    check("launches and synchronize succeed", e == cudaSuccess && s == cudaSuccess, (double)e, 0);
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    int bad = -1;
    double got = 0, want = 0;
    for (int i = 0; i < n && bad < 0; i++) {
        // dev_affine(x) = the other unit's bias (x - 2) of 3x + 3 = 3x + 1; twice; this unit's bias + 0.5
        float w = ((3.0f * (float)i + 1.0f) * 2.0f + 0.5f) * sc[i % 4];
        if (h[i] != w)
            bad = i, got = h[i], want = w;
    }
    check("first wrong element (-1: none) across the two units", bad < 0, bad < 0 ? -1 : got, bad < 0 ? -1 : want);
    int hv = 0;
    cudaMemcpyFromSymbol(&hv, hits, sizeof hv);
    check("the other unit's __device__ int counted both kernels (it starts at 5)", hv == 5 + 2 * n, hv, 5 + 2 * n);
    cudaFree(d);
    printf("%s\n", failures ? "rt_rdc: FAILED" : "rt_rdc: all checks passed");
    return failures != 0;
}
