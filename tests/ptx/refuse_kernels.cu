/* refuse_kernels.cu — kernels with instructions hostcuda's interpreter refuses (tests/ptx/
 * test_ptx_refuse.sh): tensor cores (wmma -> wmma.load/mma/store, ldmatrix), cp.async.bulk.tensor (TMA), a
 * cube-map texture fetch; and r_ok, a kernel it runs, which must stay usable in the same module. PTX only
 * (nvcc -ptx -arch=compute_80).
 */
#include <cuda.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void r_ok(const int *in, int *out)
{
    out[threadIdx.x] = in[threadIdx.x] * 3 + 1;
}

extern "C" __global__ void r_wmma(const half *a, const half *b, float *c)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

extern "C" __global__ void r_ldmatrix(const int *in, int *out)
{
    __shared__ int s[256];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    unsigned addr = (unsigned)__cvta_generic_to_shared(&s[(threadIdx.x % 8) * 4]), r;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(addr));
    out[threadIdx.x] = (int)r;
}

extern "C" __global__ void r_cp_tensor(const __grid_constant__ CUtensorMap tmap, int *out)
{
    __shared__ alignas(128) int s[256];
    __shared__ unsigned long long bar;
    unsigned sa = (unsigned)__cvta_generic_to_shared(s), ba = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0)
        asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                     ::"r"(sa), "l"(&tmap), "r"(0), "r"(ba) : "memory");
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}

extern "C" __global__ void r_texture(cudaTextureObject_t tex, float *out)
{
    out[threadIdx.x] = texCubemap<float>(tex, 1.0f, 0.5f, threadIdx.x * 0.1f);   // cube maps: not interpreted
}
