/* ptx_facts_dump.c — prints the kernel facts (shim/ptx/ash_ptx_facts.h) of a PTX file, one line
 * per parameter of every .entry (with --all, of every .func too):
 *     NAME pINDEX SIZE ptr|val R|- W|- A|- TYPES
 * Owns: the test's view of the facts. Must not: interpret them (the tests do).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ash_ptx.h"
#include "ash_ptx_facts.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b)
        b[n] = 0;
    fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    int all = argc > 2 && !strcmp(argv[1], "--all");
    const char *path = argv[argc - 1];
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s [--all] FILE.ptx\n", argv[0]);
        return 2;
    }
    char *text = slurp(path);
    if (!text) {
        fprintf(stderr, "ptx_facts_dump: cannot read '%s'\n", path);
        return 2;
    }
    ash_ptx_module m;
    char err[512];
    if (ash_ptx_parse(text, path, &m, err, sizeof err)) {
        fprintf(stderr, "ptx_facts_dump: %s\n", err);
        free(text);
        return 1;
    }
    ash_ptx_facts fx;
    if (ash_ptx_facts_compute(&m, &fx, err, sizeof err)) {
        fprintf(stderr, "ptx_facts_dump: %s\n", err);
        return 1;
    }
    for (int f = 0; f < m.nfuncs; f++) {
        if (!m.funcs[f].defined || (!all && !m.funcs[f].is_entry))
            continue;
        const ash_ptx_ffacts *ff = &fx.funcs[f];
        for (int p = 0; p < ff->nparams; p++) {
            const ash_ptx_pfact *pf = &ff->params[p];
            char t[128];
            printf("%s p%d %zu %s %s %s %s %s\n", m.funcs[f].name, p, pf->size,
                   pf->is_ptr ? "ptr" : "val", pf->read ? "R" : "-", pf->written ? "W" : "-",
                   pf->atomic ? "A" : "-", ash_ptx_facts_types(pf->elem_types, t, sizeof t));
        }
    }
    ash_ptx_facts_free(&fx);
    ash_ptx_free(&m);
    free(text);
    return 0;
}
