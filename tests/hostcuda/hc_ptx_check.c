/* hc_ptx_check — read PTX files with the PTX reader and tell, per kernel, whether hostcuda's
 * interpreter can run it (the load-time check hostcuda itself makes).
 *   hc_ptx_check [-q] FILE.ptx...   exit 0: every file parses and every kernel is supported;
 *   1: a parse error or a refused kernel (one line each, naming file, kernel, PTX line).
 * Prints per file: kernels, instructions, distinct opcodes.
 * Must not: run any kernel (it only reads and checks). */
#include "hc_exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(buf, (cap *= 2) + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = 0;
    return buf;
}

int main(int argc, char **argv)
{
    int quiet = 0, bad = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-q")) {
            quiet = 1;
            continue;
        }
        char *text = slurp(argv[a]);
        if (!text) {
            fprintf(stderr, "hc_ptx_check: cannot read %s\n", argv[a]);
            bad = 1;
            continue;
        }
        ash_ptx_module m;
        char err[512];
        if (ash_ptx_parse(text, argv[a], &m, err, sizeof err)) {
            printf("PARSE ERROR %s\n", err);
            bad = 1;
            free(text);
            continue;
        }
        int kernels = 0, refused = 0, seen[ASH_PTX_OP_COUNT] = {0}, nops = 0;
        for (int i = 0; i < m.ninsns; i++)
            if (!seen[m.insns[i].op]++)
                nops++;
        for (int f = 0; f < m.nfuncs; f++) {
            if (!m.funcs[f].is_entry || !m.funcs[f].defined)
                continue;
            kernels++;
            char msg[768];
            if (hc_exec_check(&m, f, msg, sizeof msg)) {
                printf("REFUSED %s: %s\n", argv[a], msg);
                refused++;
            }
        }
        if (!quiet)
            printf("%s: %d kernels, %d instructions, %d base opcodes, %d refused\n", argv[a], kernels, m.ninsns, nops,
                   refused);
        bad |= refused != 0;
        ash_ptx_free(&m);
        free(text);
    }
    return bad;
}
