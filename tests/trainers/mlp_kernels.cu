/* mlp_kernels.cu — the kernels of the legacy-style MLP test trainer (tests/trainers/mlp.c).
 *
 * Written once with include/ash_kernel.h: nvcc -> build/tests/trainers/mlp_kernels.ptx (embedded in
 * the trainer), cc -> build/tests/trainers/libmlp_kernels_host.so (hostcuda's HOSTCUDA_KERNEL_LIBS).
 * Invariant: every kernel is deterministic. Each output element is owned by exactly one thread and
 * computed by a serial loop in a fixed order; reductions (loss, gradient norm) run in one thread;
 * no float atomics, no __shared__, no __syncthreads (host-mode limits); grid-stride loops, so any
 * launch shape gives bit-identical results. Matrices are row-major; a layer's weight W is
 * [out_dim x in_dim] and its bias b is [out_dim]. Gradient kernels ACCUMULATE (+=) into gradient
 * buffers that the trainer zeroes each step with cuMemsetD32Async.
 * Argument positions (0-based) the data-parallel policy relies on are listed in mlp.c's header.
 */
#include "ash_kernel.h"

#ifndef __CUDACC__
#include <math.h>
#endif

#define MLP_ACT_NONE 0
#define MLP_ACT_TANH 1

/* Forward matmul (C++-mangled on purpose): out[r,o] = act(sum_k in[r,k] * W[o,k] + b[o]).
 * Reads the parameters (W at argument 1, b at argument 2) before anything else touches them in a
 * step: the data-parallel policy broadcasts parameters here.
 * Mangled name: _Z14linear_forwardPfPKfS1_S1_iiii */
ASH_KERNEL_CXX(linear_forward, _Z14linear_forwardPfPKfS1_S1_iiii,
               float *, out, const float *, W, const float *, b, const float *, in,
               int, rows, int, in_dim, int, out_dim, int, act)
{
    long long n = (long long)rows * out_dim;
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT()) {
        int r = (int)(i / out_dim), o = (int)(i % out_dim);
        float s = b[o];
        for (int k = 0; k < in_dim; k++)
            s += in[(long long)r * in_dim + k] * W[(long long)o * in_dim + k];
        out[i] = act == MLP_ACT_TANH ? tanhf(s) : s;
    }
}

/* loss[0] = (1/(rows*cols)) * sum (yhat - y)^2, summed serially in index order by thread 0. */
ASH_KERNEL(mse_loss, float *, loss, const float *, yhat, const float *, y, int, rows, int, cols)
{
    if (ASH_THREAD_ID() != 0)
        return;
    long long n = (long long)rows * cols;
    float s = 0.0f;
    for (long long i = 0; i < n; i++) {
        float d = yhat[i] - y[i];
        s += d * d;
    }
    loss[0] = s / (float)n;
}

/* dy[i] = scale * (yhat[i] - y[i]); the trainer passes scale = 2/(rows*cols), so dy is the
 * gradient of the batch-MEAN loss and every parameter gradient below is a mean over the batch. */
ASH_KERNEL(mse_grad, float *, dy, const float *, yhat, const float *, y, int, n, float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        dy[i] = scale * (yhat[i] - y[i]);
}

/* dW[o,k] += sum_r dout[r,o] * in[r,k]; db[o] += sum_r dout[r,o]. Work items: out_dim*in_dim
 * weight elements, then out_dim bias elements; sums over r in increasing order. */
ASH_KERNEL(linear_backward_weight, float *, dW, float *, db, const float *, dout,
           const float *, in, int, rows, int, in_dim, int, out_dim)
{
    long long nw = (long long)out_dim * in_dim, n = nw + out_dim;
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT()) {
        float s = 0.0f;
        if (i < nw) {
            int o = (int)(i / in_dim), k = (int)(i % in_dim);
            for (int r = 0; r < rows; r++)
                s += dout[(long long)r * out_dim + o] * in[(long long)r * in_dim + k];
            dW[i] += s;
        } else {
            int o = (int)(i - nw);
            for (int r = 0; r < rows; r++)
                s += dout[(long long)r * out_dim + o];
            db[o] += s;
        }
    }
}

/* din[r,k] = (sum_o dout[r,o] * W[o,k]) * act'(in); `in` is the layer input, i.e. the previous
 * layer's activation output (tanh' = 1 - in^2). Overwrites din. */
ASH_KERNEL(linear_backward_input, float *, din, const float *, dout, const float *, W,
           const float *, in, int, rows, int, in_dim, int, out_dim, int, act)
{
    long long n = (long long)rows * in_dim;
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT()) {
        int r = (int)(i / in_dim), k = (int)(i % in_dim);
        float s = 0.0f;
        for (int o = 0; o < out_dim; o++)
            s += dout[(long long)r * out_dim + o] * W[(long long)o * in_dim + k];
        if (act == MLP_ACT_TANH)
            s *= 1.0f - in[i] * in[i];
        din[i] = s;
    }
}

/* out[0] = sum of grads[i]^2 over ALL n gradients, serially in index order by thread 0
 * (like llm.c's global_norm_squared_kernel, but deterministic). grads: argument 1, n: argument 2. */
ASH_KERNEL(grad_norm_squared, float *, out, const float *, grads, int, n)
{
    if (ASH_THREAD_ID() != 0)
        return;
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += grads[i] * grads[i];
    out[0] = s;
}

/* scale[0] = min(1, max_norm / sqrt(norm_squared[0])) (1 when the norm is 0). */
ASH_KERNEL(clip_scale, float *, scale, const float *, norm_squared, float, max_norm)
{
    if (ASH_THREAD_ID() != 0)
        return;
    float norm = sqrtf(norm_squared[0]);
    scale[0] = norm > max_norm ? max_norm / norm : 1.0f;
}

/* params[i] -= lr * (clip_scale[0] * grads[i]). grads: argument 1, n: argument 2. */
ASH_KERNEL(sgd_update, float *, params, const float *, grads, int, n, float, lr,
           const float *, clip_scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT()) {
        float g = clip_scale[0] * grads[i];
        params[i] -= lr * g;
    }
}

/* Adam (no weight decay), step t >= 1: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 * params -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps), with g = clip_scale[0] * grads[i].
 * grads: argument 1, n: argument 4 (the same positions as llm.c's adamw_kernel2). */
ASH_KERNEL(adam_update, float *, params, const float *, grads, float *, m, float *, v, int, n,
           float, lr, float, b1, float, b2, float, eps, int, t, const float *, clip_scale)
{
    float bc1 = 1.0f - powf(b1, (float)t), bc2 = 1.0f - powf(b2, (float)t);
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT()) {
        float g = clip_scale[0] * grads[i];
        float mi = b1 * m[i] + (1.0f - b1) * g;
        float vi = b2 * v[i] + (1.0f - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        params[i] -= lr * (mi / bc1) / (sqrtf(vi / bc2) + eps);
    }
}
