/* reading_script.c — runs explain mode's reading (shim/explain/reading.c) on a scripted launch
 * sequence over a real PTX module's kernel facts, for programs hostcuda cannot run (llm.c is a
 * CUDA runtime program): the script names allocations and the launches of the program's step in
 * its order; this tool builds what explain.c would have recorded and prints the explanation.
 *     reading_script FILE.ptx SCRIPT
 * SCRIPT, one command a line ('#' starts a comment):
 *     buf NAME BYTES              an allocation
 *     repeat N ... end            the lines between, N times (not nested)
 *     memset NAME                 a memset of the whole allocation
 *     launch PATTERN ARG...       the first .entry whose mangled name contains PATTERN, with
 *                                 exactly its parameters: NAME or NAME+ELEMS*SIZE / NAME+BYTES
 *                                 (a pointer into NAME), an integer, f:FLOAT, or - (a null pointer)
 *     opaque ARG...               a launch of a kernel without PTX (cuBLAS's): pointers only
 * Errors name the script line; exit 2.
 * Owns: the scripted view of a step. Must not: be taken for a run (its output says "scripted").
 */
#include "explain_int.h"

#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static exp_state_t S;
static char *names[256];

static void die(int line, const char *what, const char *tok)
{
    fprintf(stderr, "reading_script: line %d: %s '%s'\n", line, what, tok ? tok : "");
    exit(2);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
        return NULL;
    b[n] = 0;
    fclose(f);
    return b;
}

static int buf_named(const char *n)
{
    for (int i = 0; i < S.nbufs; i++)
        if (!strcmp(names[i], n))
            return i;
    return -1;
}

static void push_launch(int kernel, exp_arg_t *a, int n)
{
    S.launches = realloc(S.launches, (S.nlaunches + 1) * sizeof *S.launches);
    S.args = realloc(S.args, (S.nargs + (size_t)n + 1) * sizeof *S.args);
    S.launches[S.nlaunches++] = (exp_launch_t){kernel, n, S.nargs};
    memcpy(S.args + S.nargs, a, (size_t)n * sizeof *a);
    S.nargs += (size_t)n;
}

static int kernel_for(const char *pat, int line)
{
    const ash_ptx_module *m = &S.images[0].m;
    for (int k = 0; k < S.nkernels; k++)
        if (strstr(S.kernels[k].name, pat))
            return k;
    for (int f = 0; f < m->nfuncs; f++) {
        if (!m->funcs[f].is_entry || !m->funcs[f].defined || !strstr(m->funcs[f].name, pat))
            continue;
        exp_kernel_t k = {.name = m->funcs[f].name, .image = 0, .func = f, .nparams = m->funcs[f].nparams};
        int st = -1;
        char *d = __cxa_demangle(k.name, NULL, NULL, &st);
        k.demangled = st == 0 && d ? d : k.name;
        k.offs = calloc((size_t)k.nparams + 1, sizeof *k.offs);
        k.sizes = calloc((size_t)k.nparams + 1, sizeof *k.sizes);
        for (int i = 0; i < k.nparams; i++) {
            k.offs[i] = (uint32_t)m->funcs[f].params[i].offset;
            k.sizes[i] = (uint32_t)m->funcs[f].params[i].size;
        }
        S.kernels = realloc(S.kernels, (size_t)(S.nkernels + 1) * sizeof *S.kernels);
        S.kernels[S.nkernels] = k;
        return S.nkernels++;
    }
    die(line, "no kernel matches", pat);
    return -1;
}

static exp_arg_t parse_arg(const char *t, int line)
{
    exp_arg_t a = {.buf = -1};
    char name[128];
    if (!strcmp(t, "-"))
        return a;
    if (!strncmp(t, "f:", 2)) {
        float x = strtof(t + 2, NULL);
        uint32_t u;
        memcpy(&u, &x, 4);
        a.value = u;
        return a;
    }
    if ((t[0] >= '0' && t[0] <= '9') || t[0] == '-') {
        a.value = (uint64_t)strtoll(t, NULL, 0);
        return a;
    }
    const char *plus = strchr(t, '+');
    size_t n = plus ? (size_t)(plus - t) : strlen(t);
    if (n >= sizeof name)
        die(line, "name too long", t);
    memcpy(name, t, n);
    name[n] = 0;
    a.buf = buf_named(name);
    if (a.buf < 0)
        die(line, "no such buf", name);
    if (plus) {
        char *e;
        unsigned long long x = strtoull(plus + 1, &e, 0), y = 1;
        if (*e == '*')
            y = strtoull(e + 1, &e, 0);
        a.off = x * y;
    }
    a.value = S.bufs[a.buf].base + a.off;
    return a;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: reading_script FILE.ptx SCRIPT\n");
        return 2;
    }
    char *text = slurp(argv[1]), *script = slurp(argv[2]);
    if (!text || !script) {
        fprintf(stderr, "reading_script: cannot read %s\n", text ? argv[2] : argv[1]);
        return 2;
    }
    char err[512];
    exp_image_t im = {.api = "scripted", .what = "PTX text (a scripted launch sequence, not a run)", .has_ptx = 1};
    if (ash_ptx_parse(text, argv[1], &im.m, err, sizeof err) || ash_ptx_facts_compute(&im.m, &im.fx, err, sizeof err)) {
        fprintf(stderr, "reading_script: %s\n", err);
        return 2;
    }
    im.parsed = 1;
    S.images = &im;
    S.nimages = 1;
    char *lines[4096];
    int nl = 0;
    for (char *l = strtok(script, "\n"); l && nl < 4096; l = strtok(NULL, "\n"))
        lines[nl++] = l;
    int rep_start = -1, rep_left = 0;
    for (int i = 0; i < nl; i++) {
        char buf[4096], *tok[64];
        int nt = 0;
        snprintf(buf, sizeof buf, "%s", lines[i]);
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        for (char *t = strtok(buf, " \t"); t && nt < 64; t = strtok(NULL, " \t"))
            tok[nt++] = t;
        if (!nt)
            continue;
        if (!strcmp(tok[0], "buf") && nt == 3) {
            S.bufs = realloc(S.bufs, (size_t)(S.nbufs + 1) * sizeof *S.bufs);
            S.bufs[S.nbufs] = (exp_buf_t){0x100000000ull * (uint64_t)(S.nbufs + 1), strtoull(tok[2], NULL, 0)};
            names[S.nbufs++] = strdup(tok[1]);
        } else if (!strcmp(tok[0], "repeat") && nt == 2) {
            rep_start = i;
            rep_left = atoi(tok[1]);
        } else if (!strcmp(tok[0], "end")) {
            if (rep_start < 0)
                die(i + 1, "end without repeat", "");
            if (--rep_left > 0)
                i = rep_start;
            else
                rep_start = -1;
        } else if (!strcmp(tok[0], "memset") && nt == 2) {
            exp_arg_t a = parse_arg(tok[1], i + 1);
            a.value = S.bufs[a.buf].size;
            push_launch(EXP_MEMSET, &a, 1);
        } else if (!strcmp(tok[0], "launch") && nt >= 2) {
            int k = kernel_for(tok[1], i + 1);
            if (nt - 2 != S.kernels[k].nparams) {
                char want[64];
                snprintf(want, sizeof want, "%d arguments, not %d", S.kernels[k].nparams, nt - 2);
                die(i + 1, want, tok[1]);
            }
            exp_arg_t a[64];
            for (int j = 2; j < nt; j++)
                a[j - 2] = parse_arg(tok[j], i + 1);
            push_launch(k, a, nt - 2);
        } else if (!strcmp(tok[0], "opaque")) {
            static int ok = -1;
            if (ok < 0) {   /* a kernel with no PTX: its entry has no image */
                S.kernels = realloc(S.kernels, (size_t)(S.nkernels + 1) * sizeof *S.kernels);
                static uint32_t offs[16], sizes[16];
                for (int j = 0; j < 16; j++)
                    offs[j] = (uint32_t)(8 * j), sizes[j] = 8;
                S.kernels[S.nkernels] = (exp_kernel_t){.name = "cublas_gemm", .demangled = "cublas_gemm (SASS only)",
                                                       .image = -1, .func = -1, .nparams = 16, .offs = offs,
                                                       .sizes = sizes};
                ok = S.nkernels++;
            }
            exp_arg_t a[16];
            int n = nt - 1 < 16 ? nt - 1 : 16;
            for (int j = 0; j < n; j++)
                a[j] = parse_arg(tok[j + 1], i + 1);
            push_launch(ok, a, n);
        } else {
            die(i + 1, "unknown command", tok[0]);
        }
    }
    exp_write(&S, stdout);
    return 0;
}
