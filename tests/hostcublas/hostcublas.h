/* hostcublas.h — private to tests/hostcublas: the GEMM both test doubles (libcublas.so.13 and
 * libcublasLt.so.13) run on hostcuda memory, and the rounding of each compute type.
 *
 * Arithmetic: column-major as cuBLAS; C(i,j) = alpha * sum_p opA(i,p) * opB(p,j) + beta * C(i,j),
 * the sum in fp32, p increasing; beta == 0 does not read C. A FAST compute type first rounds
 * every A and B element to its type (TF32: 10-bit mantissa, round to nearest even; 16BF: bf16
 * RNE; 16F: f16 RNE with overflow to Inf), so each product is exact in fp32, as on tensor cores;
 * CUBLAS_COMPUTE_32F / _PEDANTIC round nothing. Work is stream-ordered: the caller enqueues
 * hostcublas_gemm_run with cuLaunchHostFunc; device pointers are translated with
 * hostcuda_host_view when the work runs (non-device pointers are used as they are).
 */
#ifndef HOSTCUBLAS_H
#define HOSTCUBLAS_H

#include "../../collectives/ash_coll_cast.h"
#include "hostcuda.h"

#include <cublas_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HOSTCUBLAS_API __attribute__((visibility("default")))

typedef enum { HCB_ROUND_NONE, HCB_ROUND_TF32, HCB_ROUND_BF16, HCB_ROUND_F16 } hcb_round_t;

static inline int hcb_round_of(cublasComputeType_t ct, hcb_round_t *out)
{
    switch (ct) {
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: *out = HCB_ROUND_NONE; return 0;
    case CUBLAS_COMPUTE_32F_FAST_TF32: *out = HCB_ROUND_TF32; return 0;
    case CUBLAS_COMPUTE_32F_FAST_16BF: *out = HCB_ROUND_BF16; return 0;
    case CUBLAS_COMPUTE_32F_FAST_16F: *out = HCB_ROUND_F16; return 0;
    default: return -1;
    }
}

static inline float hcb_round(hcb_round_t r, float x)
{
    uint32_t u;
    switch (r) {
    case HCB_ROUND_TF32:
        memcpy(&u, &x, 4);
        if ((u & 0x7f800000u) == 0x7f800000u)
            return x; /* Inf / NaN */
        u += 0xfffu + ((u >> 13) & 1u);
        u &= ~0x1fffu;
        memcpy(&x, &u, 4);
        return x;
    case HCB_ROUND_BF16: return ash_coll_bf16_to_f32(ash_coll_f32_to_bf16_rn(x));
    case HCB_ROUND_F16: return ash_coll_f16_to_f32(ash_coll_f32_to_f16_rn(x));
    default: return x;
    }
}

/* a pointer as host code may use it: hostcuda's view of device memory, else itself */
static inline void *hcb_view(const void *p)
{
    void *v = p ? hostcuda_host_view((CUdeviceptr)(uintptr_t)p) : NULL;
    return v ? v : (void *)(uintptr_t)p;
}

/* One queued GEMM (or a batch). ptr_arrays: A/B/C hold device arrays of per-batch pointers. */
typedef struct {
    int transa, transb; /* 0: N, else T (real data: C == T) */
    long long m, n, k, lda, ldb, ldc, sa, sb, sc;
    int batch, ptr_arrays;
    float alpha, beta;
    hcb_round_t round;
    const void *A, *B;
    const void *Cin; /* read for beta != 0 (Lt: C; BLAS: == Cout) */
    void *Cout;
    long long ldcin, scin;
} hcb_gemm_t;

static inline void hcb_gemm_one(const hcb_gemm_t *g, const float *A, const float *B, const float *Cin,
                                float *C)
{
    for (long long j = 0; j < g->n; j++) {
        for (long long i = 0; i < g->m; i++) {
            float s = 0.0f;
            for (long long p = 0; p < g->k; p++) {
                float a = g->transa ? A[p + i * g->lda] : A[i + p * g->lda];
                float b = g->transb ? B[j + p * g->ldb] : B[p + j * g->ldb];
                s += hcb_round(g->round, a) * hcb_round(g->round, b);
            }
            float v = g->alpha * s;
            if (g->beta != 0.0f)
                v += g->beta * Cin[i + j * g->ldcin];
            C[i + j * g->ldc] = v;
        }
    }
}

static void hostcublas_gemm_run(void *arg)
{
    hcb_gemm_t *g = arg;
    for (int b = 0; b < g->batch; b++) {
        const float *A, *B, *Cin;
        float *C;
        if (g->ptr_arrays) {
            A = hcb_view(((const void *const *)hcb_view(g->A))[b]);
            B = hcb_view(((const void *const *)hcb_view(g->B))[b]);
            C = hcb_view(((void *const *)hcb_view(g->Cout))[b]);
            Cin = C;
        } else {
            A = (const float *)hcb_view(g->A) + b * g->sa;
            B = (const float *)hcb_view(g->B) + b * g->sb;
            C = (float *)hcb_view(g->Cout) + b * g->sc;
            Cin = (const float *)hcb_view(g->Cin) + b * g->scin;
        }
        hcb_gemm_one(g, A, B, Cin, C);
    }
    free(g);
}

/* Queue G (heap-allocated; freed when it has run) on STREAM. */
static inline cublasStatus_t hostcublas_enqueue(hcb_gemm_t *g, CUstream stream)
{
    if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0) {
        free(g);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (g->m == 0 || g->n == 0 || g->batch == 0) {
        free(g);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (cuLaunchHostFunc(stream, hostcublas_gemm_run, g) != CUDA_SUCCESS) {
        free(g);
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

#endif /* HOSTCUBLAS_H */
