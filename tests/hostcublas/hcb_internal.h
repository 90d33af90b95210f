/* hcb_internal.h — private to libcublas.so.13's sources (hostcublas.c, hcb_blas.c): the handle,
 * the queueing of host work on the handle's stream, element access, and scalars as the pointer
 * mode gives them. Work queued with hcb_submit runs in the stream's order on hostcuda's worker;
 * a scalar in pointer mode device is read, and device results written, when that work runs.
 */
#ifndef HCB_INTERNAL_H
#define HCB_INTERNAL_H

#include "hostcublas.h"

#include <cublas_v2.h>

struct cublasContext {
    CUstream stream;
    cublasMath_t math;
    cublasPointerMode_t pm;
    cublasAtomicsMode_t atomics;
    void *workspace;
    size_t workspace_size;
};

static inline int hcb_op_ok(cublasOperation_t op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

/* ---- common: queueing, element access --------------------------------------------------------- */

/* Queue FN(ARG) (ARG heap-allocated, freed by FN) on STREAM; WAIT: return only once it has run. */
static inline cublasStatus_t hcb_submit(CUstream stream, void (*fn)(void *), void *arg, int wait)
{
    if (cuLaunchHostFunc(stream, fn, arg) != CUDA_SUCCESS) {
        free(arg);
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    if (wait && cuStreamSynchronize(stream) != CUDA_SUCCESS)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}

static inline double hcb_ld(int dbl, const void *p, long long i)
{
    return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static inline void hcb_st(int dbl, void *p, long long i, double v)
{
    if (dbl)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

/* index of a vector's first element: the reference BLAS walks a negative increment from the end */
static inline long long hcb_base(long long n, long long inc)
{
    return inc < 0 ? (1 - n) * inc : 0;
}

/* a scalar argument: its value now (pointer mode host) or its device address (read when run) */
typedef struct {
    double v;
    const void *dev;
} hcb_scalar_t;

static inline hcb_scalar_t hcb_scalar(cublasHandle_t h, int dbl, const void *p)
{
    hcb_scalar_t s = {0, NULL};
    if (h->pm == CUBLAS_POINTER_MODE_DEVICE)
        s.dev = p;
    else
        s.v = hcb_ld(dbl, p, 0);
    return s;
}

static inline double hcb_scalar_get(hcb_scalar_t s, int dbl)
{
    return s.dev ? hcb_ld(dbl, hcb_view(s.dev), 0) : s.v;
}

#endif /* HCB_INTERNAL_H */
