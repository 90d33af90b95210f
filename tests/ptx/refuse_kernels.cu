/* refuse_kernels.cu — kernels with instructions hostcuda's interpreter refuses (tests/ptx/
 * test_ptx_refuse.sh): tensor-core variants it lacks (single-bit wmma, ldmatrix .m16n16.b8),
 * cp.async.bulk.tensor (TMA), a cube-map texture fetch; and r_ok, a kernel it runs, which must stay
 * usable in the same module. PTX only
 * (nvcc -ptx -arch=compute_80).
 */
#include <cuda.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void r_ok(const int *in, int *out)
{
    out[threadIdx.x] = in[threadIdx.x] * 3 + 1;
}

// single-bit wmma (bmma): a tensor-core variant the interpreter lacks
extern "C" __global__ void r_wmma(const unsigned *a, const unsigned *b, int *c)
{
    wmma::fragment<wmma::matrix_a, 8, 8, 128, wmma::experimental::precision::b1, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 128, wmma::experimental::precision::b1, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 128, int> fc;
    wmma::fill_fragment(fc, 0);
    wmma::load_matrix_sync(fa, a, 128);
    wmma::load_matrix_sync(fb, b, 128);
    wmma::bmma_sync(fc, fa, fb, fc, wmma::experimental::bmmaBitOpAND);
    wmma::store_matrix_sync(c, fc, 8, wmma::mem_row_major);
}

// ldmatrix of 8-bit 16 x 16 matrices (sm_100): a variant the interpreter lacks
extern "C" __global__ void r_ldmatrix(const int *in, int *out)
{
    __shared__ int s[256];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    unsigned addr = (unsigned)__cvta_generic_to_shared(&s[(threadIdx.x % 16) * 4]), r0, r1;
    asm volatile("ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
    out[threadIdx.x] = (int)(r0 ^ r1);
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
