/* fcompare.c — compare two raw little-endian float32 files (test tool, not shipped).
 *
 *   fcompare A B --identical             exit 0 iff the files are byte-identical
 *   fcompare A B --rtol R [--atol T]     exit 0 iff |a-b| <= T + R*|b| for every element
 *   fcompare A B --max-abs M             exit 0 iff max |a-b| <= M
 * Always prints: element count, max abs diff, max rel diff, and on failure the first mismatching
 * elements with both sides. Exit 1 on a mismatch, 2 on usage or I/O errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *load(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len < 0 || len % 4) {
        fprintf(stderr, "%s: size %ld is not a whole number of float32\n", path, len);
        fclose(f);
        return NULL;
    }
    float *v = malloc((size_t)len + 4);
    if (!v || fread(v, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "%s: read failed\n", path);
        fclose(f);
        free(v);
        return NULL;
    }
    fclose(f);
    *n = (size_t)len / 4;
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fcompare A B (--identical | --rtol R [--atol T] | --max-abs M)\n");
        return 2;
    }
    double rtol = -1, atol = 0, maxabs = -1;
    int identical = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--identical"))
            identical = 1;
        else if (!strcmp(argv[i], "--rtol") && i + 1 < argc)
            rtol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--atol") && i + 1 < argc)
            atol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-abs") && i + 1 < argc)
            maxabs = atof(argv[++i]);
        else {
            fprintf(stderr, "fcompare: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    size_t na, nb;
    float *a = load(argv[1], &na), *b = load(argv[2], &nb);
    if (!a || !b)
        return 2;
    if (na != nb) {
        printf("fcompare: element counts differ: %s has %zu, %s has %zu\n", argv[1], na, argv[2], nb);
        return 1;
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
        int fail = identical ? memcmp(&a[i], &b[i], 4) != 0
                 : rtol >= 0 ? !(d <= atol + rtol * fabs((double)b[i]))
                 : maxabs >= 0 ? !(d <= maxabs) : 0;
        if (fail && bad++ < 5)
            printf("  mismatch [%zu]: %s=%.9g  %s=%.9g  |diff|=%.3g\n", i, argv[1], a[i], argv[2],
                   b[i], d);
    }
    printf("fcompare: %zu elements, %zu differ in bits, max |diff| %.3g, max rel %.3g", na,
           diffbits, worst_abs, worst_rel);
    if (identical)
        printf(" (required: identical)");
    else if (rtol >= 0)
        printf(" (required: |diff| <= %g + %g*|b|)", atol, rtol);
    else if (maxabs >= 0)
        printf(" (required: |diff| <= %g)", maxabs);
    printf(": %s\n", bad ? "MISMATCH" : "ok");
    free(a);
    free(b);
    return bad ? 1 : 0;
}
