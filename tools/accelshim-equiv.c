/* accelshim-equiv.c — the equivalence comparison, written once: do N data-parallel ranks end
 * with the parameters of one process with an N-times batch? Files are raw little-endian float32
 * (the bundled trainer's --save; any trainer's parameters dumped the same way).
 *
 *   accelshim-equiv --ref REF [TOLERANCE] RANK0 [RANK1 ...]
 *       every RANKi byte-identical to RANK0, and RANK0 within TOLERANCE of REF
 *   accelshim-equiv A B (--identical | TOLERANCE)
 *       one pair: A within TOLERANCE of B (or byte-identical)
 *   TOLERANCE: --rtol R [--atol T]  |a-b| <= T + R*|b| elementwise (default rtol 1e-5, atol 1e-6)
 *              --max-abs M          max |a-b| <= M (the 16-bit wires' bounds)
 * Prints one line per comparison (elements, differing bits, max |diff|, max rel, the rule, ok or
 * MISMATCH) and, on a mismatch, the first differing elements with both sides. Exit: 0 equal,
 * 1 a mismatch, 2 usage or I/O error (a missing or unreadable file, a size not a multiple of 4).
 * Callers: tests/lib.sh (t_equiv, the equivalence suite), scripts/demo.sh, gpu-check, and
 * accelerate-run test (installed as PREFIX/bin/accelshim-equiv). No CUDA, libc + libm only.
 * Must not: need CUDA or anything beyond libc and libm; call a mismatch equal; pass on a missing or
 * unreadable file or a size not a multiple of 4 (exit 2).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int identical;
    double rtol, atol, maxabs;   /* < 0: not used */
} equiv_rule_t;

static float *load(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "accelshim-equiv: %s: cannot open: ", path);
        perror(NULL);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len < 0 || len % 4) {
        fprintf(stderr, "accelshim-equiv: %s: size %ld is not a whole number of float32\n", path, len);
        fclose(f);
        return NULL;
    }
    float *v = malloc((size_t)len + 4);
    if (!v || fread(v, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "accelshim-equiv: %s: read failed\n", path);
        fclose(f);
        free(v);
        return NULL;
    }
    fclose(f);
    *n = (size_t)len / 4;
    return v;
}

/* A (named an) against B (named bn) under RULE: prints the verdict line; 0 equal, 1 not, 2 I/O */
static int compare(const char *an, const char *bn, const equiv_rule_t *rule)
{
    size_t na, nb;
    float *a = load(an, &na), *b = load(bn, &nb);
    int rc = 2;

    if (!a || !b)
        goto out;
    if (na != nb) {
        printf("%s vs %s: element counts differ: %zu vs %zu: MISMATCH\n", an, bn, na, nb);
        rc = 1;
        goto out;
    }
    double worst_abs = 0, worst_rel = 0;
    size_t bad = 0, diffbits = 0;
    for (size_t i = 0; i < na; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double r = d / (fabs((double)b[i]) > 1e-30 ? fabs((double)b[i]) : 1e-30);
        if (memcmp(&a[i], &b[i], 4))
            diffbits++;
        if (d > worst_abs || isnan(d))
            worst_abs = isnan(d) ? INFINITY : d;
        if (r > worst_rel)
            worst_rel = r;
        int fail = rule->identical ? memcmp(&a[i], &b[i], 4) != 0
                 : rule->maxabs >= 0 ? !(d <= rule->maxabs)
                 : !(d <= rule->atol + rule->rtol * fabs((double)b[i]));
        if (fail && bad++ < 5)
            printf("  mismatch [%zu]: %s=%.9g  %s=%.9g  |diff|=%.3g\n", i, an, a[i], bn, b[i], d);
    }
    printf("%s vs %s: %zu elements, %zu differ in bits, max |diff| %.3g, max rel %.3g", an, bn, na,
           diffbits, worst_abs, worst_rel);
    if (rule->identical)
        printf(" (required: identical)");
    else if (rule->maxabs >= 0)
        printf(" (required: |diff| <= %g)", rule->maxabs);
    else
        printf(" (required: |diff| <= %g + %g*|b|)", rule->atol, rule->rtol);
    printf(": %s\n", bad ? "MISMATCH" : "ok");
    rc = bad ? 1 : 0;
out:
    free(a);
    free(b);
    return rc;
}

static int usage(const char *why)
{
    fprintf(stderr, "accelshim-equiv: %s\n"
            "usage: accelshim-equiv --ref REF [--rtol R [--atol T] | --max-abs M] RANK0 [RANK1 ...]\n"
            "       accelshim-equiv A B (--identical | --rtol R [--atol T] | --max-abs M)\n", why);
    return 2;
}

/* a number for OPT, or -1 (after a usage message) */
static int number(const char *opt, const char *s, double *out)
{
    char *end;
    if (s == NULL)
        return usage("an option lacks its value"), -1;
    *out = strtod(s, &end);
    if (end == s || *end || !(*out >= 0)) {
        fprintf(stderr, "accelshim-equiv: %s wants a number >= 0, got \"%s\"\n", opt, s);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    equiv_rule_t rule = {0, -1, 0, -1};
    const char *ref = NULL, *files[4096];
    int nfiles = 0, rtol_set = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--identical"))
            rule.identical = 1;
        else if (!strcmp(argv[i], "--rtol") || !strcmp(argv[i], "--atol") || !strcmp(argv[i], "--max-abs")) {
            double v;
            if (number(argv[i], argv[i + 1], &v) != 0)
                return 2;
            if (argv[i][2] == 'r')
                rule.rtol = v, rtol_set = 1;
            else if (argv[i][2] == 'a')
                rule.atol = v;
            else
                rule.maxabs = v;
            i++;
        } else if (!strcmp(argv[i], "--ref")) {
            if (i + 1 >= argc)
                return usage("--ref lacks its file");
            ref = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            fprintf(stderr, "accelshim-equiv: unknown option %s\n", argv[i]);
            return usage("see the usage");
        } else if (nfiles < (int)(sizeof files / sizeof *files)) {
            files[nfiles++] = argv[i];
        } else {
            return usage("too many files");
        }
    }
    if (rule.identical + (rule.maxabs >= 0) + rtol_set > 1)
        return usage("give one of --identical, --rtol, --max-abs");

    if (ref == NULL) {   /* one pair */
        if (nfiles != 2)
            return usage("two files to compare, or --ref REF and the ranks' files");
        if (!rule.identical && rule.maxabs < 0 && !rtol_set)
            return usage("say how close: --identical, --rtol R or --max-abs M");
        return compare(files[0], files[1], &rule);
    }
    if (nfiles < 1)
        return usage("--ref REF needs at least one rank's file");
    if (rule.identical)
        return usage("--identical is for a pair; with --ref the ranks are compared bit for bit anyway");
    if (rule.maxabs < 0 && !rtol_set)
        rule.rtol = 1e-5, rule.atol = rule.atol > 0 ? rule.atol : 1e-6;

    /* 1. every rank holds rank 0's parameters, bit for bit; 2. rank 0 equals the reference */
    equiv_rule_t same = {1, -1, 0, -1};
    int worst = 0;
    for (int r = 1; r < nfiles; r++) {
        int rc = compare(files[r], files[0], &same);
        worst = rc > worst ? rc : worst;
    }
    int rc = compare(files[0], ref, &rule);
    worst = rc > worst ? rc : worst;
    printf("accelshim-equiv: %d rank(s) %s; rank 0 vs the reference: %s: %s\n", nfiles,
           nfiles > 1 ? "compared bit for bit with rank 0" : "(one file)",
           rc == 0 ? "within the tolerance" : rc == 1 ? "beyond the tolerance" : "not compared",
           worst == 0 ? "EQUAL" : worst == 1 ? "DIFFERENT" : "ERROR");
    return worst;
}
