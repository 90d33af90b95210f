/* ptx_interp_kernels.cu — the fixed mix bench/ptx_interp.sh times on hostcuda's PTX interpreter:
 * a shared-memory tiled GEMM with barriers, a warp-shuffle reduction and an elementwise kernel.
 * Ordinary CUDA C++ (nvcc -ptx), no host twins: only the interpreter can run them.
 */
#define TILE 16

/* C[M x N] = A[M x K] * B[K x N], row-major; M, N, K multiples of TILE; block TILE x TILE */
extern "C" __global__ void b_gemm(const float *A, const float *B, float *C, int M, int N, int K)
{
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        as[threadIdx.y][threadIdx.x] = A[row * K + k0 + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * N + col] = acc;
}

/* out[0] += sum of x: grid-stride partial sums, a shuffle tree per warp, one atomic per warp */
extern "C" __global__ void b_reduce(const float *x, float *out, int n)
{
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += x[i];
    for (int d = 16; d > 0; d >>= 1)
        s += __shfl_down_sync(0xffffffff, s, d);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(out, s);
}

/* y = a * x + b * y */
extern "C" __global__ void b_axpby(const float *x, float *y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b * y[i];
}
