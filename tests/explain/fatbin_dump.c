/* fatbin_dump.c — prints what explain mode's image reader (shim/core/image.c) makes of a
 * file: one line "WHAT", then, when it found PTX, "ptx BYTES entries N" (N: `.entry` lines).
 * Owns: the test's view of the reader. Must not: judge it (test_explain_images.sh does).
 */
#include "ash_image.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "fatbin_dump: cannot read '%s'\n", argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = calloc((size_t)n + 64, 1);   /* NUL-padded, as a loaded image would end */
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "fatbin_dump: short read of '%s'\n", argv[1]);
        return 2;
    }
    fclose(f);
    char *ptx = NULL, what[256];
    ash_image_ptx(b, (size_t)n, &ptx, what, sizeof what);
    printf("%s\n", what);
    if (ptx) {
        int entries = 0;
        for (const char *p = ptx; (p = strstr(p, ".entry ")) != NULL; p++)
            entries++;
        printf("ptx %zu entries %d\n", strlen(ptx), entries);
    }
    free(ptx);
    free(b);
    return 0;
}
