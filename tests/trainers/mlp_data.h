/* mlp_data.h — the host side shared by the two test trainers (mlp.c, Driver API; rt_mlp.cu,
 * runtime API): model shape, tensor layout, the counter-based data/teacher/init generator and the
 * checksum/--save serialisation, and the options both take (one parser). Header-only (static
 * functions), valid C11 and C++.
 * Invariant: only exactly rounded IEEE operations (+ - * / sqrt, fabsf), so samples and initial
 * weights are bit-identical on every machine and in both trainers; changing anything here changes
 * mlp's output (tests/trainers tests and tests/intercept/test_passthrough_mlp.sh pin it).
 * Threading: pure functions. Callers: tests/trainers/mlp.c, tests/trainers/rt_mlp.cu.
 */
#ifndef MLP_DATA_H
#define MLP_DATA_H

#include <errno.h>
#include <getopt.h>
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

/* The options both trainers take (rt_mlp: exactly these; mlp: these and its own). */
typedef struct mlp_common_opts {
    long long steps, batch, shard_rank, shard_count;
    float lr, clip;            /* clip <= 0: off */
    int lr_set;
    uint64_t seed;
    int adam, per_tensor, init_per_process, init_seed_set;
    uint64_t init_seed;        /* --init-seed: the initial weights' seed (default --seed) */
    const char *save, *dump_samples;
} mlp_common_opts_t;

/* getopt_long ids of the common options; a trainer's own ids start at MLP_O_OWN */
enum { MLP_O_STEPS = 0x100, MLP_O_BATCH, MLP_O_LR, MLP_O_SEED, MLP_O_RANK, MLP_O_COUNT, MLP_O_OPT,
       MLP_O_UPDATE, MLP_O_CLIP, MLP_O_INIT, MLP_O_INIT_SEED, MLP_O_SAVE, MLP_O_DUMP, MLP_O_HELP,
       MLP_O_OWN };

/* their entries of a getopt_long table (a trainer's table starts with these) */
#define MLP_COMMON_LONGOPTS                                                                    \
    {"steps", required_argument, NULL, MLP_O_STEPS},                                           \
    {"batch", required_argument, NULL, MLP_O_BATCH},                                           \
    {"lr", required_argument, NULL, MLP_O_LR},                                                 \
    {"seed", required_argument, NULL, MLP_O_SEED},                                             \
    {"shard-rank", required_argument, NULL, MLP_O_RANK},                                       \
    {"shard-count", required_argument, NULL, MLP_O_COUNT},                                     \
    {"optimizer", required_argument, NULL, MLP_O_OPT},                                         \
    {"update", required_argument, NULL, MLP_O_UPDATE},                                         \
    {"clip", required_argument, NULL, MLP_O_CLIP},                                             \
    {"init", required_argument, NULL, MLP_O_INIT},                                             \
    {"init-seed", required_argument, NULL, MLP_O_INIT_SEED},                                   \
    {"save", required_argument, NULL, MLP_O_SAVE},                                             \
    {"dump-samples", required_argument, NULL, MLP_O_DUMP},                                     \
    {"help", no_argument, NULL, MLP_O_HELP}

/* their lines of a trainer's --help text */
#define MLP_COMMON_USAGE \
    "  --steps N              training steps (default 100; 0 allowed)\n" \
    "  --batch B              samples per step for this process (default 8)\n" \
    "  --lr LR                learning rate (default 0.1 for sgd, 0.01 for adam)\n" \
    "  --seed S               data/teacher seed, and init seed unless --init per-process (default 1)\n" \
    "  --shard-rank R         this process's rank among --shard-count (default 0)\n" \
    "  --shard-count N        step t reads global samples [t*N*B, (t+1)*N*B); rank R takes\n" \
    "                         [t*N*B + R*B, t*N*B + (R+1)*B), in increasing order (default 1)\n" \
    "  --optimizer sgd|adam   (default sgd; adam: b1 0.9, b2 0.999, eps 1e-8, no weight decay)\n" \
    "  --update fused|per-tensor  one update launch over all parameters, or one per tensor\n" \
    "                         (W1, b1, W2, b2); bit-identical results (default fused)\n" \
    "  --clip NORM            clip the global gradient norm to NORM (norm kernel before update)\n" \
    "  --init per-process|seed  initial weights from getpid() and the clock, or from --seed\n" \
    "  --init-seed S          initial weights from S (reproduces a per-process run: its\n" \
    "                         init_seed is printed on stderr)\n" \
    "  --save FILE            write the final parameters: raw little-endian float32, W1 b1 W2 b2\n" \
    "  --dump-samples FILE    write the global sample indices read, one per line, in read order\n"

static void mlp_common_defaults(mlp_common_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->steps = 100;
    o->batch = 8;
    o->shard_count = 1;
    o->seed = 1;
}

/* c is getopt_long's answer: a common option other than --help is parsed into o (1); else 0 */
static int mlp_common_option(int c, const char *arg, mlp_common_opts_t *o)
{
    switch (c) {
    case MLP_O_STEPS: o->steps = mlp_parse_int("--steps", arg, 0, 1000000000); return 1;
    case MLP_O_BATCH: o->batch = mlp_parse_int("--batch", arg, 1, 1 << 20); return 1;
    case MLP_O_LR: o->lr = mlp_parse_pos_float("--lr", arg); o->lr_set = 1; return 1;
    case MLP_O_SEED:
        if (arg[0] == '-')
            mlp_usage_error("--seed: invalid value '%s' (an unsigned integer)", arg);
        o->seed = (uint64_t)mlp_parse_int("--seed", arg, 0, INT64_MAX);
        return 1;
    case MLP_O_RANK: o->shard_rank = mlp_parse_int("--shard-rank", arg, 0, 1 << 20); return 1;
    case MLP_O_COUNT: o->shard_count = mlp_parse_int("--shard-count", arg, 1, 1 << 20); return 1;
    case MLP_O_OPT:
        if (!strcmp(arg, "sgd")) o->adam = 0;
        else if (!strcmp(arg, "adam")) o->adam = 1;
        else mlp_usage_error("--optimizer: invalid value '%s' (sgd or adam)", arg);
        return 1;
    case MLP_O_UPDATE:
        if (!strcmp(arg, "fused")) o->per_tensor = 0;
        else if (!strcmp(arg, "per-tensor")) o->per_tensor = 1;
        else mlp_usage_error("--update: invalid value '%s' (fused or per-tensor)", arg);
        return 1;
    case MLP_O_CLIP: o->clip = mlp_parse_pos_float("--clip", arg); return 1;
    case MLP_O_INIT:
        if (!strcmp(arg, "per-process")) o->init_per_process = 1;
        else if (!strcmp(arg, "seed")) o->init_per_process = 0;
        else mlp_usage_error("--init: invalid value '%s' (per-process or seed)", arg);
        return 1;
    case MLP_O_INIT_SEED:
        o->init_seed = mlp_parse_u64("--init-seed", arg);
        o->init_seed_set = 1;
        return 1;
    case MLP_O_SAVE: o->save = arg; return 1;
    case MLP_O_DUMP: o->dump_samples = arg; return 1;
    default: return 0;
    }
}

/* getopt_long's ':' (a value missing) and '?' (an unknown option): a message and exit 2 */
static void mlp_bad_option(int c, char **argv)
{
    if (c == ':')
        mlp_usage_error("option '%s' needs a value", argv[optind - 1]);
    mlp_usage_error("unknown option '%s'", argv[optind - 1]);
}

/* After the options: no operands, the shard inside the count, the optimizer's default lr. */
static void mlp_common_finish(int argc, char **argv, mlp_common_opts_t *o)
{
    if (optind < argc)
        mlp_usage_error("unexpected argument '%s'", argv[optind]);
    if (o->shard_rank >= o->shard_count) {
        fprintf(stderr, "%s: --shard-rank %lld must be below --shard-count %lld\n"
                        "Try '%s --help'.\n", mlp_prog, o->shard_rank, o->shard_count, mlp_prog);
        exit(MLP_EXIT_USAGE);
    }
    if (!o->lr_set)
        o->lr = o->adam ? 0.01f : 0.1f;
}

#endif /* MLP_DATA_H */
