/* test_inspect_kernels.c — the NaN/Inf scan kernels (shim/sync/inspect_kernels.cu, host build) count
 * exactly: for f32, f16 and bf16 bit patterns (quiet and signalling NaN, +-Inf, the largest finite
 * values, subnormals, zeros), for element counts that are not multiples of the block or the grid
 * (1, 255, 257, 65537, ...), and for grids of 1..256 blocks, pass 1 + fold give the reference
 * counts. The kernels are called through the hostcuda ABI (hostcuda_kernel_<name>), the very code
 * hostcuda runs; the PTX is the same source. Prints TAP.
 */
#include "ash_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hostcuda_kernel_ash_inspect_k_count32(const hostcuda_dims *d, void **params);
void hostcuda_kernel_ash_inspect_k_count16(const hostcuda_dims *d, void **params);
void hostcuda_kernel_ash_inspect_k_fold(const hostcuda_dims *d, void **params);

static int ncase;

/* what inspect.c does: pass 1 on `grid` blocks of 256, fold to 256 pairs, add on the host */
static void scan(const void *p, long long n, int wide, unsigned em, unsigned mm, unsigned grid,
                 unsigned long long *nan, unsigned long long *inf)
{
    long long nparts = (long long)grid * 256;
    unsigned long long *partial = calloc((size_t)nparts * 2 + 512, sizeof *partial);
    unsigned long long *folded = partial + nparts * 2;
    hostcuda_dims d1 = {{grid, 1, 1}, {256, 1, 1}, 0}, d2 = {{1, 1, 1}, {256, 1, 1}, 0};
    void *a1[] = {&p, &n, &em, &mm, &partial};
    (wide ? hostcuda_kernel_ash_inspect_k_count32 : hostcuda_kernel_ash_inspect_k_count16)(&d1, a1);
    void *a2[] = {&partial, &nparts, &folded};
    hostcuda_kernel_ash_inspect_k_fold(&d2, a2);
    *nan = *inf = 0;
    for (int t = 0; t < 256; t++) {
        *nan += folded[2 * t];
        *inf += folded[2 * t + 1];
    }
    free(partial);
}

static void check(const char *what, const void *p, long long n, int wide, unsigned em, unsigned mm,
                  unsigned long long want_nan, unsigned long long want_inf)
{
    static const unsigned grids[] = {1, 2, 3, 7, 64, 256};
    for (size_t g = 0; g < sizeof grids / sizeof *grids; g++) {
        unsigned long long nan, inf;
        scan(p, n, wide, em, mm, grids[g], &nan, &inf);
        ncase++;
        if (nan == want_nan && inf == want_inf) {
            printf("ok %d - %s, n=%lld, grid %u: %llu NaN %llu Inf\n", ncase, what, n, grids[g], nan, inf);
        } else {
            printf("not ok %d - %s, n=%lld, grid %u\n# got %llu NaN %llu Inf, want %llu NaN %llu Inf\n",
                   ncase, what, n, grids[g], nan, inf, want_nan, want_inf);
        }
    }
}

int main(void)
{
    static const long long sizes[] = {1, 255, 257, 65537, 300001};
    printf("1..%d\n", (int)(sizeof sizes / sizeof *sizes) * 3 * 6);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        long long n = sizes[s];
        unsigned *f = malloc((size_t)n * 4);
        unsigned short *h = malloc((size_t)n * 2), *b = malloc((size_t)n * 2);
        /* fillers: finite edge values; every 97th a NaN (alternating quiet/signalling/negative),
         * every 89th an Inf (alternating sign), counted as the reference goes */
        static const unsigned f_fin[] = {0, 0x80000000u, 0x7f7fffffu, 0xff7fffffu, 1, 0x3f800000u};
        static const unsigned short h_fin[] = {0, 0x8000, 0x7bff, 0xfbff, 1, 0x3c00};
        static const unsigned short b_fin[] = {0, 0x8000, 0x7f7f, 0xff7f, 1, 0x3f80};
        unsigned long long nn = 0, ni = 0;
        for (long long i = 0; i < n; i++) {
            int k = (int)(i % 6);
            f[i] = f_fin[k], h[i] = h_fin[k], b[i] = b_fin[k];
            if (i % 97 == 96 || (n == 1)) {
                int v = (int)(i / 97) % 3;
                f[i] = v == 0 ? 0x7fc00000u : v == 1 ? 0x7f800001u : 0xffc00000u;
                h[i] = v == 0 ? 0x7e00 : v == 1 ? 0x7c01 : 0xfe00;
                b[i] = v == 0 ? 0x7fc0 : v == 1 ? 0x7f81 : 0xffc0;
                nn++;
            } else if (i % 89 == 88) {
                int neg = (int)(i / 89) % 2;
                f[i] = neg ? 0xff800000u : 0x7f800000u;
                h[i] = neg ? 0xfc00 : 0x7c00;
                b[i] = neg ? 0xff80 : 0x7f80;
                ni++;
            }
        }
        check("f32", f, n, 1, 0x7f800000u, 0x007fffffu, nn, ni);
        check("f16", h, n, 0, 0x7c00u, 0x03ffu, nn, ni);
        check("bf16", b, n, 0, 0x7f80u, 0x007fu, nn, ni);
        free(f);
        free(h);
        free(b);
    }
    return 0;
}
