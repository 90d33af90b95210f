/* cast_kernels.cu — the collectives' own device kernels, written once (include/ash_kernel.h).
 *
 * nvcc -> build/collectives/cast_kernels.ptx, embedded in libash_coll.a (ptx_blob.S) and loaded
 * with the real cuModuleLoadData; cc -> build/collectives/libash_cast_kernels_host.so, the
 * hostcuda implementations (add it to HOSTCUDA_KERNEL_LIBS). Both round identically: the device
 * uses the CUDA intrinsics (cvt.rn.*), the host ash_coll_cast.h (same RNE / NaN rules).
 * Kernels: f32 <-> bf16 / f16 with a scale applied in f32 before the rounding (downcast: the
 * fp16 pre-division) or after the upcast (bf16 post-division), and in-place scales.
 * A scale of exactly 1 is skipped in the upcasts, so NaN payloads pass through unchanged on both
 * (GPU arithmetic would canonicalise them, x86 would only quieten them).
 * Grid-stride loops: any launch shape covers n. No shared memory, no synchronisation.
 */
#include "ash_kernel.h"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
ASH_DEVICE unsigned short ash_k_f2bf(float x) { return __bfloat16_as_ushort(__float2bfloat16_rn(x)); }
ASH_DEVICE float ash_k_bf2f(unsigned short h) { return __bfloat162float(__ushort_as_bfloat16(h)); }
ASH_DEVICE unsigned short ash_k_f2h(float x) { return __half_as_ushort(__float2half_rn(x)); }
ASH_DEVICE float ash_k_h2f(unsigned short h) { return __half2float(__ushort_as_half(h)); }
#else
#include "ash_coll_cast.h"
#define ash_k_f2bf ash_coll_f32_to_bf16_rn
#define ash_k_bf2f ash_coll_bf16_to_f32
#define ash_k_f2h ash_coll_f32_to_f16_rn
#define ash_k_h2f ash_coll_f16_to_f32
#endif

ASH_KERNEL(ash_coll_k_f32_to_bf16, const float *, src, unsigned short *, dst, long long, n,
           float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        dst[i] = ash_k_f2bf(src[i] * scale);
}

ASH_KERNEL(ash_coll_k_bf16_to_f32, const unsigned short *, src, float *, dst, long long, n,
           float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        dst[i] = scale == 1.0f ? ash_k_bf2f(src[i]) : ash_k_bf2f(src[i]) * scale;
}

ASH_KERNEL(ash_coll_k_f32_to_f16, const float *, src, unsigned short *, dst, long long, n,
           float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        dst[i] = ash_k_f2h(src[i] * scale);
}

ASH_KERNEL(ash_coll_k_f16_to_f32, const unsigned short *, src, float *, dst, long long, n,
           float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        dst[i] = scale == 1.0f ? ash_k_h2f(src[i]) : ash_k_h2f(src[i]) * scale;
}

ASH_KERNEL(ash_coll_k_scale_f32, float *, p, long long, n, float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        p[i] = p[i] * scale;
}

ASH_KERNEL(ash_coll_k_scale_bf16, unsigned short *, p, long long, n, float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        p[i] = ash_k_f2bf(ash_k_bf2f(p[i]) * scale);
}

ASH_KERNEL(ash_coll_k_scale_f16, unsigned short *, p, long long, n, float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        p[i] = ash_k_f2h(ash_k_h2f(p[i]) * scale);
}
