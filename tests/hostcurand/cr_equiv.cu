// cr_equiv.cu — cuRAND's host API (whatever libcurand.so.10 is on the library path) against
// NVIDIA's device API (curand_kernel.h) run as a kernel. The ordering checked is the documented
// default one as hostcurand reads it (README.md, hostcurand): result n of a call is item
// i = (offset + n) / m of the generator (m = 2 for normals, else 1), from stream i % 4096 =
// curand_init(seed, i % 4096, (i / 4096) * c) with c raw values per item.
// MTGP32 (case mtgp): result n is S((n / 256) % 64) at n % 256 + 256 * (n / 16384), S(b) the
// device API's block b of 256 threads (curandMakeMTGP32KernelState's states, parameter set b).
// Cases (argv[1]): equiv (every generator x distribution, device and host generators, offsets,
// continued calls), status (documented error codes), stream (curandSetStream ordering against
// kernels on the same stream), control (a wrong seed / a shifted offset must be told apart: exits
// 0 only when every control mismatches, MTGP32's too). Exit 0 when all checks pass, 1 otherwise.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <curand.h>
#include <curand_kernel.h>
#include <curand_mtgp32_host.h>
#include <curand_mtgp32dc_p_11213.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

enum { D_U32, D_UNIF, D_UNIF_D, D_NORM, D_NORM_D, D_LOGN, D_LOGN_D, D_COUNT };
static const char *dist_name[] = {"Generate", "Uniform", "UniformDouble", "Normal", "NormalDouble",
                                  "LogNormal", "LogNormalDouble"};
__host__ __device__ static bool is_double(int d) { return d == D_UNIF_D || d == D_NORM_D || d == D_LOGN_D; }
__host__ __device__ static bool is_pair(int d) { return d >= D_NORM; }
static int raw_per_item(curandRngType_t t, int d)
{
    switch (d) {
    case D_U32: case D_UNIF: return 1;
    case D_UNIF_D: return t == CURAND_RNG_PSEUDO_XORWOW ? 2 : 1;
    case D_NORM: case D_LOGN: return 2;
    default: return t == CURAND_RNG_PSEUDO_MRG32K3A ? 2 : 4;
    }
}

template <class S>
__global__ void ref_kernel(unsigned long long seed, unsigned long long off, int d, int c,
                           const unsigned long long *idx, int n, unsigned long long *out, float mean, float sd)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    unsigned long long g = off + idx[k], m = is_pair(d) ? 2 : 1, i = g / m;
    S s;
    curand_init(seed, i % 4096, (i / 4096) * c, &s);
    float f = 0;
    double v = 0;
    bool dbl = false;
    switch (d) {
    case D_U32: { unsigned u = curand(&s); out[k] = u; return; }
    case D_UNIF: f = curand_uniform(&s); break;
    case D_UNIF_D: v = curand_uniform_double(&s); dbl = true; break;
    case D_NORM: { float a = curand_normal(&s), b = curand_normal(&s); f = (g % 2 ? b : a) * sd + mean; break; }
    case D_NORM_D: { double a = curand_normal_double(&s), b = curand_normal_double(&s);
                     v = (g % 2 ? b : a) * (double)sd + (double)mean; dbl = true; break; }
    case D_LOGN: { float a = curand_log_normal(&s, mean, sd), b = curand_log_normal(&s, mean, sd);
                   f = g % 2 ? b : a; break; }
    case D_LOGN_D: { double a = curand_log_normal_double(&s, mean, sd), b = curand_log_normal_double(&s, mean, sd);
                     v = g % 2 ? b : a; dbl = true; break; }
    }
    if (dbl)
        out[k] = __double_as_longlong(v);
    else
        out[k] = (unsigned)__float_as_int(f);
}

static const char *type_name(curandRngType_t t)
{
    return t == CURAND_RNG_PSEUDO_XORWOW ? "XORWOW" : t == CURAND_RNG_PSEUDO_PHILOX4_32_10 ? "PHILOX4_32_10"
         : t == CURAND_RNG_PSEUDO_MTGP32 ? "MTGP32" : t == CURAND_RNG_QUASI_SOBOL32 ? "SOBOL32"
         : t == CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 ? "SCRAMBLED_SOBOL32" : "MRG32K3A";
}

// the device API's values for results idx[] of a generator (seed, offset), as 64-bit patterns
static std::vector<unsigned long long> reference(curandRngType_t t, unsigned long long seed, unsigned long long off,
                                                 int d, const std::vector<unsigned long long> &idx, float mean, float sd)
{
    int n = (int)idx.size(), c = raw_per_item(t, d);
    unsigned long long *didx, *dout;
    CK(cudaMalloc(&didx, n * 8));
    CK(cudaMalloc(&dout, n * 8));
    CK(cudaMemcpy(didx, idx.data(), n * 8, cudaMemcpyHostToDevice));
    int b = 128, grid = (n + b - 1) / b;
    if (t == CURAND_RNG_PSEUDO_XORWOW)
        ref_kernel<curandStateXORWOW_t><<<grid, b>>>(seed, off, d, c, didx, n, dout, mean, sd);
    else if (t == CURAND_RNG_PSEUDO_PHILOX4_32_10)
        ref_kernel<curandStatePhilox4_32_10_t><<<grid, b>>>(seed, off, d, c, didx, n, dout, mean, sd);
    else
        ref_kernel<curandStateMRG32k3a_t><<<grid, b>>>(seed, off, d, c, didx, n, dout, mean, sd);
    CK(cudaGetLastError());
    std::vector<unsigned long long> r(n);
    CK(cudaMemcpy(r.data(), dout, n * 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(didx));
    CK(cudaFree(dout));
    return r;
}

// the host API's results 0..n-1 after curandSetGeneratorOffset(off), as 64-bit patterns; split > 0:
// two calls (split, n - split) that must continue one another
static int host_api(curandRngType_t t, bool hostgen, unsigned long long seed, unsigned long long off, int d,
                    size_t n, size_t split, float mean, float sd, std::vector<unsigned long long> &res,
                    unsigned dims = 0)
{
    curandGenerator_t g;
    int st = hostgen ? curandCreateGeneratorHost(&g, t) : curandCreateGenerator(&g, t);
    if (st) { printf("FAIL create %s: status %d\n", type_name(t), st); return st; }
    if ((dims ? (st = curandSetQuasiRandomGeneratorDimensions(g, dims)) : (st = curandSetPseudoRandomGeneratorSeed(g, seed))) ||
        (st = curandSetGeneratorOffset(g, off))) {
        printf("FAIL seed/dimensions/offset: status %d\n", st); return st;
    }
    size_t es = is_double(d) ? 8 : 4;
    void *buf = nullptr;
    if (hostgen)
        buf = malloc(n * es);
    else
        CK(cudaMalloc(&buf, n * es));
    size_t parts[2] = {split ? split : n, split ? n - split : 0}, at = 0;
    for (int p = 0; p < 2 && parts[p]; at += parts[p], p++) {
        void *o = (char *)buf + at * es;
        size_t k = parts[p];
        switch (d) {
        case D_U32: st = curandGenerate(g, (unsigned *)o, k); break;
        case D_UNIF: st = curandGenerateUniform(g, (float *)o, k); break;
        case D_UNIF_D: st = curandGenerateUniformDouble(g, (double *)o, k); break;
        case D_NORM: st = curandGenerateNormal(g, (float *)o, k, mean, sd); break;
        case D_NORM_D: st = curandGenerateNormalDouble(g, (double *)o, k, mean, sd); break;
        case D_LOGN: st = curandGenerateLogNormal(g, (float *)o, k, mean, sd); break;
        case D_LOGN_D: st = curandGenerateLogNormalDouble(g, (double *)o, k, mean, sd); break;
        }
        if (st) { printf("FAIL curand%s %s: status %d\n", dist_name[d], type_name(t), st); return st; }
    }
    std::vector<unsigned char> h(n * es);
    if (hostgen) {
        memcpy(h.data(), buf, n * es);
        free(buf);
    } else {
        CK(cudaMemcpy(h.data(), buf, n * es, cudaMemcpyDeviceToHost));
        CK(cudaFree(buf));
    }
    res.resize(n);
    for (size_t i = 0; i < n; i++) {
        unsigned long long v = 0;
        memcpy(&v, &h[i * es], es);
        res[i] = v;
    }
    curandDestroyGenerator(g);
    return 0;
}

static double as_num(unsigned long long v, int d)
{
    if (is_double(d)) { double x; memcpy(&x, &v, 8); return x; }
    if (d == D_U32) return (double)v;
    unsigned u = (unsigned)v; float f; memcpy(&f, &u, 4); return f;
}

// equal: bit-exact for bits and uniforms; normals within a relative 4e-6 (float) / 1e-13 (double):
// the device's logf/sincosf are not the host's libm (the count of bit-exact ones is printed)
static int compare(const char *what, int d, const std::vector<unsigned long long> &idx,
                   const std::vector<unsigned long long> &host, const std::vector<unsigned long long> &ref,
                   bool quiet, int *exact_out)
{
    int bad = 0, exact = 0;
    double tol = is_double(d) ? 1e-13 : 4e-6;
    for (size_t k = 0; k < idx.size(); k++) {
        unsigned long long h = host[idx[k]], r = ref[k];
        if (h == r) { exact++; continue; }
        double a = as_num(h, d), b = as_num(r, d);
        if (is_pair(d) && std::fabs(a - b) <= tol * std::fmax(1.0, std::fabs(b)))
            continue;
        if (!bad && !quiet)
            printf("FAIL %s: result %llu: host API %.17g (0x%llx), device API %.17g (0x%llx)\n", what, idx[k], a, h, b, r);
        bad++;
    }
    if (exact_out) *exact_out = exact;
    return bad;
}

static std::vector<unsigned long long> sample(size_t n)
{
    std::vector<unsigned long long> idx;
    for (unsigned long long i = 0; i < n; i++)
        if (i < 160 || (i >= 4000 && i < 4300) || i + 100 >= n)
            idx.push_back(i);
    return idx;
}

static const curandRngType_t types[] = {CURAND_RNG_PSEUDO_XORWOW, CURAND_RNG_PSEUDO_PHILOX4_32_10,
                                        CURAND_RNG_PSEUDO_MRG32K3A};

static int case_equiv()
{
    int fails = 0;
    const size_t n = 4500;
    std::vector<unsigned long long> idx = sample(n);
    struct { unsigned long long seed, off; bool host; size_t split; } runs[] = {
        {1234ULL, 0, false, 0}, {0x123456789abcdefULL, 8191, false, 1000}, {42ULL, 100002, true, 0},
        {7ULL, 1000000000007ULL, false, 2501}};
    for (curandRngType_t t : types)
        for (int d = 0; d < D_COUNT; d++)
            for (auto &r : runs) {
                unsigned long long off = is_pair(d) ? r.off & ~1ULL : r.off;
                size_t split = is_pair(d) ? r.split & ~(size_t)1 : r.split;
                float mean = d == D_LOGN || d == D_LOGN_D ? 0.5f : 1.5f, sd = d == D_LOGN || d == D_LOGN_D ? 0.25f : 2.0f;
                std::vector<unsigned long long> host;
                if (host_api(t, r.host, r.seed, off, d, n, split, mean, sd, host)) { fails++; continue; }
                std::vector<unsigned long long> ref = reference(t, r.seed, off, d, idx, mean, sd);
                char what[160];
                snprintf(what, sizeof what, "%s curand%s seed %llu offset %llu %s%s", type_name(t), dist_name[d],
                         r.seed, off, r.host ? "host generator" : "device generator", split ? " in two calls" : "");
                int exact, bad = compare(what, d, idx, host, ref, false, &exact);
                if (bad) { fails++; printf("  (%d of %zu differ)\n", bad, idx.size()); }
                else printf("ok %s: %zu results = device API (%d bit-exact)\n", what, idx.size(), exact);
            }
    // one call larger than hostcurand's 2^20-result write chunks: the seams are checked
    const size_t big = (1u << 21) + 10;
    std::vector<unsigned long long> seams;
    for (unsigned long long i = 0; i < big; i++)
        if (i < 16 || (i + 40 >= (1u << 20) && i < (1u << 20) + 40) || (i + 40 >= (1u << 21) && i < (1u << 21) + 40) ||
            i + 16 >= big)
            seams.push_back(i);
    for (curandRngType_t t : types)
        for (int d : {D_UNIF, D_NORM_D}) {
            std::vector<unsigned long long> host;
            if (host_api(t, false, 5, 3, d, big, 0, 0.f, 1.f, host)) { fails++; continue; }
            std::vector<unsigned long long> ref = reference(t, 5, 3, d, seams, 0.f, 1.f);
            char what[128];
            snprintf(what, sizeof what, "%s curand%s of %zu results in one call", type_name(t), dist_name[d], big);
            int exact, bad = compare(what, d, seams, host, ref, false, &exact);
            if (bad) { fails++; printf("  (%d of %zu differ)\n", bad, seams.size()); }
            else printf("ok %s: %zu results at the write seams = device API (%d bit-exact)\n", what, seams.size(), exact);
        }
    return fails;
}

// MTGP32: the device API's 64 blocks of 256 threads (parameter set b for block b, states made by
// curandMakeMTGP32KernelState); result n of the host API is S((n / 256) % 64) at position
// n % 256 + 256 * (n / 16384)
__global__ void mtgp_kernel(curandStateMtgp32_t *st, int d, int rounds, unsigned long long *out, float mean, float sd)
{
    int b = blockIdx.x, t = threadIdx.x;
    for (int r = 0; r < rounds; r++) {
        unsigned long long v = 0;
        float f;
        double x;
        switch (d) {
        case D_U32: v = curand(&st[b]); break;
        case D_UNIF: f = curand_uniform(&st[b]); v = (unsigned)__float_as_int(f); break;
        case D_UNIF_D: x = curand_uniform_double(&st[b]); v = __double_as_longlong(x); break;
        case D_NORM: f = curand_normal(&st[b]) * sd + mean; v = (unsigned)__float_as_int(f); break;
        case D_NORM_D: x = curand_normal_double(&st[b]) * (double)sd + (double)mean; v = __double_as_longlong(x); break;
        case D_LOGN: f = curand_log_normal(&st[b], mean, sd); v = (unsigned)__float_as_int(f); break;
        default: x = curand_log_normal_double(&st[b], mean, sd); v = __double_as_longlong(x); break;
        }
        out[((size_t)b * rounds + r) * 256 + t] = v;
    }
}

static std::vector<unsigned long long> mtgp_reference(unsigned long long seed, unsigned long long off, int d,
                                                      size_t n, float mean, float sd)
{
    const int blocks = 64;
    int rounds = (int)((off + n) / 16384 + 1);
    curandStateMtgp32_t *st;
    mtgp32_kernel_params_t *kp;
    unsigned long long *dout;
    CK(cudaMalloc(&st, blocks * sizeof(*st)));
    CK(cudaMalloc(&kp, sizeof(*kp)));
    CK(cudaMalloc(&dout, (size_t)blocks * rounds * 256 * 8));
    if (curandMakeMTGP32Constants(mtgp32dc_params_fast_11213, kp) ||
        curandMakeMTGP32KernelState(st, mtgp32dc_params_fast_11213, kp, blocks, seed)) {
        printf("FAIL: curandMakeMTGP32Constants / KernelState\n");
        exit(1);
    }
    mtgp_kernel<<<blocks, 256>>>(st, d, rounds, dout, mean, sd);
    CK(cudaGetLastError());
    std::vector<unsigned long long> all((size_t)blocks * rounds * 256), ref(n);
    CK(cudaMemcpy(all.data(), dout, all.size() * 8, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < n; k++) {
        unsigned long long g = off + k, b = (g / 256) % 64, pos = g % 256 + 256 * (g / 16384);
        ref[k] = all[(b * rounds) * 256 + pos];
    }
    CK(cudaFree(st));
    CK(cudaFree(kp));
    CK(cudaFree(dout));
    return ref;
}

static int case_mtgp(bool control)
{
    int fails = 0, told = 0, total = 0;
    const size_t n = 40000;
    std::vector<unsigned long long> idx(n);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    struct { unsigned long long seed, off; bool host; size_t split; } runs[] = {
        {1234ULL, 0, false, 0}, {0xfedcba9876543210ULL, 5000, false, 20001}, {42ULL, 778, true, 0}};
    for (int d = 0; d < D_COUNT; d++)
        for (auto &r : runs) {
            float mean = d == D_LOGN || d == D_LOGN_D ? 0.5f : 1.5f, sd = d == D_LOGN || d == D_LOGN_D ? 0.25f : 2.0f;
            size_t split = is_pair(d) ? r.split & ~(size_t)1 : r.split;
            std::vector<unsigned long long> host;
            if (host_api(CURAND_RNG_PSEUDO_MTGP32, r.host, r.seed, r.off, d, n, split, mean, sd, host)) { fails++; continue; }
            if (control) {  // another seed and a shifted offset must differ
                if (d != D_U32 && d != D_NORM) continue;
                int a = compare("", d, idx, host, mtgp_reference(r.seed + 1, r.off, d, n, mean, sd), true, nullptr);
                int b = compare("", d, idx, host, mtgp_reference(r.seed, r.off + 2, d, n, mean, sd), true, nullptr);
                total += 2;
                told += (a > 0) + (b > 0);
                printf("%s MTGP32 curand%s: another seed differs in %d, an offset shifted by 2 in %d of %zu\n",
                       a > 0 && b > 0 ? "ok" : "FAIL", dist_name[d], a, b, n);
                continue;
            }
            std::vector<unsigned long long> ref = mtgp_reference(r.seed, r.off, d, n, mean, sd);
            char what[160];
            snprintf(what, sizeof what, "MTGP32 curand%s seed %llu offset %llu %s%s", dist_name[d], r.seed, r.off,
                     r.host ? "host generator" : "device generator", split ? " in two calls" : "");
            int exact, bad = compare(what, d, idx, host, ref, false, &exact);
            if (bad) { fails++; printf("  (%d of %zu differ)\n", bad, n); }
            else printf("ok %s: %zu results = device API (%d bit-exact)\n", what, n, exact);
        }
    return control ? (told == total ? 0 : 1) : fails;
}

// Sobol32: result r of a call for n results in `dims` dimensions is point off + r % (n / dims) of
// dimension r / (n / dims), the device API's curand_init(vectors[dim], (constants[dim],) point)
template <class S>
__global__ void sobol_kernel(const unsigned *vec, const unsigned *scr, int d, const unsigned long long *pt,
                             const unsigned *dim, int n, unsigned long long *out, float mean, float sd)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n)
        return;
    S s;
    if (scr) curand_init((unsigned *)vec + 32 * dim[k], scr[dim[k]], (unsigned)pt[k], (curandStateScrambledSobol32_t *)&s);
    else curand_init((unsigned *)vec + 32 * dim[k], (unsigned)pt[k], (curandStateSobol32_t *)&s);
    float f;
    double x;
    switch (d) {
    case D_U32: out[k] = curand(&s); return;
    case D_UNIF: f = curand_uniform(&s); break;
    case D_UNIF_D: x = curand_uniform_double(&s); out[k] = __double_as_longlong(x); return;
    case D_NORM: f = curand_normal(&s) * sd + mean; break;
    case D_NORM_D: x = curand_normal_double(&s) * (double)sd + (double)mean; out[k] = __double_as_longlong(x); return;
    case D_LOGN: f = curand_log_normal(&s, mean, sd); break;
    default: x = curand_log_normal_double(&s, mean, sd); out[k] = __double_as_longlong(x); return;
    }
    out[k] = (unsigned)__float_as_int(f);
}

static std::vector<unsigned long long> sobol_reference(bool scrambled, unsigned dims, unsigned long long off,
                                                       size_t n, size_t split, int d, float mean, float sd)
{
    curandDirectionVectors32_t *v;
    unsigned *c = nullptr;
    if (curandGetDirectionVectors32(&v, scrambled ? CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6
                                                  : CURAND_DIRECTION_VECTORS_32_JOEKUO6) ||
        (scrambled && curandGetScrambleConstants32(&c))) {
        printf("FAIL: curandGetDirectionVectors32 / curandGetScrambleConstants32\n");
        exit(1);
    }
    // the host API's calls: (split, n - split) or (n), each dimension-major
    std::vector<unsigned long long> pt(n);
    std::vector<unsigned> dim(n);
    size_t parts[2] = {split ? split : n, split ? n - split : 0}, at = 0;
    unsigned long long pos = off;
    for (int p = 0; p < 2 && parts[p]; at += parts[p], p++) {
        size_t per = parts[p] / dims;
        for (size_t r = 0; r < parts[p]; r++) { pt[at + r] = pos + r % per; dim[at + r] = (unsigned)(r / per); }
        pos += per;
    }
    unsigned *dv, *dc = nullptr, *ddim;
    unsigned long long *dpt, *dout;
    CK(cudaMalloc(&dv, dims * 32 * 4));
    CK(cudaMemcpy(dv, v, dims * 32 * 4, cudaMemcpyHostToDevice));
    if (scrambled) { CK(cudaMalloc(&dc, dims * 4)); CK(cudaMemcpy(dc, c, dims * 4, cudaMemcpyHostToDevice)); }
    CK(cudaMalloc(&dpt, n * 8)); CK(cudaMalloc(&ddim, n * 4)); CK(cudaMalloc(&dout, n * 8));
    CK(cudaMemcpy(dpt, pt.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ddim, dim.data(), n * 4, cudaMemcpyHostToDevice));
    int b = 128, grid = (int)((n + b - 1) / b);
    if (scrambled) sobol_kernel<curandStateScrambledSobol32_t><<<grid, b>>>(dv, dc, d, dpt, ddim, (int)n, dout, mean, sd);
    else sobol_kernel<curandStateSobol32_t><<<grid, b>>>(dv, nullptr, d, dpt, ddim, (int)n, dout, mean, sd);
    CK(cudaGetLastError());
    std::vector<unsigned long long> r(n);
    CK(cudaMemcpy(r.data(), dout, n * 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(dv)); CK(cudaFree(dpt)); CK(cudaFree(ddim)); CK(cudaFree(dout));
    if (dc) CK(cudaFree(dc));
    return r;
}

static int case_sobol(bool control)
{
    int fails = 0, told = 0, total = 0;
    struct { curandRngType_t t; unsigned dims; unsigned long long off; bool host; size_t n, split; } runs[] = {
        {CURAND_RNG_QUASI_SOBOL32, 1, 0, false, 5000, 0},
        {CURAND_RNG_QUASI_SOBOL32, 3, 777, false, 6000, 2100},
        {CURAND_RNG_QUASI_SCRAMBLED_SOBOL32, 5, 12345, true, 5000, 0},
        {CURAND_RNG_QUASI_SCRAMBLED_SOBOL32, 2, 1, false, 4000, 1000}};
    for (int d = 0; d < D_COUNT; d++)
        for (auto &r : runs) {
            if (control && d != D_U32 && d != D_NORM) continue;
            std::vector<unsigned long long> idx(r.n), host;
            for (size_t i = 0; i < r.n; i++) idx[i] = i;
            float mean = d == D_LOGN || d == D_LOGN_D ? 0.5f : 1.5f, sd = d == D_LOGN || d == D_LOGN_D ? 0.25f : 2.0f;
            if (host_api(r.t, r.host, 0, r.off, d, r.n, r.split, mean, sd, host, r.dims)) { fails++; continue; }
            bool scr = r.t == CURAND_RNG_QUASI_SCRAMBLED_SOBOL32;
            if (control) {  // a shifted offset, and one dimension less, must differ
                int a = compare("", d, idx, host, sobol_reference(scr, r.dims, r.off + 1, r.n, r.split, d, mean, sd), true, nullptr);
                int b = r.dims > 1 ? compare("", d, idx, host, sobol_reference(scr, r.dims - 1, r.off, r.n - r.n / r.dims,
                                                                                 0, d, mean, sd), true, nullptr) : 1;
                total += 2;
                told += (a > 0) + (b > 0);
                printf("%s %s curand%s: an offset shifted by 1 differs in %d, one dimension less in %d of %zu\n",
                       a > 0 && b > 0 ? "ok" : "FAIL", type_name(r.t), dist_name[d], a, b, r.n);
                continue;
            }
            std::vector<unsigned long long> ref = sobol_reference(scr, r.dims, r.off, r.n, r.split, d, mean, sd);
            char what[160];
            snprintf(what, sizeof what, "%s curand%s %u dimensions offset %llu %s%s", type_name(r.t), dist_name[d], r.dims,
                     r.off, r.host ? "host generator" : "device generator", r.split ? " in two calls" : "");
            int exact, bad = compare(what, d, idx, host, ref, false, &exact);
            if (bad) { fails++; printf("  (%d of %zu differ)\n", bad, r.n); }
            else printf("ok %s: %zu results = device API (%d bit-exact)\n", what, r.n, exact);
        }
    return control ? (told == total ? 0 : 1) : fails;
}

static int case_control()
{
    // each must mismatch, else the comparison could not tell
    int told = 0, total = 0;
    const size_t n = 4500;
    std::vector<unsigned long long> idx = sample(n);
    for (curandRngType_t t : types)
        for (int d : {D_U32, D_UNIF, D_NORM_D}) {
            std::vector<unsigned long long> host;
            if (host_api(t, false, 77, 10, d, n, 0, 0.f, 1.f, host)) return 1;
            std::vector<unsigned long long> other_seed = reference(t, 78, 10, d, idx, 0.f, 1.f);
            std::vector<unsigned long long> shifted = reference(t, 77, 12, d, idx, 0.f, 1.f);
            int a = compare("control seed", d, idx, host, other_seed, true, nullptr);
            int b = compare("control offset", d, idx, host, shifted, true, nullptr);
            total += 2;
            told += (a > 0) + (b > 0);
            printf("%s %s curand%s: another seed differs in %d, an offset shifted by 2 in %d of %zu\n",
                   a > 0 && b > 0 ? "ok" : "FAIL", type_name(t), dist_name[d], a, b, idx.size());
        }
    return told == total ? 0 : 1;
}

#define EXPECT(call, want) do { int st_ = (call); if (st_ != (want)) { \
    printf("FAIL %s: status %d, expected %d (%s)\n", #call, st_, (int)(want), #want); fails++; } \
    else printf("ok %s -> %s\n", #call, #want); } while (0)

static int case_status()
{
    int fails = 0, v = 0;
    curandGenerator_t g, q = nullptr;
    float *d;
    CK(cudaMalloc(&d, 64 * sizeof(float)));
    EXPECT(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateNormal(g, d, 7, 0.f, 1.f), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    EXPECT(curandGenerateLogNormalDouble(g, (double *)d, 3, 0., 1.), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    EXPECT(curandGenerateLongLong(g, (unsigned long long *)d, 4), CURAND_STATUS_TYPE_ERROR);
    EXPECT(curandSetQuasiRandomGeneratorDimensions(g, 2), CURAND_STATUS_TYPE_ERROR);
    EXPECT(curandSetGeneratorOrdering(g, CURAND_ORDERING_QUASI_DEFAULT), CURAND_STATUS_OUT_OF_RANGE);
    EXPECT(curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_LEGACY), CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateUniform(g, nullptr, 8), CURAND_STATUS_LAUNCH_FAILURE);
    EXPECT(curandGenerateUniform(g, (float *)((char *)d + 2), 8), CURAND_STATUS_LAUNCH_FAILURE);
    EXPECT(curandGenerateUniform(g, d, 65), CURAND_STATUS_LAUNCH_FAILURE);  // past the allocation
    EXPECT(curandGenerateUniform(g, d, 64), CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateUniform(g, d, 0), CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerate(q, (unsigned *)d, 8), CURAND_STATUS_NOT_INITIALIZED);
    EXPECT(curandSetPseudoRandomGeneratorSeed(q, 1), CURAND_STATUS_NOT_INITIALIZED);
    EXPECT(curandDestroyGenerator(q), CURAND_STATUS_NOT_INITIALIZED);
    EXPECT(curandCreateGenerator(&q, (curandRngType_t)7), CURAND_STATUS_TYPE_ERROR);
    EXPECT(curandGetVersion(&v), CURAND_STATUS_SUCCESS);
    if (v != CURAND_VERSION) { printf("FAIL curandGetVersion: %d, header says %d\n", v, CURAND_VERSION); fails++; }
    EXPECT(curandGetProperty(MAJOR_VERSION, &v), CURAND_STATUS_SUCCESS);
    if (v != CURAND_VER_MAJOR) { printf("FAIL curandGetProperty(MAJOR_VERSION): %d\n", v); fails++; }
    EXPECT(curandDestroyGenerator(g), CURAND_STATUS_SUCCESS);
    // quasirandom: dimensions, counts, no seed, its own ordering
    EXPECT(curandCreateGenerator(&g, CURAND_RNG_QUASI_SOBOL32), CURAND_STATUS_SUCCESS);
    EXPECT(curandSetQuasiRandomGeneratorDimensions(g, 0), CURAND_STATUS_OUT_OF_RANGE);
    EXPECT(curandSetQuasiRandomGeneratorDimensions(g, 20001), CURAND_STATUS_OUT_OF_RANGE);
    EXPECT(curandSetQuasiRandomGeneratorDimensions(g, 3), CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateUniform(g, d, 8), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    EXPECT(curandGenerateNormal(g, d, 9, 0.f, 1.f), CURAND_STATUS_SUCCESS);  // no pairs for quasirandom
    EXPECT(curandSetPseudoRandomGeneratorSeed(g, 1), CURAND_STATUS_TYPE_ERROR);
    EXPECT(curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_DEFAULT), CURAND_STATUS_OUT_OF_RANGE);
    EXPECT(curandSetGeneratorOrdering(g, CURAND_ORDERING_QUASI_DEFAULT), CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateLongLong(g, (unsigned long long *)d, 3), CURAND_STATUS_TYPE_ERROR);
    EXPECT(curandDestroyGenerator(g), CURAND_STATUS_SUCCESS);
    // a host generator given device memory is refused; a device generator writes page-locked and
    // managed memory too, the same numbers as into device memory
    EXPECT(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateUniform(g, d, 8), CURAND_STATUS_LAUNCH_FAILURE);
    EXPECT(curandDestroyGenerator(g), CURAND_STATUS_SUCCESS);
    float *pin, *man, hd[64];
    CK(cudaMallocHost(&pin, 64 * sizeof(float)));
    CK(cudaMallocManaged(&man, 64 * sizeof(float)));
    float *outs[3] = {d, pin, man};
    const char *names[3] = {"device", "page-locked", "managed"};
    for (int k = 0; k < 3; k++) {
        curandGenerator_t h;
        EXPECT(curandCreateGenerator(&h, CURAND_RNG_PSEUDO_PHILOX4_32_10), CURAND_STATUS_SUCCESS);
        curandSetPseudoRandomGeneratorSeed(h, 5);
        EXPECT(curandGenerateUniform(h, outs[k], 64), CURAND_STATUS_SUCCESS);
        CK(cudaDeviceSynchronize());
        curandDestroyGenerator(h);
        if (k == 0) { CK(cudaMemcpy(hd, d, sizeof hd, cudaMemcpyDeviceToHost)); continue; }
        if (memcmp(hd, outs[k], sizeof hd)) {
            printf("FAIL: %s output: first value %.9g, into device memory %.9g\n", names[k], outs[k][0], hd[0]);
            fails++;
        } else printf("ok %s output = device-memory output\n", names[k]);
    }
    CK(cudaFreeHost(pin));
    CK(cudaFree(man));
    CK(cudaFree(d));
    return fails;
}

__global__ void slow_fill(unsigned *p, int n, unsigned v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    volatile unsigned spin = 0;
    for (int k = 0; k < 2000; k++) spin += k;  // keeps the stream busy a while
    if (i < n) p[i] = v + spin * 0;
}
__global__ void copy_u32(const unsigned *a, unsigned *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i];
}

// curandSetStream: the results land after the kernel queued before on that stream and before the
// one queued after; control: a fill queued after curandGenerate overwrites them (the check can fail)
static int case_stream()
{
    const int n = 4096;
    int fails = 0;
    unsigned *a, *b;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&a, n * 4));
    CK(cudaMalloc(&b, n * 4));
    std::vector<unsigned long long> idx(n);
    for (int i = 0; i < n; i++) idx[i] = i;
    std::vector<unsigned long long> ref = reference(CURAND_RNG_PSEUDO_XORWOW, 99, 0, D_U32, idx, 0, 1);
    for (int control = 0; control < 2; control++) {
        curandGenerator_t g;
        if (curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW) || curandSetPseudoRandomGeneratorSeed(g, 99) ||
            curandSetStream(g, s)) { printf("FAIL stream setup\n"); return 1; }
        if (!control) slow_fill<<<n / 128, 128, 0, s>>>(a, n, 0xdeadbeefu);
        int st = curandGenerate(g, a, n);
        if (control) slow_fill<<<n / 128, 128, 0, s>>>(a, n, 0xdeadbeefu);
        copy_u32<<<n / 128, 128, 0, s>>>(a, b, n);
        CK(cudaStreamSynchronize(s));
        std::vector<unsigned> h(n);
        CK(cudaMemcpy(h.data(), b, n * 4, cudaMemcpyDeviceToHost));
        int bad = st != 0;
        for (int i = 0; i < n && !bad; i++)
            if (h[i] != (unsigned)ref[i]) {
                bad = 1;
                if (!control) printf("FAIL stream: result %d read by the next kernel: 0x%x, device API 0x%x\n", i, h[i], (unsigned)ref[i]);
            }
        if (!control) { fails += bad; if (!bad) printf("ok stream: curandGenerate ordered between two kernels on its stream\n"); }
        else if (!bad) { printf("FAIL stream control: a fill queued after curandGenerate did not show\n"); fails++; }
        else printf("ok stream control: a fill queued after curandGenerate overwrites its results\n");
        curandDestroyGenerator(g);
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaStreamDestroy(s));
    return fails;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    int fails;
    if (!strcmp(c, "equiv")) fails = case_equiv();
    else if (!strcmp(c, "status")) fails = case_status();
    else if (!strcmp(c, "stream")) fails = case_stream();
    else if (!strcmp(c, "control")) fails = case_control() + case_mtgp(true) + case_sobol(true);
    else if (!strcmp(c, "sobol")) fails = case_sobol(false);
    else if (!strcmp(c, "mtgp")) fails = case_mtgp(false);
    else { fprintf(stderr, "usage: cr_equiv equiv|mtgp|sobol|status|stream|control\n"); return 2; }
    printf("%s: %d failure(s)\n", c, fails);
    return fails ? 1 : 0;
}
