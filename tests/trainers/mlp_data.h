/* mlp_data.h — the host side shared by the two test trainers (mlp.c, Driver API; rt_mlp.cu,
 * runtime API): model shape, tensor layout, the counter-based data/teacher/init generator and the
 * checksum/--save serialisation. Header-only (static functions), valid C11 and C++.
 * Invariant: only exactly rounded IEEE operations (+ - * / sqrt, fabsf), so samples and initial
 * weights are bit-identical on every machine and in both trainers; changing anything here changes
 * mlp's output (tests/trainers tests and tests/intercept/test_passthrough_mlp.sh pin it).
 * Threading: pure functions. Callers: tests/trainers/mlp.c, tests/trainers/rt_mlp.cu.
 */
#ifndef MLP_DATA_H
#define MLP_DATA_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MLP_IN = 16, MLP_HID = 32, MLP_OUT = 4, MLP_TEACHER_HID = 8 };
enum { MLP_ACT_NONE = 0, MLP_ACT_TANH = 1 };
enum { MLP_EXIT_USAGE = 2 };

/* the tensors, in their order inside the parameter (and gradient) buffer */
typedef struct mlp_tensor {
    const char *name;
    int offset, count, fan_in;
} mlp_tensor_t;

static const mlp_tensor_t mlp_tensors[] = {
    {"W1", 0, MLP_HID * MLP_IN, MLP_IN},
    {"b1", MLP_HID * MLP_IN, MLP_HID, MLP_IN},
    {"W2", MLP_HID * MLP_IN + MLP_HID, MLP_OUT * MLP_HID, MLP_HID},
    {"b2", MLP_HID * MLP_IN + MLP_HID + MLP_OUT * MLP_HID, MLP_OUT, MLP_HID},
};
#define MLP_NTENSORS ((int)(sizeof mlp_tensors / sizeof mlp_tensors[0]))
#define MLP_NPARAMS (MLP_HID * MLP_IN + MLP_HID + MLP_OUT * MLP_HID + MLP_OUT)

/* ---- deterministic, counter-based random numbers (exact IEEE arithmetic only, no libm) ---- */

enum { MLP_DOM_INIT = 1, MLP_DOM_TEACHER, MLP_DOM_X, MLP_DOM_NOISE };

static uint64_t mlp_mix64(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t mlp_hash4(uint64_t seed, uint64_t dom, uint64_t a, uint64_t b)
{
    uint64_t h = mlp_mix64(seed + 0x9e3779b97f4a7c15ull);
    h = mlp_mix64(h ^ (dom * 0xd6e8feb86659fd93ull));
    h = mlp_mix64(h ^ a);
    return mlp_mix64(h ^ (b + 0x632be59bd9b4e019ull));
}

/* uniform in [-1, 1), a multiple of 2^-23: exact */
static float mlp_uniform(uint64_t h)
{
    return (float)(h >> 40) * 0x1p-23f - 1.0f;
}

typedef struct mlp_teacher {
    float w1[MLP_TEACHER_HID][MLP_IN], c1[MLP_TEACHER_HID], w2[MLP_OUT][MLP_TEACHER_HID], c2[MLP_OUT];
} mlp_teacher_t;

static void mlp_teacher_init(mlp_teacher_t *t, uint64_t seed)
{
    uint64_t k = 0;
    for (int j = 0; j < MLP_TEACHER_HID; j++) {
        for (int i = 0; i < MLP_IN; i++)
            t->w1[j][i] = 0.5f * mlp_uniform(mlp_hash4(seed, MLP_DOM_TEACHER, 0, k++));
        t->c1[j] = 0.5f * mlp_uniform(mlp_hash4(seed, MLP_DOM_TEACHER, 0, k++));
    }
    for (int o = 0; o < MLP_OUT; o++) {
        for (int j = 0; j < MLP_TEACHER_HID; j++)
            t->w2[o][j] = mlp_uniform(mlp_hash4(seed, MLP_DOM_TEACHER, 0, k++));
        t->c2[o] = 0.25f * mlp_uniform(mlp_hash4(seed, MLP_DOM_TEACHER, 0, k++));
    }
}

/* Global sample `idx`: x uniform in [-1,1)^16; y = teacher(x) + 0.01 * uniform noise. */
static void mlp_sample(const mlp_teacher_t *t, uint64_t seed, uint64_t idx, float *x, float *y)
{
    float h[MLP_TEACHER_HID];
    for (int i = 0; i < MLP_IN; i++)
        x[i] = mlp_uniform(mlp_hash4(seed, MLP_DOM_X, idx, (uint64_t)i));
    for (int j = 0; j < MLP_TEACHER_HID; j++) {
        float s = t->c1[j];
        for (int i = 0; i < MLP_IN; i++)
            s += t->w1[j][i] * x[i];
        h[j] = s / (1.0f + fabsf(s)); /* softsign: exact-rounded ops only */
    }
    for (int o = 0; o < MLP_OUT; o++) {
        float s = t->c2[o];
        for (int j = 0; j < MLP_TEACHER_HID; j++)
            s += t->w2[o][j] * h[j];
        y[o] = s + 0.01f * mlp_uniform(mlp_hash4(seed, MLP_DOM_NOISE, idx, (uint64_t)o));
    }
}

/* --init per-process: a seed from the pid and the clock (printed by the trainers as init_seed) */
static uint64_t mlp_per_process_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return mlp_mix64((uint64_t)getpid()) ^ mlp_mix64((uint64_t)ts.tv_nsec + 1) ^ (uint64_t)ts.tv_sec;
}

/* initial parameters: uniform(-1,1)/sqrt(fan_in) (sqrt is exactly rounded) */
static void mlp_init_params(float *params, uint64_t init_seed)
{
    for (int t = 0; t < MLP_NTENSORS; t++) {
        float s = 1.0f / sqrtf((float)mlp_tensors[t].fan_in);
        for (int i = 0; i < mlp_tensors[t].count; i++)
            params[mlp_tensors[t].offset + i] =
                s * mlp_uniform(mlp_hash4(init_seed, MLP_DOM_INIT, (uint64_t)t, (uint64_t)i));
    }
}

static void mlp_put_le32(unsigned char *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    b[0] = (unsigned char)u; b[1] = (unsigned char)(u >> 8);
    b[2] = (unsigned char)(u >> 16); b[3] = (unsigned char)(u >> 24);
}

/* The --save bytes (little-endian float32, in order) of params[MLP_NPARAMS]; *sum = their sum in
 * double, *hash = FNV-1a 64 of the bytes: the trainers' `checksum SUM HASH` line. */
static void mlp_serialise(const float *params, unsigned char *bytes, double *sum, uint64_t *hash)
{
    double s = 0.0;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < MLP_NPARAMS; i++) {
        s += (double)params[i];
        mlp_put_le32(bytes + 4 * i, params[i]);
    }
    for (size_t i = 0; i < 4 * (size_t)MLP_NPARAMS; i++)
        h = (h ^ bytes[i]) * 0x100000001b3ull;
    *sum = s;
    *hash = h;
}

/* ---- option parsing, shared by mlp and rt_mlp: a bad value is a message and exit 2 ---- */
static const char *mlp_prog = "mlp"; /* the program name in messages; rt_mlp sets "rt_mlp" */

__attribute__((unused)) static void mlp_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", mlp_prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry '%s --help'.\n", mlp_prog);
    exit(MLP_EXIT_USAGE);
}

__attribute__((unused)) static long long mlp_parse_int(const char *opt, const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s: invalid value '%s' (an integer in [%lld, %lld])\n"
                        "Try '%s --help'.\n", mlp_prog, opt, s, lo, hi, mlp_prog);
        exit(MLP_EXIT_USAGE);
    }
    return v;
}

__attribute__((unused)) static uint64_t mlp_parse_u64(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') {
        fprintf(stderr, "%s: %s: invalid value '%s' (an unsigned 64-bit integer)\n"
                        "Try '%s --help'.\n", mlp_prog, opt, s, mlp_prog);
        exit(MLP_EXIT_USAGE);
    }
    return (uint64_t)v;
}

__attribute__((unused)) static float mlp_parse_pos_float(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || end == s || *end || !isfinite(v) || !(v > 0.0f)) {
        fprintf(stderr, "%s: %s: invalid value '%s' (a finite number > 0)\nTry '%s --help'.\n",
                mlp_prog, opt, s, mlp_prog);
        exit(MLP_EXIT_USAGE);
    }
    return v;
}

#endif /* MLP_DATA_H */
