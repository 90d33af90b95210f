/* test_ptx_llmc.c — proves kernels that no one here wrote run correctly through hostcuda's PTX
 * interpreter: six of llm.c's train_gpt2_fp32.cu kernels, from the PTX nvcc makes of the
 * third-party source at build time (llmc_fp32.ptx next to this binary; -O3 --use_fast_math, as
 * llm.c builds them), launched as llm.c's host code launches them, on small shapes, against C
 * references of the computations written here from their definitions: encoder_forward_kernel3
 * (float4 loads), layernorm_forward_kernel3 and softmax_forward_kernel5 (cooperative groups:
 * thread_block_tile<32>, cg::reduce), residual_forward_kernel (__ldcs), gelu_forward_kernel,
 * matmul_backward_bias_kernel4 (dynamic shared memory, __syncthreads). Bounds: exact for the adds;
 * otherwise the stated absolute bound (fast-math: ex2/rsqrt/tanh .approx, sums in another order).
 * Negative control: the layernorm result against the reference with a bias moved by 1e-3 differs.
 * Skips (77) without the PTX (no ../shared/thirdparty at build time) or without an interpreter.
 */
#include "ptxt.h"

#include <math.h>

static char *ptx;
static int T, FAILED;

static void tcase(int ok, const char *what)
{
    printf("%s %d - %s\n", ok ? "ok" : "not ok", ++T, what);
    FAILED += !ok;
}

/* the mangled entry whose name contains BASE (llm.c's kernels are C++ functions) */
static CUfunction entry(CUmodule m, const char *base)
{
    char key[160], name[256];
    snprintf(key, sizeof key, "%s", base);
    for (const char *p = strstr(ptx, ".entry "); p; p = strstr(p + 1, ".entry ")) {
        const char *n = p + 7, *e = strchr(n, '(');
        if (!e || (size_t)(e - n) >= sizeof name)
            continue;
        memcpy(name, n, (size_t)(e - n));
        name[e - n] = 0;
        if (strstr(name, key)) {
            CUfunction f;
            return cuModuleGetFunction(&f, m, name) == CUDA_SUCCESS ? f : NULL;
        }
    }
    return NULL;
}

static void fill(float *p, int n, float lo, float hi, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = lo + (hi - lo) * (float)(seed >> 8) / 16777216.0f;
    }
}
static CUdeviceptr up(const void *p, size_t bytes)
{
    CUdeviceptr d;
    PTXT_CHECK(cuMemAlloc(&d, bytes));
    PTXT_CHECK(cuMemcpyHtoD(d, p, bytes));
    return d;
}
static CUresult run(CUfunction f, unsigned grid, unsigned block, unsigned shmem, void **args)
{
    if (!f)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, NULL, args, NULL);
    if (r == CUDA_SUCCESS)
        r = cuCtxSynchronize();
    if (r != CUDA_SUCCESS)
        printf("#   launch: %s\n", ptxt_err(r));
    return r;
}
/* max |got - want| over n, printing the worst; <= bound is a pass */
static int within(const char *what, const float *got, const double *want, int n, double bound)
{
    double worst = 0;
    int at = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= worst))
            worst = d, at = i;
        if (isnan(got[i]))
            worst = INFINITY, at = i;
    }
    int ok = worst <= bound;
    printf("#   %s: max |diff| %.3g at %d (got %.9g, expected %.9g), bound %.3g\n", what, worst, at, (double)got[at],
           want[at], bound);
    return ok;
}

int main(int argc, char **argv)
{
    char dir[4096], path[4200];
    ptxt_self_dir(argv[0], dir, sizeof dir);
    snprintf(path, sizeof path, "%s/llmc_fp32.ptx", dir);
    FILE *probe = fopen(argc > 1 ? argv[1] : path, "rb");
    if (!probe) {
        printf("1..0 # SKIP %s is not built (no llm.c in ACCELSHIM_THIRDPARTY at build time)\n", path);
        return 77;
    }
    fclose(probe);
    ptx = ptxt_slurp(argc > 1 ? argv[1] : path);
    ptxt_start();
    ptxt_need_interpreter(ptx, "_Z22matmul_forward_kernel4PfPKfS1_S1_ii");
    CUmodule m;
    PTXT_CHECK(cuModuleLoadData(&m, ptx));
    enum { B = 2, TT = 8, C = 64, NH = 4, V = 50 };
    int BT = B * TT;

    /* encoder: out[b,t,:] = wte[inp[b,t],:] + wpe[t,:] */
    {
        static int tok[B * TT];
        static float wte[V * C], wpe[TT * C], out[B * TT * C];
        static double want[B * TT * C];
        for (int i = 0; i < BT; i++)
            tok[i] = (i * 17 + 3) % V;
        fill(wte, V * C, -1, 1, 1), fill(wpe, TT * C, -1, 1, 2);
        CUdeviceptr dt = up(tok, sizeof tok), dw = up(wte, sizeof wte), dp = up(wpe, sizeof wpe), dout;
        PTXT_CHECK(cuMemAlloc(&dout, sizeof out));
        int b = B, t = TT, c = C;
        void *args[] = {&dout, &dt, &dw, &dp, &b, &t, &c};
        int ok = run(entry(m, "encoder_forward_kernel3"), (unsigned)(BT * C / 4 + 511) / 512, 512, 0, args) == CUDA_SUCCESS;
        if (ok) {
            PTXT_CHECK(cuMemcpyDtoH(out, dout, sizeof out));
            for (int i = 0; i < BT; i++)
                for (int k = 0; k < C; k++)
                    want[i * C + k] = (double)(wte[tok[i] * C + k] + wpe[(i % TT) * C + k]);
            ok = within("encoder", out, want, BT * C, 0);
        }
        tcase(ok, "llm.c encoder_forward_kernel3 (float4): exact");
    }
    /* layernorm over rows of C */
    {
        static float x[B * TT * C], w[C], bias[C], out[B * TT * C], mean[B * TT], rstd[B * TT];
        static double want[B * TT * C], wm[B * TT], wr[B * TT];
        fill(x, BT * C, -2, 2, 3), fill(w, C, 0.5f, 1.5f, 4), fill(bias, C, -0.1f, 0.1f, 5);
        CUdeviceptr dx = up(x, sizeof x), dw = up(w, sizeof w), db = up(bias, sizeof bias), dout, dm, dr;
        PTXT_CHECK(cuMemAlloc(&dout, sizeof out));
        PTXT_CHECK(cuMemAlloc(&dm, sizeof mean));
        PTXT_CHECK(cuMemAlloc(&dr, sizeof rstd));
        int n = BT, c = C;
        void *args[] = {&dout, &dm, &dr, &dx, &dw, &db, &n, &c};
        int ok = run(entry(m, "layernorm_forward_kernel3"), (unsigned)(n * 32 + 511) / 512, 512, 0, args) == CUDA_SUCCESS;
        if (ok) {
            PTXT_CHECK(cuMemcpyDtoH(out, dout, sizeof out));
            PTXT_CHECK(cuMemcpyDtoH(mean, dm, sizeof mean));
            PTXT_CHECK(cuMemcpyDtoH(rstd, dr, sizeof rstd));
            for (int i = 0; i < BT; i++) {
                double s = 0, v = 0;
                for (int k = 0; k < C; k++)
                    s += x[i * C + k];
                s /= C;
                for (int k = 0; k < C; k++)
                    v += (x[i * C + k] - s) * (x[i * C + k] - s);
                double r = 1.0 / sqrt(v / C + 1e-5);
                wm[i] = s, wr[i] = r;
                for (int k = 0; k < C; k++)
                    want[i * C + k] = r * (x[i * C + k] - s) * w[k] + bias[k];
            }
            ok = within("layernorm out", out, want, BT * C, 1e-4) & within("layernorm mean", mean, wm, BT, 1e-6) &
                 within("layernorm rstd", rstd, wr, BT, 1e-5);
            for (int k = 0; k < C; k++)   /* negative control: another bias must not match */
                for (int i = 0; i < BT; i++)
                    want[i * C + k] += 1e-3;
            tcase(!within("negative control (bias + 1e-3)", out, want, BT * C, 1e-4),
                  "negative control: the layernorm result differs from a reference with the bias moved by 1e-3");
        }
        tcase(ok, "llm.c layernorm_forward_kernel3 (cooperative groups, cg::reduce): within 1e-4");
    }
    /* causal softmax over (B*NH, T, T) with a temperature */
    {
        enum { N = B * NH };
        static float x[N * TT * TT], out[N * TT * TT];
        static double want[N * TT * TT];
        fill(x, N * TT * TT, -3, 3, 6);
        CUdeviceptr dx = up(x, sizeof x), dout;
        PTXT_CHECK(cuMemAlloc(&dout, sizeof out));
        PTXT_CHECK(cuMemsetD32(dout, 0, N * TT * TT));
        float inv_t = 0.35f;
        int n = N, t = TT;
        void *args[] = {&dout, &inv_t, &dx, &n, &t};
        int ok = run(entry(m, "softmax_forward_kernel5"), (unsigned)(N * TT * 32 + 255) / 256, 256, 0, args) == CUDA_SUCCESS;
        if (ok) {
            PTXT_CHECK(cuMemcpyDtoH(out, dout, sizeof out));
            for (int r = 0; r < N * TT; r++) {
                int own = r % TT;
                const float *row = x + r * TT;
                double mx = -INFINITY, s = 0;
                for (int i = 0; i <= own; i++)
                    mx = row[i] > mx ? row[i] : mx;
                for (int i = 0; i <= own; i++)
                    s += exp(inv_t * (row[i] - mx));
                for (int i = 0; i < TT; i++)
                    want[r * TT + i] = i <= own ? exp(inv_t * (row[i] - mx)) / s : 0.0;
            }
            ok = within("softmax", out, want, N * TT * TT, 1e-5);
        }
        tcase(ok, "llm.c softmax_forward_kernel5 (online softmax, float4, cg::reduce max and sum): within 1e-5");
    }
    /* residual and gelu, elementwise */
    {
        enum { NE = 1000 };
        static float a[NE], b2[NE], out[NE];
        static double want[NE];
        fill(a, NE, -3, 3, 7), fill(b2, NE, -3, 3, 8);
        CUdeviceptr da = up(a, sizeof a), db = up(b2, sizeof b2), dout;
        PTXT_CHECK(cuMemAlloc(&dout, sizeof out));
        int n = NE;
        void *ra[] = {&dout, &da, &db, &n};
        int ok = run(entry(m, "residual_forward_kernel"), (NE + 255) / 256, 256, 0, ra) == CUDA_SUCCESS;
        if (ok) {
            PTXT_CHECK(cuMemcpyDtoH(out, dout, sizeof out));
            for (int i = 0; i < NE; i++)
                want[i] = (double)(a[i] + b2[i]);
            ok = within("residual", out, want, NE, 0);
        }
        tcase(ok, "llm.c residual_forward_kernel (__ldcs): exact");
        void *ga[] = {&dout, &da, &n};
        ok = run(entry(m, "gelu_forward_kernel"), (NE + 127) / 128, 128, 0, ga) == CUDA_SUCCESS;
        if (ok) {
            PTXT_CHECK(cuMemcpyDtoH(out, dout, sizeof out));
            for (int i = 0; i < NE; i++) {
                double xi = a[i];
                want[i] = 0.5 * xi * (1.0 + tanh(sqrt(2.0 / M_PI) * (xi + 0.044715 * xi * xi * xi)));
            }
            /* --use_fast_math: tanh.approx.f32, relative error 2^-11, times 0.5|x| <= 1.5 */
            ok = within("gelu", out, want, NE, 1e-3);
        }
        tcase(ok, "llm.c gelu_forward_kernel (fast-math tanh): within 1e-3");
    }
    /* bias gradient: dbias[oc] += sum over rows of dout[row, oc] */
    {
        enum { OC = 96, ROWS = B * TT, BLOCK = 128 };
        static float dout[ROWS * OC], db[OC];
        static double want[OC];
        fill(dout, ROWS * OC, -1, 1, 9);
        for (int i = 0; i < OC; i++)
            db[i] = 0.25f;
        CUdeviceptr dd = up(dout, sizeof dout), ddb = up(db, sizeof db);
        int b = B, t = TT, oc = OC;
        void *args[] = {&ddb, &dd, &b, &t, &oc};
        int ok = run(entry(m, "matmul_backward_bias_kernel4"), OC / 32, BLOCK, BLOCK * 4, args) == CUDA_SUCCESS;
        if (ok) {
            PTXT_CHECK(cuMemcpyDtoH(db, ddb, sizeof db));
            for (int o = 0; o < OC; o++) {
                double s = 0.25;
                for (int r = 0; r < ROWS; r++)
                    s += dout[r * OC + o];
                want[o] = s;
            }
            ok = within("bias", db, want, OC, 1e-5);
        }
        tcase(ok, "llm.c matmul_backward_bias_kernel4 (dynamic shared memory, barriers): within 1e-5");
    }
    printf("1..%d\n", T);
    return FAILED ? 1 : 0;
}
