/* test_coll.c — proves the collectives (libash_coll.a) on hostcuda, one process per rank.
 *
 * (1) allreduce, every supported dtype/wire combination, sum and mean, sizes 1, 1000, 1M+1 (and
 * fp16-overflowing data for fp16-wire means) equals a host reference with the same rounding
 * rules: bit-exact for small integers when N is a power of two, else within a stated bound;
 * (2) all ranks hold bit-identical results (FNV-1a hashes allgathered); (3) stream order: inputs
 * queued just before, readback queued just after, no host synchronisation between; (4) broadcast
 * from the first and the last rank; two streams back to back sharing staging/scratch; (5)
 * backend choice (--expect), warning count (--expect-warnings), a log substring (--expect-log);
 * (6) MPI initialised/finalised by the library only when the program did not; (7) a late peer
 * -> ETIMEDOUT then ESTATE (--timeout-case); (8) negative controls: a wrong expected value
 * and a lying rank are caught. Run under mpirun by tests/collectives/test_coll.sh.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <mpi.h>

#include "ash_coll.h"
#include "ash_coll_cast.h"

static int g_rank, g_world = 1, g_local, g_failed, g_warnings, g_errors, g_quick;
static CUstream g_stream;
static const char *g_expect_log;   /* a substring some log message must contain */
static int g_expect_log_seen;

#define FAIL(...)                                                                            \
    do {                                                                                     \
        fprintf(stderr, "FAIL [rank %d] %s:%d: ", g_rank, __FILE__, __LINE__);               \
        fprintf(stderr, __VA_ARGS__);                                                        \
        fprintf(stderr, "\n");                                                               \
        g_failed++;                                                                          \
    } while (0)

#define CU(call)                                                                             \
    do {                                                                                     \
        CUresult r_ = (call);                                                                \
        if (r_ != CUDA_SUCCESS) {                                                            \
            fprintf(stderr, "[rank %d] %s failed: %d\n", g_rank, #call, (int)r_);            \
            exit(2);                                                                         \
        }                                                                                    \
    } while (0)

static void test_log(int level, const char *msg)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    if (level == ASH_COLL_LOG_WARN)
        g_warnings++;
    if (g_expect_log && strstr(msg, g_expect_log))
        g_expect_log_seen = 1;
    if (level == ASH_COLL_LOG_ERROR)
        g_errors++;
    if (level <= ASH_COLL_LOG_INFO || getenv("TEST_COLL_DEBUG"))
        fprintf(stderr, "[rank %d] %s: %s\n", g_rank, names[level & 3], msg);
}

/* ---- deterministic inputs ----------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* value of element i on rank r in case `seed`. Patterns: small integers (exact everywhere),
 * random in [-1, 1), large in [30000, 60000) (an fp16 SUM of 2+ ranks overflows: only a mean
 * that divides before the sum stays finite). */
enum { PAT_RANDOM = 0, PAT_INTS = 1, PAT_LARGE = 2 };

static float gen(int pat, uint64_t seed, int r, size_t i)
{
    uint64_t h = mix(seed * 1000003ull ^ ((uint64_t)r << 40) ^ i);
    if (pat == PAT_INTS)
        return (float)((int)(h % 9) - 4);
    if (pat == PAT_LARGE)
        return (float)(30000.0 + (double)(h >> 40) * 0x1p-24 * 30000.0);
    return (float)((double)(h >> 40) * 0x1p-23 - 1.0);   /* [-1, 1) */
}

static float round_to(ash_coll_dtype_t t, float v)
{
    if (t == ASH_COLL_BF16)
        return ash_coll_bf16_to_f32(ash_coll_f32_to_bf16_rn(v));
    if (t == ASH_COLL_F16)
        return ash_coll_f16_to_f32(ash_coll_f32_to_f16_rn(v));
    return v;
}

static void store(ash_coll_dtype_t t, void *p, size_t i, float v)
{
    if (t == ASH_COLL_F32)
        ((float *)p)[i] = v;
    else if (t == ASH_COLL_BF16)
        ((uint16_t *)p)[i] = ash_coll_f32_to_bf16_rn(v);
    else
        ((uint16_t *)p)[i] = ash_coll_f32_to_f16_rn(v);
}

static float load(ash_coll_dtype_t t, const void *p, size_t i)
{
    if (t == ASH_COLL_F32)
        return ((const float *)p)[i];
    if (t == ASH_COLL_BF16)
        return ash_coll_bf16_to_f32(((const uint16_t *)p)[i]);
    return ash_coll_f16_to_f32(((const uint16_t *)p)[i]);
}

static double unit_roundoff(ash_coll_dtype_t t)
{
    return t == ASH_COLL_BF16 ? 0x1p-8 : t == ASH_COLL_F16 ? 0x1p-11 : 0x1p-24;
}

/* ---- reference and comparator -------------------------------------------------------------- */

typedef struct ref {
    double value;   /* exact sum of the wire-rounded contributions, scaled */
    double tol;     /* 0 = must be bit-exact rn(value) */
} ref_t;

/* Reference for element i: each rank's stored value, rounded to the wire as the backends do
 * (fp16 wire: scaled by 1/N first), summed exactly in double, then the mean's division. Bound
 * (random data): (N+1) * u_wire * sum|contributions| + u_out * |value| + 2^-24. */
static ref_t reference(int pat, uint64_t seed, size_t i, ash_coll_dtype_t dtype,
                       ash_coll_dtype_t wire, ash_coll_redop_t op)
{
    int mean = op == ASH_COLL_MEAN, pre = mean && wire == ASH_COLL_F16;
    float inv = 1.0f / (float)g_world;
    double s = 0, a = 0;
    ref_t rf;

    for (int r = 0; r < g_world; r++) {
        float x = round_to(dtype, gen(pat, seed, r, i));
        x = round_to(wire, pre ? x * inv : x);
        s += x;
        a += fabs(x);
    }
    if (mean && !pre) {
        s *= inv;
        a *= inv;
    }
    rf.value = s;
    /* integers are exact everywhere only if dividing by N is exact (N a power of two) */
    rf.tol = pat == PAT_INTS && (g_world & (g_world - 1)) == 0 ? 0.0
                  : (g_world + 1) * unit_roundoff(wire) * a + unit_roundoff(dtype) * fabs(s) +
                        0x1p-24;
    return rf;
}

/* 0 if got matches; else prints both sides of the first few mismatches and returns their count */
static size_t compare(const char *what, const void *got, size_t count, ash_coll_dtype_t dtype,
                      ash_coll_dtype_t wire, ash_coll_redop_t op, int pat, uint64_t seed,
                      double inject, int quiet)
{
    size_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        ref_t rf = reference(pat, seed, i, dtype, wire, op);
        float g = load(dtype, got, i);
        double want = rf.value + (i == 0 ? inject : 0.0);
        int ok = rf.tol == 0 ? ash_coll_f32_bits(g) == ash_coll_f32_bits(round_to(dtype,
                                                                              (float)want)) ||
                                   (g == 0.0f && want == 0.0)
                             : fabs((double)g - want) <= rf.tol;
        if (!ok && ++bad <= 3 && !quiet) {
            fprintf(stderr, "  [rank %d] %s: element %zu: got %.9g (bits 0x%08x), expected "
                    "%.9g +- %.3g; inputs:", g_rank, what, i, (double)g, ash_coll_f32_bits(g),
                    want, rf.tol);
            for (int r = 0; r < g_world; r++)
                fprintf(stderr, " %.9g", (double)round_to(dtype, gen(pat, seed, r, i)));
            fprintf(stderr, "\n");
        }
    }
    return bad;
}

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* 1 if every rank passed the same hash. `tamper`: the last rank lies (negative control). */
static int identical_everywhere(uint64_t h, int tamper)
{
    uint64_t *all;
    int same = 1;

    if (g_world == 1)
        return 1;
    if (tamper && g_rank == g_world - 1)
        h ^= 1;
    all = calloc((size_t)g_world, sizeof *all);
    MPI_Allgather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int r = 1; r < g_world; r++)
        if (all[r] != all[0])
            same = 0;
    if (!same && !tamper) {
        fprintf(stderr, "  [rank %d] result hashes differ across ranks:", g_rank);
        for (int r = 0; r < g_world; r++)
            fprintf(stderr, " %016llx", (unsigned long long)all[r]);
        fprintf(stderr, "\n");
    }
    free(all);
    return same;
}

/* ---- cases ----------------------------------------------------------------------------------- */

static int g_cases;

static void run_allreduce(ash_coll_t *c, size_t count, ash_coll_dtype_t dtype,
                          ash_coll_dtype_t wire, ash_coll_redop_t op, int pat, uint64_t seed)
{
    size_t es = ash_coll_dtype_size(dtype), bytes = count * es;
    void *in = malloc(bytes), *out = malloc(bytes);
    ash_coll_dtype_t w = wire == ASH_COLL_SAME ? dtype : wire;
    char what[160];
    CUdeviceptr d;
    ash_coll_status_t st;
    size_t bad;

    snprintf(what, sizeof what, "allreduce %s/%s %s n=%zu %s", ash_coll_dtype_name(dtype),
             ash_coll_dtype_name(wire), op == ASH_COLL_MEAN ? "mean" : "sum", count,
             pat == PAT_INTS ? "ints" : pat == PAT_LARGE ? "large" : "random");
    for (size_t i = 0; i < count; i++)
        store(dtype, in, i, gen(pat, seed, g_rank, i));
    CU(cuMemAlloc_v2(&d, bytes));
    /* queued, not waited for: the collective must order itself after this copy */
    CU(cuMemcpyHtoDAsync_v2(d, in, bytes, g_stream));
    st = ash_coll_allreduce(c, d, count, dtype, wire, op, g_stream);
    if (st != ASH_COLL_OK) {
        FAIL("%s: %s", what, ash_coll_status_name(st));
        goto out;
    }
    /* queued right after, then one synchronise: sees the reduced values only if stream-ordered */
    CU(cuMemcpyDtoHAsync_v2(out, d, bytes, g_stream));
    CU(cuStreamSynchronize(g_stream));
    bad = compare(what, out, count, dtype, w, op, pat, seed, 0.0, 0);
    if (bad)
        FAIL("%s: %zu of %zu elements differ from the reference", what, bad, count);
    if (!identical_everywhere(fnv1a(out, bytes), 0))
        FAIL("%s: ranks hold different results", what);
    g_cases++;
out:
    CU(cuMemFree_v2(d));
    free(in);
    free(out);
}

static void run_broadcast(ash_coll_t *c, size_t bytes, int root)
{
    unsigned char *buf = malloc(bytes), *want = malloc(bytes);
    CUdeviceptr d;
    ash_coll_status_t st;
    size_t first = bytes;

    for (size_t i = 0; i < bytes; i++) {
        want[i] = (unsigned char)mix(i * 7 + (unsigned)root);
        buf[i] = g_rank == root ? want[i] : 0xEE;
    }
    CU(cuMemAlloc_v2(&d, bytes));
    CU(cuMemcpyHtoDAsync_v2(d, buf, bytes, g_stream));
    st = ash_coll_broadcast(c, d, bytes, root, g_stream);
    if (st != ASH_COLL_OK)
        FAIL("broadcast %zu bytes from %d: %s", bytes, root, ash_coll_status_name(st));
    CU(cuMemcpyDtoHAsync_v2(buf, d, bytes, g_stream));
    CU(cuStreamSynchronize(g_stream));
    for (size_t i = 0; i < bytes && first == bytes; i++)
        if (buf[i] != want[i])
            first = i;
    if (first != bytes)
        FAIL("broadcast %zu bytes from %d: byte %zu is 0x%02x, root's is 0x%02x", bytes, root,
             first, buf[first], want[first]);
    g_cases++;
    CU(cuMemFree_v2(d));
    free(buf);
    free(want);
}

/* Two streams back to back, no host synchronisation: the second reuses the staging/scratch
 * memory the first may still be using, so it must be ordered after the first's last use. */
static void run_two_streams(ash_coll_t *c, ash_coll_dtype_t wire)
{
    enum { N = 300000 };
    float *in[2], *out[2];
    CUdeviceptr d[2];
    CUstream s[2] = {g_stream, NULL};
    char what[96];

    CU(cuStreamCreate(&s[1], CU_STREAM_NON_BLOCKING));
    for (int k = 0; k < 2; k++) {
        in[k] = malloc(N * sizeof(float));
        out[k] = malloc(N * sizeof(float));
        for (size_t i = 0; i < N; i++)
            in[k][i] = gen(PAT_INTS, 500 + (uint64_t)k, g_rank, i);
        CU(cuMemAlloc_v2(&d[k], N * sizeof(float)));
        /* on its own stream: a synchronous cuMemcpyHtoD may return before the data lands, and
         * a non-blocking stream does not wait for the legacy stream */
        CU(cuMemcpyHtoDAsync_v2(d[k], in[k], N * sizeof(float), s[k]));
    }
    for (int k = 0; k < 2; k++)
        if (ash_coll_allreduce(c, d[k], N, ASH_COLL_F32, wire, ASH_COLL_SUM, s[k]) != ASH_COLL_OK)
            FAIL("two streams: allreduce %d failed", k);
    for (int k = 0; k < 2; k++) {
        CU(cuMemcpyDtoHAsync_v2(out[k], d[k], N * sizeof(float), s[k]));
        CU(cuStreamSynchronize(s[k]));
        snprintf(what, sizeof what, "two streams, stream %d, wire %s", k, ash_coll_dtype_name(wire));
        if (compare(what, out[k], N, ASH_COLL_F32, wire == ASH_COLL_SAME ? ASH_COLL_F32 : wire,
                    ASH_COLL_SUM, PAT_INTS, 500 + (uint64_t)k, 0.0, 0))
            FAIL("%s: result differs from the reference", what);
        CU(cuMemFree_v2(d[k]));
        free(in[k]);
        free(out[k]);
    }
    CU(cuStreamDestroy_v2(s[1]));
    g_cases++;
}

/* The checks must be able to fail: a wrong expected value and a lying rank are both caught. */
static void run_negative_controls(ash_coll_t *c)
{
    size_t n = 64;
    float *out = malloc(n * sizeof *out);
    CUdeviceptr d;

    for (size_t i = 0; i < n; i++)
        out[i] = gen(PAT_INTS, 99, g_rank, i);
    CU(cuMemAlloc_v2(&d, n * sizeof *out));
    CU(cuMemcpyHtoDAsync_v2(d, out, n * sizeof *out, g_stream));
    if (ash_coll_allreduce(c, d, n, ASH_COLL_F32, ASH_COLL_SAME, ASH_COLL_SUM, g_stream))
        FAIL("negative control: allreduce failed");
    CU(cuMemcpyDtoHAsync_v2(out, d, n * sizeof *out, g_stream));
    CU(cuStreamSynchronize(g_stream));
    if (compare("control", out, n, ASH_COLL_F32, ASH_COLL_F32, ASH_COLL_SUM, PAT_INTS, 99, 0.0, 0))
        FAIL("negative control: the untampered result should match");
    if (compare("control", out, n, ASH_COLL_F32, ASH_COLL_F32, ASH_COLL_SUM, PAT_INTS, 99, 1.0, 1) != 1)
        FAIL("negative control: comparator missed a wrong expected value (+1 at element 0)");
    if (g_world > 1 && identical_everywhere(fnv1a(out, n * sizeof *out), 1))
        FAIL("negative control: identity check missed a rank with a different hash");
    /* refusals: unsupported combination and bad arguments, no state change */
    if (ash_coll_allreduce(c, d, n, ASH_COLL_BF16, ASH_COLL_F16, ASH_COLL_SUM, g_stream) !=
        ASH_COLL_EUNSUPPORTED)
        FAIL("bf16 data on an f16 wire should be ASH_COLL_EUNSUPPORTED");
    if (ash_coll_allreduce(c, 0, n, ASH_COLL_F32, ASH_COLL_SAME, ASH_COLL_SUM, g_stream) !=
        ASH_COLL_EINVAL)
        FAIL("NULL buffer should be ASH_COLL_EINVAL");
    if (ash_coll_broadcast(c, d, 4, g_world, g_stream) != ASH_COLL_EINVAL)
        FAIL("root out of range should be ASH_COLL_EINVAL");
    g_errors = 0;   /* the refusals above log errors by design */
    CU(cuMemFree_v2(d));
    free(out);
    g_cases++;
}

/* Fingerprint exchange: every rank receives every rank's 6 words, in rank order (world 1: its
 * own); a NULL argument is refused. */
static void run_fingerprint(ash_coll_t *c)
{
    unsigned long long fp[ASH_COLL_FP_WORDS], *all = calloc((size_t)g_world, sizeof fp);
    for (int i = 0; i < ASH_COLL_FP_WORDS; i++)
        fp[i] = 1000ull * (unsigned long long)g_rank + (unsigned long long)i;
    if (ash_coll_fingerprint(c, fp, all) != ASH_COLL_OK)
        FAIL("fingerprint exchange failed");
    for (int r = 0; r < g_world; r++)
        for (int i = 0; i < ASH_COLL_FP_WORDS; i++)
            if (all[r * ASH_COLL_FP_WORDS + i] != 1000ull * (unsigned long long)r + (unsigned long long)i) {
                FAIL("fingerprint: word %d of rank %d is %llu, expected %llu", i, r,
                     all[r * ASH_COLL_FP_WORDS + i], 1000ull * (unsigned long long)r + (unsigned long long)i);
                r = g_world;
                break;
            }
    if (ash_coll_fingerprint(c, fp, NULL) != ASH_COLL_EINVAL)
        FAIL("fingerprint with a NULL output should be ASH_COLL_EINVAL");
    free(all);
    g_cases++;
}

/* --timeout-case: rank 0 waits in a barrier that the others join 5 s late; with timeout_s = 2 it
 * must give up with ASH_COLL_ETIMEDOUT (one error report) after >= 2 s, and refuse further calls
 * with ASH_COLL_ESTATE; the late ranks still complete. */
static void run_timeout_case(ash_coll_t *c)
{
    struct timespec t0, t1;
    ash_coll_status_t st;
    double secs;

    if (g_rank == 0) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        st = ash_coll_barrier(c);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (st != ASH_COLL_ETIMEDOUT || secs < 2.0 || secs > 4.5)
            FAIL("barrier with late peers: got %s after %.2f s, expected ASH_COLL_ETIMEDOUT "
                 "after 2..4.5 s", ash_coll_status_name(st), secs);
        if (g_errors != 1)
            FAIL("expected exactly one error report for the timeout, got %d", g_errors);
        st = ash_coll_allreduce(c, 1, 1, ASH_COLL_F32, ASH_COLL_SAME, ASH_COLL_SUM, g_stream);
        if (st != ASH_COLL_ESTATE)
            FAIL("after a timeout: got %s, expected ASH_COLL_ESTATE", ash_coll_status_name(st));
        g_errors = 0;
    } else {
        sleep(5);
        st = ash_coll_barrier(c);
        if (st != ASH_COLL_OK)
            FAIL("late barrier: %s", ash_coll_status_name(st));
    }
    MPI_Barrier(MPI_COMM_WORLD);   /* drives rank 0's abandoned request to completion */
    g_cases++;
}

static void *resolve_default(void *ctx, const char *name)
{
    (void)ctx;
    return dlsym(RTLD_DEFAULT, name);
}

static void *resolve_without_launch(void *ctx, const char *name)
{
    return strcmp(name, "cuLaunchKernel") == 0 ? NULL : resolve_default(ctx, name);
}

static int env_int(const char *a, const char *b, int dflt)
{
    const char *v = getenv(a);
    if (!v && b)
        v = getenv(b);
    return v && *v ? atoi(v) : dflt;
}

int main(int argc, char **argv)
{
    const char *backend = "auto", *expect = NULL, *nccl_lib = NULL;
    int expect_warn = -1, mpi_first = 0, timeout_case = 0, nccl_missing_on = -1, staging = 0;
    int inited = 0, finalized = 0, failed_any;
    ash_coll_config_t cfg = {0};
    ash_coll_t *c = NULL;
    ash_coll_status_t st;
    CUdevice dev;
    CUcontext ctx;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc) expect = argv[++i];
        else if (!strcmp(argv[i], "--expect-warnings") && i + 1 < argc) expect_warn = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nccl-library") && i + 1 < argc) nccl_lib = argv[++i];
        else if (!strcmp(argv[i], "--expect-log") && i + 1 < argc) g_expect_log = argv[++i];
        else if (!strcmp(argv[i], "--mpi-init-first")) mpi_first = 1;
        else if (!strcmp(argv[i], "--quick")) g_quick = 1;
        else if (!strcmp(argv[i], "--timeout-case")) timeout_case = 1;
        else if (!strcmp(argv[i], "--staging-bytes") && i + 1 < argc) staging = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nccl-missing-on-rank") && i + 1 < argc) nccl_missing_on = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--backend B] [--expect B] [--expect-warnings N]\n"
                    "  [--nccl-library P] [--nccl-missing-on-rank R] [--expect-log TEXT]\n"
                    "  [--mpi-init-first] [--quick] [--timeout-case] [--staging-bytes B]\n",
                    argv[0]);
            return 2;
        }
    }
    g_rank = env_int("OMPI_COMM_WORLD_RANK", "PMIX_RANK", 0);
    g_world = env_int("OMPI_COMM_WORLD_SIZE", NULL, 1);
    g_local = env_int("OMPI_COMM_WORLD_LOCAL_RANK", NULL, 0);
    if (mpi_first && g_world > 1) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    }

    if (nccl_missing_on == g_rank)   /* NCCL loads everywhere but here: all must agree on mpi */
        nccl_lib = "libnccl-missing-on-this-rank.so.2";
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    CU(cuStreamCreate(&g_stream, CU_STREAM_NON_BLOCKING));

    /* the driver table, filled by name as the shim does (here from hostcuda / the real driver) */
    ash_coll_driver_t drv = {0}, partial = {0};
    const char *missing = ash_coll_driver_fill(&drv, resolve_default, NULL);
    if (missing || drv.cuEventCreate == NULL) {
        fprintf(stderr, "FAIL [rank %d] driver table: %s missing\n", g_rank,
                missing ? missing : "cuEventCreate");
        return 1;
    }
    missing = ash_coll_driver_fill(&partial, resolve_without_launch, NULL);
    if (!missing || strcmp(missing, "cuLaunchKernel") != 0)
        FAIL("driver table without cuLaunchKernel: reported %s", missing ? missing : "complete");
    cfg = (ash_coll_config_t){.world_size = 1, .driver = &partial, .log = test_log};
    if (ash_coll_open("mpi", &cfg, &c) != ASH_COLL_EINVAL || c != NULL)
        FAIL("ash_coll_open with an incomplete driver table should be ASH_COLL_EINVAL");
    g_errors = 0;
    cfg = (ash_coll_config_t){.rank = g_rank, .world_size = g_world, .local_rank = g_local,
                              .driver = &drv, .timeout_s = timeout_case ? 2 : 120,
                              .log = test_log,
                              .nccl_library = nccl_lib, .staging_bytes = (size_t)staging};

    st = ash_coll_open(backend, &cfg, &c);
    if (st != ASH_COLL_OK) {
        fprintf(stderr, "FAIL [rank %d] ash_coll_open(%s): %s\n", g_rank, backend,
                ash_coll_status_name(st));
        return 1;
    }
    if (expect && strcmp(ash_coll_backend_name(c), expect) != 0)
        FAIL("backend: got %s, expected %s", ash_coll_backend_name(c), expect);
    if (expect_warn >= 0 && g_warnings != expect_warn)
        FAIL("warnings at open: got %d, expected %d", g_warnings, expect_warn);
    if (g_expect_log && !g_expect_log_seen)
        FAIL("no log message contained \"%s\"", g_expect_log);
    if (g_world > 1) {
        MPI_Initialized(&inited);
        if (!inited)
            FAIL("MPI should be initialised for world size %d", g_world);
    }

    if (timeout_case && g_world > 1) {
        run_timeout_case(c);
        goto done;
    }
    static const struct { ash_coll_dtype_t d, w; } combos[] = {
        {ASH_COLL_F32, ASH_COLL_SAME}, {ASH_COLL_F32, ASH_COLL_BF16}, {ASH_COLL_F32, ASH_COLL_F16},
        {ASH_COLL_BF16, ASH_COLL_SAME}, {ASH_COLL_BF16, ASH_COLL_F32}, {ASH_COLL_F16, ASH_COLL_SAME},
        {ASH_COLL_F16, ASH_COLL_F32},
    };
    static const size_t sizes[] = {1, 1000, 1048577};
    uint64_t seed = 1;
    for (size_t k = 0; k < sizeof combos / sizeof combos[0]; k++)
        for (int op = ASH_COLL_SUM; op <= ASH_COLL_MEAN; op++)
            for (size_t s = 0; s < (g_quick ? 2u : 3u); s++) {
                run_allreduce(c, sizes[s], combos[k].d, combos[k].w, op, PAT_INTS, seed++);
                if (sizes[s] > 1)
                    run_allreduce(c, sizes[s], combos[k].d, combos[k].w, op, PAT_RANDOM, seed++);
                /* fp16 wire, mean: the division must come before the sum (else Inf) */
                if (sizes[s] == 1000 && op == ASH_COLL_MEAN &&
                    (combos[k].w == ASH_COLL_F16 || (combos[k].d == ASH_COLL_F16 &&
                                                     combos[k].w == ASH_COLL_SAME)))
                    run_allreduce(c, sizes[s], combos[k].d, combos[k].w, op, PAT_LARGE, seed++);
            }
    run_two_streams(c, ASH_COLL_BF16);
    run_two_streams(c, ASH_COLL_SAME);
    run_broadcast(c, 1, 0);
    run_broadcast(c, 1000003, 0);
    run_broadcast(c, 4097, g_world - 1);
    if (ash_coll_barrier(c) != ASH_COLL_OK)
        FAIL("barrier failed");
    run_negative_controls(c);
    run_fingerprint(c);
done:
    if (g_errors)
        FAIL("%d unexpected error messages from the library", g_errors);

    failed_any = g_failed;
    if (g_world > 1)
        MPI_Allreduce(&g_failed, &failed_any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ash_coll_close(c);
    if (g_world > 1) {
        MPI_Finalized(&finalized);
        if (finalized == mpi_first)
            FAIL("after close MPI is %sfinalised; the library must finalise only what it "
                 "initialised", finalized ? "" : "not ");
        if (mpi_first)
            MPI_Finalize();
    }
    if (g_rank == 0 || g_failed)
        printf("%s [rank %d] backend %s, world %d: %d cases, %d failures here, %s overall\n",
               g_failed || failed_any ? "FAIL" : "PASS", g_rank, expect ? expect : backend,
               g_world, g_cases, g_failed, failed_any ? "failures" : "no failures");
    return g_failed || failed_any ? 1 : 0;
}
