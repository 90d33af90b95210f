/* hostcurand.c — cuRAND's host API (libcurand.so.10) on the CPU, for programs run on hostcuda.
 *
 * Design: a generator computes its numbers on the host, from the per-thread streams of NVIDIA's
 * device API (curand_init(seed, subsequence, offset) + curand()), and a device generator writes
 * them with cuMemcpyHtoDAsync on its stream (then waits for that stream), so the write is ordered
 * after the work queued before it and before the work queued after the call returns.
 *
 * Ordering (CURAND_ORDERING_PSEUDO_DEFAULT = LEGACY = BEST here): 4096 interleaved streams. An
 * output consuming c raw 32-bit values and giving m results ("an item": uniform float c=1 m=1,
 * XORWOW uniform double c=2 m=1, normal float c=2 m=2, normal double c=4 m=2, ...) is item
 * i = (offset + n) / m of the generator; it comes from stream i % 4096 at raw position
 * (i / 4096) * c. Stream s is curand_init(seed, s, 0). The layout of normals and doubles is our
 * reading of the documentation (docs/hostcuda.md, "cuRAND on hostcuda").
 *
 * MTGP32 instead: 64 sequences S(b), parameter set b, seeded as curandMakeMTGP32KernelState
 * seeds them (seed ^ seed >> 32, + b + 1); result n (one raw value each, normals by the inverse
 * CDF as the device API makes them) is S((n / 256) % 64) at position n % 256 + 256 * (n / 16384).
 *
 * SOBOL32 (and SCRAMBLED_SOBOL32): point i of dimension j is the device API's Sobol32 state
 * curand_init(vectors[j], (constants[j],) i); a call for n results in d dimensions gives n / d
 * points of dimension 0, then of dimension 1, ... (CURAND_ORDERING_QUASI_DEFAULT). The direction
 * vectors and scramble constants are NVIDIA's: curandGetDirectionVectors32 /
 * curandGetScrambleConstants32 of the toolkit's libcurand.so.10, loaded in a namespace of its own
 * (it needs no CUDA for those); where it is not installed, the Sobol generators are refused.
 *
 * Threading: a generator is used by one thread at a time (as cuRAND's documentation asks).
 * Must not: read device memory from host code, use NVIDIA's runtime or private export tables (only
 * the Driver API's public calls; of NVIDIA's libcurand only its four table getters), or answer a
 * call it does not implement with numbers.
 */
#include <cuda.h>
#include <curand.h>
#include <dlfcn.h>
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#include <curand_precalc.h>          /* host C: the __device__ copies are plain unused statics */
#include <curand_mtgp32dc_p_11213.h>  /* MTGP32's 200 parameter sets */
#pragma GCC diagnostic pop

#define HCR_API __attribute__((visibility("default")))
#define HCR_STREAMS 4096u
#define HCR_CHUNK ((size_t)1 << 20) /* results per device write */

enum { HCR_XORWOW, HCR_PHILOX, HCR_MRG, HCR_MTGP, HCR_SOBOL };

typedef struct {
    uint32_t d, v[5];
} hcr_xorwow;

typedef struct {
    uint32_t s1[3], s2[3];
} hcr_mrg;

struct curandGenerator_st {
    int kind;                        /* HCR_XORWOW / HCR_PHILOX / HCR_MRG / HCR_MTGP */
    curandRngType_t type;
    int host;                        /* curandCreateGeneratorHost: output is host memory */
    unsigned long long seed, offset; /* offset: results consumed so far (or set) */
    curandOrdering_t ordering;
    CUstream stream;
    unsigned dims;                   /* quasirandom: dimensions */
    const unsigned *vectors;         /* quasirandom: 32 direction vectors per dimension */
    const unsigned *scramble;        /* scrambled Sobol: one constant per dimension, else NULL */
    int ready;                       /* stream bases computed for seed */
    void *base;                      /* HCR_STREAMS stream states at raw position 0 */
    void *cur;                       /* HCR_STREAMS stream states at cur_pos[s] */
    unsigned long long *cur_pos;
};

struct curandDiscreteDistribution_st;

static int hcr_fail(curandStatus_t st, const char *call, const char *why)
{
    fprintf(stderr, "hostcurand: %s: %s (status %d)\n", call, why, (int)st);
    return st;
}

/* ---- XORWOW: NVIDIA's device-API stream, skip-ahead by curand_precalc.h's matrices ---- */

static void xw_matvec(uint32_t v[5], const unsigned int *m)
{
    uint32_t r[5] = {0};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 32; j++)
            if (v[i] & (1u << j))
                for (int k = 0; k < 5; k++)
                    r[k] ^= m[5 * (i * 32 + j) + k];
    memcpy(v, r, sizeof(r));
}

static void xw_skip(hcr_xorwow *s, unsigned long long n)
{
    unsigned long long p = n;
    for (int mn = 0; p; mn++, p >>= PRECALC_BLOCK_SIZE)
        for (unsigned t = 0; t < (p & PRECALC_BLOCK_MASK); t++)
            xw_matvec(s->v, precalc_xorwow_offset_matrix_host[mn]);
    s->d += 362437u * (uint32_t)n;
}

static void xw_init(hcr_xorwow *s, unsigned long long seed, unsigned long long subseq)
{
    uint32_t s0 = (uint32_t)seed ^ 0xaad26b49u, s1 = (uint32_t)(seed >> 32) ^ 0xf7dcefddu;
    uint32_t t0 = 1099087573u * s0, t1 = 2591861531u * s1;
    s->d = 6615241u + t1 + t0;
    s->v[0] = 123456789u + t0;
    s->v[1] = 362436069u ^ t0;
    s->v[2] = 521288629u + t1;
    s->v[3] = 88675123u ^ t1;
    s->v[4] = 5783321u + t0;
    for (int mn = 0; subseq; mn++, subseq >>= PRECALC_BLOCK_SIZE)
        for (unsigned t = 0; t < (subseq & PRECALC_BLOCK_MASK); t++)
            xw_matvec(s->v, precalc_xorwow_matrix_host[mn]);
}

static uint32_t xw_next(hcr_xorwow *s)
{
    uint32_t t = s->v[0] ^ (s->v[0] >> 2);
    s->v[0] = s->v[1];
    s->v[1] = s->v[2];
    s->v[2] = s->v[3];
    s->v[3] = s->v[4];
    s->v[4] = (s->v[4] ^ (s->v[4] << 4)) ^ (t ^ (t << 1));
    s->d += 362437u;
    return s->v[4] + s->d;
}

/* ---- Philox4x32-10: counter = (position / 4) + (subsequence << 64), key = seed ---- */

static uint32_t ph_raw(unsigned long long seed, unsigned long long subseq, unsigned long long pos)
{
    uint32_t c[4] = {(uint32_t)(pos >> 2), (uint32_t)(pos >> 34), (uint32_t)subseq, (uint32_t)(subseq >> 32)};
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n[4] = {(uint32_t)(p1 >> 32) ^ c[1] ^ k0, (uint32_t)p1, (uint32_t)(p0 >> 32) ^ c[3] ^ k1,
                         (uint32_t)p0};
        memcpy(c, n, sizeof(c));
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c[pos & 3];
}

/* ---- MRG32k3a: exact integer arithmetic mod m1 / m2 (the device API's results are exact) ---- */

#define MRG_M1 4294967087ull
#define MRG_M2 4294944443ull

typedef uint64_t mrg_mat[3][3];
static const mrg_mat mrg_a1 = {{0, 1, 0}, {0, 0, 1}, {MRG_M1 - 810728u, 1403580u, 0}};
static const mrg_mat mrg_a2 = {{0, 1, 0}, {0, 0, 1}, {MRG_M2 - 1370589u, 0, 527612u}};

static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m) { return (uint64_t)((unsigned __int128)a * b % m); }

static void mrg_matmul(mrg_mat o, const mrg_mat a, const mrg_mat b, uint64_t m)
{
    mrg_mat t;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[i][j] = (mulmod(a[i][0], b[0][j], m) + mulmod(a[i][1], b[1][j], m) + mulmod(a[i][2], b[2][j], m)) % m;
    memcpy(o, t, sizeof(t));
}

static void mrg_matvec(const mrg_mat a, uint32_t v[3], uint64_t m)
{
    uint64_t t[3];
    for (int i = 0; i < 3; i++)
        t[i] = (mulmod(a[i][0], v[0], m) + mulmod(a[i][1], v[1], m) + mulmod(a[i][2], v[2], m)) % m;
    for (int i = 0; i < 3; i++)
        v[i] = (uint32_t)t[i];
}

/* a^(2^e1 * n): square e1 times, then raise to n */
static void mrg_pow(mrg_mat o, const mrg_mat a, unsigned e1, unsigned long long n, uint64_t m)
{
    mrg_mat b, r = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    memcpy(b, a, sizeof(b));
    for (unsigned i = 0; i < e1; i++)
        mrg_matmul(b, b, b, m);
    for (; n; n >>= 1) {
        if (n & 1)
            mrg_matmul(r, r, b, m);
        mrg_matmul(b, b, b, m);
    }
    memcpy(o, r, sizeof(r));
}

static void mrg_skip(hcr_mrg *s, unsigned e1, unsigned long long n)
{
    mrg_mat t;
    if (!n)
        return;
    mrg_pow(t, mrg_a1, e1, n, MRG_M1);
    mrg_matvec(t, s->s1, MRG_M1);
    mrg_pow(t, mrg_a2, e1, n, MRG_M2);
    mrg_matvec(t, s->s2, MRG_M2);
}

static void mrg_init(hcr_mrg *s, unsigned long long seed, unsigned long long subseq)
{
    for (int i = 0; i < 3; i++)
        s->s1[i] = s->s2[i] = 12345u;
    if (seed) {
        uint64_t x1 = (uint32_t)seed ^ 0x55555555u, x2 = (uint32_t)((seed >> 32) ^ 0xAAAAAAAAu);
        s->s1[0] = (uint32_t)mulmod(x1, 12345u, MRG_M1);
        s->s1[1] = (uint32_t)mulmod(x2, 12345u, MRG_M1);
        s->s1[2] = (uint32_t)mulmod(x1, 12345u, MRG_M1);
        s->s2[0] = (uint32_t)mulmod(x2, 12345u, MRG_M2);
        s->s2[1] = (uint32_t)mulmod(x1, 12345u, MRG_M2);
        s->s2[2] = (uint32_t)mulmod(x2, 12345u, MRG_M2);
    }
    mrg_skip(s, 76, subseq);
}

/* the device API's curand_MRG32k3a(): a double in (0, m1] */
static double mrg_next(hcr_mrg *s)
{
    int64_t p1 = ((int64_t)1403580 * s->s1[1] - (int64_t)810728 * s->s1[0]) % (int64_t)MRG_M1;
    if (p1 < 0)
        p1 += MRG_M1;
    s->s1[0] = s->s1[1];
    s->s1[1] = s->s1[2];
    s->s1[2] = (uint32_t)p1;
    int64_t p2 = ((int64_t)527612 * s->s2[2] - (int64_t)1370589 * s->s2[0]) % (int64_t)MRG_M2;
    if (p2 < 0)
        p2 += MRG_M2;
    s->s2[0] = s->s2[1];
    s->s2[1] = s->s2[2];
    s->s2[2] = (uint32_t)p2;
    int64_t r = p1 - p2;
    if (r <= 0)
        r += MRG_M1;
    return (double)r;
}

/* ---- MTGP32: a block of 256 threads of the device API's curand(), run one thread after another
 * (the parameters keep a round's reads clear of its writes, so the order does not matter) ---- */

#define MT_BLOCKS 64u
#define MT_THREADS 256u

typedef struct {
    uint32_t s[MTGP32_STATE_SIZE];
    unsigned offset;
    unsigned long long round; /* rounds run; out[] holds round - 1 */
    uint32_t out[MT_THREADS];
} hcr_mtgp;

static void mt_init(hcr_mtgp *m, const mtgp32_params_fast_t *p, uint32_t seed)
{
    int size = p->mexp / 32 + 1;
    uint32_t hidden = p->tbl[4] ^ (p->tbl[8] << 16), tmp = hidden;
    tmp += tmp >> 16;
    tmp += tmp >> 8;
    memset(m, 0, sizeof(*m));
    memset(m->s, tmp & 0xff, sizeof(uint32_t) * (size_t)size);
    m->s[0] = seed;
    m->s[1] = hidden;
    for (int i = 1; i < size; i++)
        m->s[i] ^= 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) + (uint32_t)i;
}

static void mt_round(hcr_mtgp *m, const mtgp32_params_fast_t *p)
{
    const uint32_t M = MTGP32_STATE_MASK, mask = mtgp32dc_params_fast_11213[0].mask;
    uint32_t pos = (uint32_t)p->pos;
    for (uint32_t t = 0; t < MT_THREADS; t++) {
        uint32_t o = t + m->offset;
        uint32_t x = (m->s[o & M] & mask) ^ m->s[(o + 1) & M];
        x ^= x << p->sh1;
        uint32_t y = x ^ (m->s[(o + pos) & M] >> p->sh2);
        uint32_t r = y ^ p->tbl[y & 0x0f];
        m->s[(o + MTGPDC_N) & M] = r;
        uint32_t tt = m->s[(o + pos - 1) & M];
        tt ^= tt >> 16;
        tt ^= tt >> 8;
        m->out[t] = r ^ p->tmp_tbl[tt & 0x0f];
    }
    m->offset = (m->offset + MT_THREADS) & M;
    m->round++;
}

/* ---- Sobol32: NVIDIA's tables from the toolkit's library, point i by its Gray code ---- */

static struct {
    pthread_once_t once;
    void *lib;
    char why[200];
} hcr_nv = {PTHREAD_ONCE_INIT, NULL, ""};

static void hcr_nv_open(void)
{
    const char *env = getenv("HOSTCURAND_NVIDIA_CURAND"), *home = getenv("CUDA_HOME");
    char path[4][512];
    int n = 0;
    if (env && *env)
        snprintf(path[n++], sizeof(path[0]), "%s", env);
    if (home && *home)
        snprintf(path[n++], sizeof(path[0]), "%s/lib64/libcurand.so.10", home);
    snprintf(path[n++], sizeof(path[0]), "/usr/local/cuda/lib64/libcurand.so.10");
    snprintf(path[n++], sizeof(path[0]), "/usr/local/cuda/targets/x86_64-linux/lib/libcurand.so.10");
    for (int i = 0; i < n && !hcr_nv.lib; i++)
        hcr_nv.lib = dlmopen(LM_ID_NEWLM, path[i], RTLD_NOW | RTLD_LOCAL);
    if (!hcr_nv.lib)
        snprintf(hcr_nv.why, sizeof(hcr_nv.why),
                 "NVIDIA's libcurand.so.10 (the Sobol tables' source) not found: set HOSTCURAND_NVIDIA_CURAND or CUDA_HOME");
}

/* NVIDIA's own table getter by name, or NULL with the reason on stderr */
static void *hcr_nv_sym(const char *name, const char *call)
{
    pthread_once(&hcr_nv.once, hcr_nv_open);
    void *f = hcr_nv.lib ? dlsym(hcr_nv.lib, name) : NULL;
    if (!f)
        hcr_fail(CURAND_STATUS_INITIALIZATION_FAILED, call, hcr_nv.lib ? "NVIDIA's library lacks the table" : hcr_nv.why);
    return f;
}

static uint32_t sobol_at(const curandGenerator_t g, unsigned j, unsigned long long i)
{
    const unsigned *v = g->vectors + 32 * (size_t)j;
    uint32_t x = g->scramble ? g->scramble[j] : 0, gray = (uint32_t)(i ^ (i >> 1));
    for (unsigned k = 0; gray; k++, gray >>= 1)
        if (gray & 1)
            x ^= v[k];
    return x;
}

/* ---- streams: raw value k of stream s, generated in order ---- */

static size_t hcr_state_size(int kind)
{
    return kind == HCR_MRG ? sizeof(hcr_mrg) : kind == HCR_MTGP ? sizeof(hcr_mtgp) : sizeof(hcr_xorwow);
}
static unsigned hcr_nstreams(int kind) { return kind == HCR_MTGP ? MT_BLOCKS : HCR_STREAMS; }

static curandStatus_t hcr_prepare(curandGenerator_t g)
{
    if (g->ready || g->kind == HCR_PHILOX || g->kind == HCR_SOBOL)
        return CURAND_STATUS_SUCCESS;
    size_t sz = hcr_state_size(g->kind), ns = hcr_nstreams(g->kind);
    if (!g->base) {
        g->base = malloc(sz * ns);
        g->cur = malloc(sz * ns);
        g->cur_pos = malloc(sizeof(*g->cur_pos) * ns);
        if (!g->base || !g->cur || !g->cur_pos)
            return CURAND_STATUS_ALLOCATION_FAILED;
    }
    if (g->kind == HCR_MTGP) {
        hcr_mtgp *b = g->base;
        uint32_t s0 = (uint32_t)(g->seed ^ (g->seed >> 32));
        for (unsigned i = 0; i < MT_BLOCKS; i++)
            mt_init(&b[i], &mtgp32dc_params_fast_11213[i], s0 + i + 1);
    } else if (g->kind == HCR_XORWOW) {
        hcr_xorwow *b = g->base;
        xw_init(&b[0], g->seed, 0);
        for (unsigned s = 1; s < HCR_STREAMS; s++) { /* stream s+1 = stream s skipped one subsequence */
            b[s] = b[s - 1];
            xw_matvec(b[s].v, precalc_xorwow_matrix_host[0]);
        }
    } else {
        hcr_mrg *b = g->base;
        mrg_mat t1, t2;
        mrg_init(&b[0], g->seed, 0);
        mrg_pow(t1, mrg_a1, 76, 1, MRG_M1);
        mrg_pow(t2, mrg_a2, 76, 1, MRG_M2);
        for (unsigned s = 1; s < HCR_STREAMS; s++) {
            b[s] = b[s - 1];
            mrg_matvec(t1, b[s].s1, MRG_M1);
            mrg_matvec(t2, b[s].s2, MRG_M2);
        }
    }
    memcpy(g->cur, g->base, sz * ns);
    memset(g->cur_pos, 0, sizeof(*g->cur_pos) * ns);
    g->ready = 1;
    return CURAND_STATUS_SUCCESS;
}

/* position stream s at raw value pos (forward from where it is, else from its base) */
static void hcr_seek(curandGenerator_t g, unsigned s, unsigned long long pos)
{
    if (g->kind == HCR_PHILOX || g->kind == HCR_MTGP || g->kind == HCR_SOBOL) /* seek on each value */
        return;
    if (pos < g->cur_pos[s]) {
        memcpy((char *)g->cur + s * hcr_state_size(g->kind), (char *)g->base + s * hcr_state_size(g->kind),
               hcr_state_size(g->kind));
        g->cur_pos[s] = 0;
    }
    unsigned long long d = pos - g->cur_pos[s];
    if (g->kind == HCR_XORWOW) {
        hcr_xorwow *x = &((hcr_xorwow *)g->cur)[s];
        if (d < 64)
            while (d--)
                xw_next(x);
        else
            xw_skip(x, d);
    } else {
        hcr_mrg *x = &((hcr_mrg *)g->cur)[s];
        if (d < 64)
            while (d--)
                mrg_next(x);
        else
            mrg_skip(x, 0, d);
    }
    g->cur_pos[s] = pos;
}

typedef struct {
    curandGenerator_t g;
    unsigned s;
    unsigned long long pos;
} hcr_cursor;

static uint32_t cur_u32(hcr_cursor *c)
{
    curandGenerator_t g = c->g;
    uint32_t r;
    if (g->kind == HCR_PHILOX)
        return ph_raw(g->seed, c->s, c->pos++);
    if (g->kind == HCR_SOBOL)
        return sobol_at(g, c->s, c->pos++);
    if (g->kind == HCR_MTGP) { /* value pos of S(s): run its rounds forward, from the start if behind */
        hcr_mtgp *m = &((hcr_mtgp *)g->cur)[c->s];
        unsigned long long want = c->pos / MT_THREADS + 1;
        if (m->round > want)
            *m = ((hcr_mtgp *)g->base)[c->s];
        while (m->round < want)
            mt_round(m, &mtgp32dc_params_fast_11213[c->s]);
        return m->out[c->pos++ % MT_THREADS];
    }
    if (g->kind == HCR_XORWOW)
        r = xw_next(&((hcr_xorwow *)g->cur)[c->s]);
    else
        r = (uint32_t)(mrg_next(&((hcr_mrg *)g->cur)[c->s]) * 1.000000048662);
    c->pos++;
    g->cur_pos[c->s]++;
    return r;
}

static double cur_mrg(hcr_cursor *c)
{
    c->pos++;
    c->g->cur_pos[c->s]++;
    return mrg_next(&((hcr_mrg *)c->g->cur)[c->s]);
}

/* ---- distributions: one item = c raw values -> m results (the device API's formulas) ---- */

#define P32I 2.3283064e-10f
#define P53I 1.1102230246251565e-16

typedef enum { D_U32, D_UNIF, D_UNIF_D, D_NORM, D_NORM_D } hcr_dist;

/* the generators whose every result is one 32-bit value (normals by the inverse CDF) */
static int hcr_single(int kind) { return kind == HCR_MTGP || kind == HCR_SOBOL; }

/* erfcinv(y), y in (0, 1]: a rational first guess (Abramowitz & Stegun 26.2.23), then Newton steps
 * on libm's erfc to double precision */
static double hcr_erfcinv(double y)
{
    double t = sqrt(-2.0 * log(y / 2));
    double x = (t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                        (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t)) / sqrt(2.0);
    for (int i = 0; i < 8; i++) {
        double step = (erfc(x) - y) / (-2.0 / sqrt(M_PI) * exp(-x * x));
        x -= step;
        if (fabs(step) <= 1e-17 * fabs(x))
            break;
    }
    return x;
}

/* the device API's _curand_normal_icdf / _double: mirrored around 0x80000000 */
static float icdf_f(uint32_t x)
{
    float s = -1.4142135f;
    if (x > 0x80000000u) {
        x = 0xffffffffu - x;
        s = -s;
    }
    float p = x * P32I + (P32I / 2.0f);
    return s * (float)hcr_erfcinv((double)(2.0f * p));
}
static double icdf_d(uint32_t x)
{
    double s = -1.4142135623730951;
    if (x > 0x80000000u) {
        x = 0xffffffffu - x;
        s = -s;
    }
    double p = x * 2.3283064365386963e-10 + (2.3283064365386963e-10 / 2.0);
    return s * hcr_erfcinv(2.0 * p);
}

static void item_float(hcr_cursor *c, hcr_dist d, float out[2])
{
    if (d == D_U32) {
        uint32_t u = cur_u32(c);
        memcpy(out, &u, 4);
    } else if (d == D_UNIF) {
        out[0] = c->g->kind == HCR_MRG ? (float)(cur_mrg(c) * 2.3283065498378288e-10)
                                       : cur_u32(c) * P32I + (P32I / 2.0f);
    } else if (hcr_single(c->g->kind)) { /* D_NORM: the inverse CDF of one value */
        out[0] = icdf_f(cur_u32(c));
    } else { /* D_NORM: Box-Muller on two values */
        float u, v;
        if (c->g->kind == HCR_MRG) {
            u = (float)(cur_mrg(c) * 2.3283065498378288e-10);
            v = (float)(cur_mrg(c) * 2.3283065498378288e-10) * 6.2831855f;
        } else {
            uint32_t x = cur_u32(c), y = cur_u32(c);
            u = x * P32I + (P32I / 2);
            v = y * (P32I * 6.2831855f) + ((P32I * 6.2831855f) / 2);
        }
        float s = sqrtf(-2.0f * logf(u));
        out[0] = sinf(v) * s;
        out[1] = cosf(v) * s;
    }
}

static void item_double(hcr_cursor *c, hcr_dist d, double out[2])
{
    if (d == D_UNIF_D) {
        if (c->g->kind == HCR_MRG) {
            out[0] = cur_mrg(c) * 2.3283065498378288e-10;
        } else if (c->g->kind == HCR_PHILOX || hcr_single(c->g->kind)) {
            out[0] = cur_u32(c) * 2.3283064365386963e-10 + 2.3283064365386963e-10; /* in (0, 1] */
        } else {
            uint32_t x = cur_u32(c), y = cur_u32(c);
            unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << 21);
            out[0] = z * P53I + (P53I / 2.0);
        }
        return;
    }
    if (hcr_single(c->g->kind)) {
        out[0] = icdf_d(cur_u32(c));
        return;
    }
    double u, v; /* D_NORM_D; v in units of pi */
    if (c->g->kind == HCR_MRG) {
        u = cur_mrg(c) * 2.3283065498378288e-10;
        v = cur_mrg(c) * 2.3283065498378288e-10 * 2.0;
    } else {
        uint32_t x0 = cur_u32(c), x1 = cur_u32(c), y0 = cur_u32(c), y1 = cur_u32(c);
        unsigned long long zx = (unsigned long long)x0 ^ ((unsigned long long)x1 << 21);
        unsigned long long zy = (unsigned long long)y0 ^ ((unsigned long long)y1 << 21);
        u = zx * P53I + (P53I / 2.0);
        v = zy * (P53I * 2.0) + P53I;
    }
    double s = sqrt(-2.0 * log(u));
    out[0] = sin(v * 3.1415926535897932) * s; /* the device API: sincospi(v) */
    out[1] = cos(v * 3.1415926535897932) * s;
}

static void hcr_shape(int kind, hcr_dist d, unsigned *c, unsigned *m)
{
    *m = (d == D_NORM || d == D_NORM_D) && !hcr_single(kind) ? 2 : 1;
    if (hcr_single(kind)) {
        *c = 1;
        return;
    }
    switch (d) {
    case D_U32: case D_UNIF: *c = 1; break;
    case D_UNIF_D: *c = kind == HCR_XORWOW ? 2 : 1; break;
    case D_NORM: *c = 2; break;
    case D_NORM_D: *c = kind == HCR_MRG ? 2 : 4; break;
    }
}

typedef struct {
    hcr_dist d;
    unsigned m;
    void *out;
    unsigned long long first;
    size_t n, elem;
    int lognorm;
    double mean, stddev;
} hcr_req;

/* item i from the cursor (positioned at it), its results stored where the request wants them */
static void hcr_emit(const hcr_req *q, hcr_cursor *cur, unsigned long long i)
{
    double r[2];
    float f[2];
    if (q->elem == 4)
        item_float(cur, q->d, f);
    else
        item_double(cur, q->d, r);
    for (unsigned k = 0; k < q->m; k++) {
        unsigned long long at = i * q->m + k;
        if (at < q->first || at >= q->first + q->n)
            continue;
        size_t o = (size_t)(at - q->first);
        if (q->elem == 4) {
            float v = f[k];
            if (q->d == D_NORM)
                v = q->lognorm ? expf((float)q->mean + (float)q->stddev * v) : (float)q->stddev * v + (float)q->mean;
            memcpy((char *)q->out + 4 * o, &v, 4);
        } else {
            double v = r[k];
            if (q->d == D_NORM_D)
                v = q->lognorm ? exp(q->mean + q->stddev * v) : q->stddev * v + q->mean;
            ((double *)q->out)[o] = v;
        }
    }
}

/* fill host buffer out (elem bytes each) with results offset..offset+n-1 of distribution d */
static void hcr_fill(curandGenerator_t g, hcr_dist d, void *out, size_t n, size_t elem, int lognorm,
                     double mean, double stddev)
{
    unsigned c, m;
    hcr_shape(g->kind, d, &c, &m);
    hcr_req q = {d, m, out, g->offset, n, elem, lognorm, mean, stddev};
    unsigned long long i0 = q.first / m, i1 = (q.first + n + m - 1) / m;
    if (g->kind == HCR_SOBOL) { /* n / dims points of each dimension in turn, from point offset */
        size_t per = n / g->dims;
        q.first = 0; /* result j * per + k: point offset + k of dimension j */
        for (unsigned j = 0; j < g->dims; j++)
            for (size_t k = 0; k < per; k++) {
                hcr_cursor cur = {g, j, g->offset + k};
                hcr_emit(&q, &cur, (unsigned long long)j * per + k);
            }
        g->offset += per;
        return;
    }
    if (g->kind == HCR_MTGP) { /* item i: S((i / 256) % 64) at i % 256 + 256 * (i / 16384) */
        const unsigned long long per = (unsigned long long)MT_BLOCKS * MT_THREADS;
        for (unsigned b = 0; b < MT_BLOCKS; b++)
            for (unsigned long long r = i0 / per; r * per < i1; r++)
                for (unsigned t = 0; t < MT_THREADS; t++) {
                    unsigned long long i = r * per + (unsigned long long)b * MT_THREADS + t;
                    if (i < i0 || i >= i1)
                        continue;
                    hcr_cursor cur = {g, b, r * MT_THREADS + t};
                    hcr_emit(&q, &cur, i);
                }
    } else {
        for (unsigned s = 0; s < HCR_STREAMS; s++) {
            unsigned long long i = i0 + ((s + HCR_STREAMS - i0 % HCR_STREAMS) % HCR_STREAMS);
            if (i >= i1)
                continue;
            hcr_seek(g, s, (i / HCR_STREAMS) * c);
            hcr_cursor cur = {g, s, (i / HCR_STREAMS) * c};
            for (; i < i1; i += HCR_STREAMS) /* an item takes exactly c raw values: cur is at item i */
                hcr_emit(&q, &cur, i);
        }
    }
    g->offset += n;
}

/* ---- the driver side: context, pointer checks, the ordered write ---- */

static curandStatus_t hcr_ctx(const char *call)
{
    CUcontext ctx = NULL;
    CUdevice dev;
    if (cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx)
        return CURAND_STATUS_SUCCESS;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return hcr_fail(CURAND_STATUS_INITIALIZATION_FAILED, call, "no CUDA context and the primary one failed");
    return CURAND_STATUS_SUCCESS;
}

static curandStatus_t hcr_generate(curandGenerator_t g, const char *call, hcr_dist d, void *out, size_t n,
                                   size_t elem, int lognorm, double mean, double stddev)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (g->kind == HCR_SOBOL && n % g->dims)
        return hcr_fail(CURAND_STATUS_LENGTH_NOT_MULTIPLE, call, "count is not a multiple of the dimensions");
    if (g->kind != HCR_SOBOL && (d == D_NORM || d == D_NORM_D) && (n & 1))
        return hcr_fail(CURAND_STATUS_LENGTH_NOT_MULTIPLE, call, "normal results come in pairs: count is odd");
    if (n == 0)
        return CURAND_STATUS_SUCCESS;
    if (!out || ((uintptr_t)out % elem) != 0)
        return hcr_fail(CURAND_STATUS_LAUNCH_FAILURE, call, out ? "output is not aligned to its element" : "output is NULL");
    if (n > SIZE_MAX / elem)
        return hcr_fail(CURAND_STATUS_LENGTH_NOT_MULTIPLE, call, "count overflows the output size");
    curandStatus_t st = hcr_prepare(g);
    if (st)
        return st;
    unsigned mtype = 0, managed = 0;
    int known = cuPointerGetAttribute(&mtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)out) ==
                CUDA_SUCCESS;
    if (known)
        cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)(uintptr_t)out);
    if (g->host) {
        if (known && mtype == CU_MEMORYTYPE_DEVICE && !managed)
            return hcr_fail(CURAND_STATUS_LAUNCH_FAILURE, call, "a host generator's output is device memory");
        hcr_fill(g, d, out, n, elem, lognorm, mean, stddev);
        return CURAND_STATUS_SUCCESS;
    }
    if ((st = hcr_ctx(call)))
        return st;
    CUdeviceptr base = 0;
    size_t size = 0;
    if (cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)out) != CUDA_SUCCESS) {
        if (!known || mtype != CU_MEMORYTYPE_HOST)
            return hcr_fail(CURAND_STATUS_LAUNCH_FAILURE, call, "output is neither device nor page-locked memory");
        /* page-locked host memory (cudaMallocHost / cudaHostRegister): written after the work
         * queued before on the stream, and before the call returns */
        CUresult r = cuStreamSynchronize(g->stream);
        if (r != CUDA_SUCCESS)
            return hcr_fail(CURAND_STATUS_LAUNCH_FAILURE, call, "waiting for the generator's stream failed");
        hcr_fill(g, d, out, n, elem, lognorm, mean, stddev);
        return CURAND_STATUS_SUCCESS;
    }
    if ((CUdeviceptr)(uintptr_t)out + n * elem > base + size)
        return hcr_fail(CURAND_STATUS_LAUNCH_FAILURE, call, "output is shorter than count");
    /* in chunks, so a large call needs a bounded host buffer; a chunk is written before the next
     * is computed (the buffer is reused), and the last write is waited for before returning */
    size_t chunk = n < HCR_CHUNK || g->kind == HCR_SOBOL ? n : HCR_CHUNK; /* Sobol: dimension-major */
    if (chunk & 1)
        chunk++; /* normals stay whole pairs per chunk */
    void *buf = malloc(chunk * elem);
    if (!buf)
        return hcr_fail(CURAND_STATUS_ALLOCATION_FAILED, call, "no host memory for the results");
    CUresult r = CUDA_SUCCESS;
    for (size_t at = 0; at < n && r == CUDA_SUCCESS; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        hcr_fill(g, d, buf, k, elem, lognorm, mean, stddev);
        r = cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)out + at * elem, buf, k * elem, g->stream);
        if (r == CUDA_SUCCESS)
            r = cuStreamSynchronize(g->stream);
    }
    free(buf);
    if (r != CUDA_SUCCESS) {
        char why[96];
        snprintf(why, sizeof(why), "writing the results on the generator's stream: CUresult %d", (int)r);
        return hcr_fail(CURAND_STATUS_LAUNCH_FAILURE, call, why);
    }
    return CURAND_STATUS_SUCCESS;
}

/* ---- the API ---- */

static curandStatus_t hcr_create(curandGenerator_t *gen, curandRngType_t type, int host, const char *call)
{
    int kind;
    if (!gen)
        return hcr_fail(CURAND_STATUS_NOT_INITIALIZED, call, "generator pointer is NULL");
    switch (type) {
    case CURAND_RNG_PSEUDO_DEFAULT: case CURAND_RNG_PSEUDO_XORWOW: kind = HCR_XORWOW; break;
    case CURAND_RNG_PSEUDO_PHILOX4_32_10: kind = HCR_PHILOX; break;
    case CURAND_RNG_PSEUDO_MRG32K3A: kind = HCR_MRG; break;
    case CURAND_RNG_PSEUDO_MTGP32: kind = HCR_MTGP; break;
    case CURAND_RNG_QUASI_DEFAULT: case CURAND_RNG_QUASI_SOBOL32: case CURAND_RNG_QUASI_SCRAMBLED_SOBOL32:
        kind = HCR_SOBOL;
        break;
    case CURAND_RNG_PSEUDO_MT19937: case CURAND_RNG_QUASI_SOBOL64:
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL64: {
        char why[96];
        snprintf(why, sizeof(why), "generator type %d is not implemented by hostcurand", (int)type);
        return hcr_fail(CURAND_STATUS_TYPE_ERROR, call, why);
    }
    default: return hcr_fail(CURAND_STATUS_TYPE_ERROR, call, "unknown generator type");
    }
    const unsigned *vectors = NULL, *scramble = NULL;
    if (kind == HCR_SOBOL) {
        int scr = type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL32;
        curandStatus_t (*dv)(curandDirectionVectors32_t **, curandDirectionVectorSet_t) =
            (curandStatus_t (*)(curandDirectionVectors32_t **, curandDirectionVectorSet_t))hcr_nv_sym(
                "curandGetDirectionVectors32", call);
        curandStatus_t (*sc)(unsigned **) =
            (curandStatus_t (*)(unsigned **))(scr ? hcr_nv_sym("curandGetScrambleConstants32", call) : NULL);
        curandDirectionVectors32_t *v = NULL;
        unsigned *c = NULL;
        if (!dv || (scr && !sc) ||
            dv(&v, scr ? CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6 : CURAND_DIRECTION_VECTORS_32_JOEKUO6) ||
            (scr && sc(&c)))
            return hcr_fail(CURAND_STATUS_INITIALIZATION_FAILED, call, "no Sobol direction vectors");
        vectors = (const unsigned *)v;
        scramble = c;
    }
    curandGenerator_t g = calloc(1, sizeof(*g));
    if (!g)
        return CURAND_STATUS_ALLOCATION_FAILED;
    g->kind = kind;
    g->type = type;
    g->host = host;
    g->ordering = kind == HCR_SOBOL ? CURAND_ORDERING_QUASI_DEFAULT : CURAND_ORDERING_PSEUDO_DEFAULT;
    g->dims = 1;
    g->vectors = vectors;
    g->scramble = scramble;
    *gen = g;
    return CURAND_STATUS_SUCCESS;
}

HCR_API curandStatus_t curandCreateGenerator(curandGenerator_t *g, curandRngType_t t)
{
    return hcr_create(g, t, 0, "curandCreateGenerator");
}
HCR_API curandStatus_t curandCreateGeneratorHost(curandGenerator_t *g, curandRngType_t t)
{
    return hcr_create(g, t, 1, "curandCreateGeneratorHost");
}

HCR_API curandStatus_t curandDestroyGenerator(curandGenerator_t g)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    free(g->base);
    free(g->cur);
    free(g->cur_pos);
    free(g);
    return CURAND_STATUS_SUCCESS;
}

HCR_API curandStatus_t curandGetVersion(int *v)
{
    if (!v)
        return CURAND_STATUS_OUT_OF_RANGE;
    *v = CURAND_VERSION;
    return CURAND_STATUS_SUCCESS;
}

HCR_API curandStatus_t curandGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return CURAND_STATUS_OUT_OF_RANGE;
    switch (type) {
    case MAJOR_VERSION: *value = CURAND_VER_MAJOR; break;
    case MINOR_VERSION: *value = CURAND_VER_MINOR; break;
    case PATCH_LEVEL: *value = CURAND_VER_PATCH; break;
    default: return CURAND_STATUS_OUT_OF_RANGE;
    }
    return CURAND_STATUS_SUCCESS;
}

HCR_API curandStatus_t curandSetStream(curandGenerator_t g, cudaStream_t s)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    g->stream = (CUstream)s;
    return CURAND_STATUS_SUCCESS;
}

HCR_API curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g, unsigned long long seed)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (g->kind == HCR_SOBOL)
        return CURAND_STATUS_TYPE_ERROR;
    g->seed = seed;
    g->ready = 0;
    return CURAND_STATUS_SUCCESS;
}

HCR_API curandStatus_t curandSetGeneratorOffset(curandGenerator_t g, unsigned long long offset)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    g->offset = offset;
    return CURAND_STATUS_SUCCESS;
}

HCR_API curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g, curandOrdering_t order)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (g->kind == HCR_SOBOL)
        return order == CURAND_ORDERING_QUASI_DEFAULT
                   ? CURAND_STATUS_SUCCESS
                   : hcr_fail(CURAND_STATUS_OUT_OF_RANGE, "curandSetGeneratorOrdering", "not a quasirandom ordering");
    switch (order) {
    case CURAND_ORDERING_PSEUDO_BEST: case CURAND_ORDERING_PSEUDO_DEFAULT: case CURAND_ORDERING_PSEUDO_LEGACY:
        g->ordering = order;
        return CURAND_STATUS_SUCCESS;
    case CURAND_ORDERING_PSEUDO_SEEDED: case CURAND_ORDERING_PSEUDO_DYNAMIC:
        return hcr_fail(CURAND_STATUS_OUT_OF_RANGE, "curandSetGeneratorOrdering",
                        "SEEDED and DYNAMIC orderings are not implemented by hostcurand");
    default:
        return hcr_fail(CURAND_STATUS_OUT_OF_RANGE, "curandSetGeneratorOrdering",
                        "not a pseudorandom ordering");
    }
}

HCR_API curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t g, unsigned int dims)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (g->kind != HCR_SOBOL)
        return CURAND_STATUS_TYPE_ERROR;
    if (dims < 1 || dims > 20000)
        return hcr_fail(CURAND_STATUS_OUT_OF_RANGE, "curandSetQuasiRandomGeneratorDimensions",
                        "dimensions must be 1 to 20000");
    g->dims = dims;
    return CURAND_STATUS_SUCCESS;
}

HCR_API curandStatus_t curandGenerateSeeds(curandGenerator_t g)
{
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    return hcr_prepare(g);
}

HCR_API curandStatus_t curandGenerate(curandGenerator_t g, unsigned int *out, size_t n)
{
    return hcr_generate(g, "curandGenerate", D_U32, out, n, 4, 0, 0, 1);
}
HCR_API curandStatus_t curandGenerateLongLong(curandGenerator_t g, unsigned long long *out, size_t n)
{
    (void)out; (void)n;
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    return CURAND_STATUS_TYPE_ERROR; /* 64-bit results: SOBOL64 generators only */
}
HCR_API curandStatus_t curandGenerateUniform(curandGenerator_t g, float *out, size_t n)
{
    return hcr_generate(g, "curandGenerateUniform", D_UNIF, out, n, 4, 0, 0, 1);
}
HCR_API curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double *out, size_t n)
{
    return hcr_generate(g, "curandGenerateUniformDouble", D_UNIF_D, out, n, 8, 0, 0, 1);
}
HCR_API curandStatus_t curandGenerateNormal(curandGenerator_t g, float *out, size_t n, float mean, float sd)
{
    return hcr_generate(g, "curandGenerateNormal", D_NORM, out, n, 4, 0, mean, sd);
}
HCR_API curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double *out, size_t n, double mean,
                                                  double sd)
{
    return hcr_generate(g, "curandGenerateNormalDouble", D_NORM_D, out, n, 8, 0, mean, sd);
}
HCR_API curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float *out, size_t n, float mean, float sd)
{
    return hcr_generate(g, "curandGenerateLogNormal", D_NORM, out, n, 4, 1, mean, sd);
}
HCR_API curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t g, double *out, size_t n, double mean,
                                                     double sd)
{
    return hcr_generate(g, "curandGenerateLogNormalDouble", D_NORM_D, out, n, 8, 1, mean, sd);
}

/* ---- not implemented: a clear error, never numbers that are not NVIDIA's ---- */

struct curandDiscreteDistribution_st {
    double lambda;
};

HCR_API curandStatus_t curandCreatePoissonDistribution(double lambda, curandDiscreteDistribution_t *d)
{
    (void)lambda; (void)d;
    return hcr_fail(CURAND_STATUS_INTERNAL_ERROR, "curandCreatePoissonDistribution",
                    "Poisson distributions are not implemented by hostcurand");
}
HCR_API curandStatus_t curandDestroyDistribution(curandDiscreteDistribution_t d)
{
    (void)d;
    return hcr_fail(CURAND_STATUS_INTERNAL_ERROR, "curandDestroyDistribution",
                    "Poisson distributions are not implemented by hostcurand");
}
HCR_API curandStatus_t curandGeneratePoisson(curandGenerator_t g, unsigned int *out, size_t n, double lambda)
{
    (void)out; (void)n; (void)lambda;
    if (!g)
        return CURAND_STATUS_NOT_INITIALIZED;
    return hcr_fail(CURAND_STATUS_INTERNAL_ERROR, "curandGeneratePoisson",
                    "Poisson results are not implemented by hostcurand");
}
HCR_API curandStatus_t curandGeneratePoissonMethod(curandGenerator_t g, unsigned int *out, size_t n,
                                                   double lambda, curandMethod_t method)
{
    (void)method;
    return curandGeneratePoisson(g, out, n, lambda);
}
/* NVIDIA's tables, from NVIDIA's library (hcr_nv_sym) */
HCR_API curandStatus_t curandGetDirectionVectors32(curandDirectionVectors32_t **v, curandDirectionVectorSet_t set)
{
    curandStatus_t (*f)(curandDirectionVectors32_t **, curandDirectionVectorSet_t) =
        (curandStatus_t (*)(curandDirectionVectors32_t **, curandDirectionVectorSet_t))hcr_nv_sym(
            "curandGetDirectionVectors32", "curandGetDirectionVectors32");
    return f ? f(v, set) : CURAND_STATUS_INITIALIZATION_FAILED;
}
HCR_API curandStatus_t curandGetDirectionVectors64(curandDirectionVectors64_t **v, curandDirectionVectorSet_t set)
{
    curandStatus_t (*f)(curandDirectionVectors64_t **, curandDirectionVectorSet_t) =
        (curandStatus_t (*)(curandDirectionVectors64_t **, curandDirectionVectorSet_t))hcr_nv_sym(
            "curandGetDirectionVectors64", "curandGetDirectionVectors64");
    return f ? f(v, set) : CURAND_STATUS_INITIALIZATION_FAILED;
}
HCR_API curandStatus_t curandGetScrambleConstants32(unsigned int **c)
{
    curandStatus_t (*f)(unsigned int **) =
        (curandStatus_t (*)(unsigned int **))hcr_nv_sym("curandGetScrambleConstants32", "curandGetScrambleConstants32");
    return f ? f(c) : CURAND_STATUS_INITIALIZATION_FAILED;
}
HCR_API curandStatus_t curandGetScrambleConstants64(unsigned long long **c)
{
    curandStatus_t (*f)(unsigned long long **) = (curandStatus_t (*)(unsigned long long **))hcr_nv_sym(
        "curandGetScrambleConstants64", "curandGetScrambleConstants64");
    return f ? f(c) : CURAND_STATUS_INITIALIZATION_FAILED;
}
