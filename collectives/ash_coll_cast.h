/* ash_coll_cast.h — private to collectives/: host f32 <-> bf16 / f16 conversions.
 *
 * What: the CPU twins of the GPU intrinsics __float2bfloat16_rn / __float2half_rn (round to
 * nearest even, overflow to Inf, subnormals kept, every NaN -> canonical 0x7FFF, as PTX
 * cvt.rn.{bf16,f16}.f32 and CUDA's own host fallbacks in cuda_bf16.hpp / cuda_fp16.hpp do) and
 * the exact upcasts (bf16 -> f32 keeps NaN payloads like the GPU's shift; f16 NaN -> 0x7FFFFFFF as
 * cuda_fp16.hpp's __half2float host path). Used by the mpi backend, by the host build of
 * cast_kernels.cu (so hostcuda runs the same arithmetic) and by the tests. Pure functions, any
 * thread. Plain C11; no dependencies.
 */
#ifndef ASH_COLL_CAST_H
#define ASH_COLL_CAST_H

#include <stdint.h>
#include <string.h>

static inline uint32_t ash_coll_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float ash_coll_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t ash_coll_f32_to_bf16_rn(float f)
{
    uint32_t x = ash_coll_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return 0x7fffu;                                  /* NaN -> canonical */
    x += 0x7fffu + ((x >> 16) & 1u);                     /* RNE; overflow carries into Inf */
    return (uint16_t)(x >> 16);
}

static inline float ash_coll_bf16_to_f32(uint16_t h)
{
    return ash_coll_bits_f32((uint32_t)h << 16);
}

static inline uint16_t ash_coll_f32_to_f16_rn(float f)
{
    uint32_t x = ash_coll_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t u = x & 0x7fffffffu;
    uint32_t h, rem, half, shift, m;

    if (u > 0x7f800000u)
        return 0x7fffu;                                  /* NaN -> canonical */
    if (u >= 0x38800000u) {                              /* >= 2^-14: normal f16 (or overflow) */
        if (u >= 0x47800000u)                            /* >= 2^16 (incl. Inf): Inf */
            return (uint16_t)(sign | 0x7c00u);
        u -= 0x38000000u;                                /* rebias exponent 127 -> 15 */
        h = u >> 13;
        rem = u & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
            h++;                                         /* may carry into the exponent / Inf */
        return (uint16_t)(sign | h);
    }
    if (u <= 0x33000000u)                                /* <= 2^-25: 0 (2^-25 ties to even 0) */
        return (uint16_t)sign;
    shift = 126u - (u >> 23);                            /* 14 .. 24: subnormal f16 */
    m = (u & 0x7fffffu) | 0x800000u;
    h = m >> shift;
    rem = m & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (h & 1u)))
        h++;                                             /* may become the smallest normal */
    return (uint16_t)(sign | h);
}

static inline float ash_coll_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t m = (uint32_t)h & 0x3ffu;
    float r;

    if (e == 0x1fu)
        return ash_coll_bits_f32(m ? 0x7fffffffu : (sign | 0x7f800000u));
    if (e == 0) {
        r = (float)m * 5.9604644775390625e-8f;           /* m * 2^-24, exact */
        return ash_coll_bits_f32(ash_coll_f32_bits(r) | sign);
    }
    return ash_coll_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

#endif /* ASH_COLL_CAST_H */
