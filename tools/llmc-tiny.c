/* llmc-tiny.c — build/bin/llmc-tiny: a tiny synthetic GPT-2 in llm.c's file formats, so llm.c's
 * trainers (train_gpt2.c, train_gpt2_fp32.cu, train_gpt2.cu) run unmodified on a CPU in seconds.
 *
 *   llmc-tiny [options] DIR      writes, in DIR (llm.c's working directory):
 *     gpt2_124M.bin           checkpoint: int32[256] header {20240326, 3, maxT, V, L, NH, C, Vp},
 *                             then the 16 tensors (wte ... lnfb) in fp32
 *     gpt2_124M_bf16.bin      the same weights, header version 5, every tensor in bf16 (RNE)
 *     gpt2_tokenizer.bin      int32[256] header {20240328, 2, V, eot}, then V byte tokens
 *     dev/data/tinyshakespeare/tiny_shakespeare_{train,val}.bin   (train_gpt2.c's fixed paths)
 *                             int32[256] header {20240520, 1, ntok}, then uint16 tokens
 *     split{W}/shard{r}.bin   for W = 1 and each --world: rank r's half (1/W) of every 1-rank batch
 *   llmc-tiny --split FILE --global-batch G --seq T --world W DIR   the same split of any token file
 *
 * The data recipe (docs/llmc.md): llm.c's loader reads sample i of a file as the B*T+1 tokens at
 * i*B*T (inputs, and targets shifted by one), sample order shuffled by a permutation of the sample
 * count seeded 42 (rank 0 of 1, as every rank of an accelshim job believes it is). With a 1-rank
 * batch G = W*B, shard r is the concatenation over batches i of tokens [i*G*T + r*B*T, +B*T),
 * then the 1-rank file's last token: same sample count, same permutation, and sample i of shard r
 * is rank r's rows of 1-rank batch i, its last target included, provided the token at every
 * rank boundary equals the one that starts the next batch's chunk. The synthetic text starts
 * every T-token row with the end-of-text token, so that holds; --split checks it and names the
 * first position where a given file breaks it.
 * Weights: GPT-2's initialisation (N(0, 0.02); residual projections 0.02/sqrt(2L); LayerNorm 1/0;
 * biases 0), from a seeded generator (splitmix64 + Box-Muller): the same seed, the same files.
 * No CUDA; libc + libm. Exit: 0 written, 1 a file breaks the recipe, 2 bad arguments or I/O.
 * Must not: write outside DIR; split a file that breaks the recipe (it names the position instead).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TINY_TOKENS_MAGIC 20240520
#define TINY_MODEL_MAGIC 20240326
#define TINY_TOKENIZER_MAGIC 20240328

typedef struct {
    long maxT, V, Vp, L, NH, C;
    long G, T, train_batches, val_batches;
    long worlds[16];
    int nworlds;
    uint64_t seed;
    int eot;
} tiny_cfg_t;

static int tiny_err(const char *what, const char *path)
{
    fprintf(stderr, "llmc-tiny: %s: %s: %s\n", path, what, errno ? strerror(errno) : "failed");
    return 2;
}

static int tiny_mkdirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    errno = 0;
    return 0;
}

/* write header (256 int32) + n items of size sz; 0 or 2 (reported) */
static int tiny_write(const char *path, const int32_t *header, const void *data, size_t sz, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return tiny_err("cannot create", path);
    int ok = fwrite(header, 4, 256, f) == 256 && fwrite(data, sz, n, f) == n;
    if (fclose(f) != 0 || !ok)
        return tiny_err("cannot write", path);
    return 0;
}

static uint64_t tiny_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double tiny_normal(uint64_t *s)
{
    double u1 = ((tiny_next(s) >> 11) + 1.0) / 9007199254740993.0; /* (0, 1] */
    double u2 = (tiny_next(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static uint16_t tiny_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* the checkpoint: 16 tensors in llm.c's order (fill_in_parameter_sizes) */
static int tiny_model(const tiny_cfg_t *c, const char *dir)
{
    size_t Vp = c->Vp, V = c->V, C = c->C, L = c->L, T = c->maxT;
    size_t sizes[16] = {Vp * C, T * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C,
                        L * C, L * C, L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C};
    /* 0: N(0, std); 1: ones; 2: zeros (wte's padded rows stay zero) */
    static const int kind[16] = {0, 0, 1, 2, 0, 2, 0, 2, 1, 2, 0, 2, 0, 2, 1, 2};
    size_t total = 0;
    for (int i = 0; i < 16; i++)
        total += sizes[i];
    float *w = calloc(total, sizeof *w);
    uint16_t *h = calloc(total, sizeof *h);
    if (!w || !h) {
        free(w), free(h);
        fprintf(stderr, "llmc-tiny: out of memory for %zu parameters\n", total);
        return 2;
    }
    uint64_t s = c->seed;
    float *p = w;
    for (int i = 0; i < 16; i++) {
        double std = (i == 6 || i == 12) ? 0.02 / sqrt(2.0 * (double)L) : 0.02;
        size_t n = i == 0 ? V * C : sizes[i];
        for (size_t j = 0; j < n; j++)
            p[j] = kind[i] == 0 ? (float)(std * tiny_normal(&s)) : kind[i] == 1 ? 1.0f : 0.0f;
        p += sizes[i];
    }
    for (size_t j = 0; j < total; j++)
        h[j] = tiny_bf16(w[j]);
    int32_t hdr[256] = {TINY_MODEL_MAGIC, 3, (int32_t)c->maxT, (int32_t)c->V, (int32_t)c->L,
                        (int32_t)c->NH, (int32_t)c->C, (int32_t)c->Vp};
    char path[4096];
    snprintf(path, sizeof path, "%s/gpt2_124M.bin", dir);
    int rc = tiny_write(path, hdr, w, 4, total);
    hdr[1] = 5;
    snprintf(path, sizeof path, "%s/gpt2_124M_bf16.bin", dir);
    if (rc == 0)
        rc = tiny_write(path, hdr, h, 2, total);
    free(w), free(h);
    return rc;
}

/* byte tokens; token EOT's string is one byte too (llm.c's decoder wants length >= 1) */
static int tiny_tokenizer(const tiny_cfg_t *c, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/gpt2_tokenizer.bin", dir);
    uint8_t *body = malloc(2 * (size_t)c->V);
    if (!body)
        return 2;
    for (long i = 0; i < c->V; i++) {
        body[2 * i] = 1;
        body[2 * i + 1] = (uint8_t)(i == c->eot ? '\n' : i);
    }
    int32_t hdr[256] = {TINY_TOKENIZER_MAGIC, 2, (int32_t)c->V, c->eot};
    int rc = tiny_write(path, hdr, body, 1, 2 * (size_t)c->V);
    free(body);
    return rc;
}

/* a synthetic text: sentences drawn from a few words (learnable in a few steps); every T-token
 * row starts with EOT. nbatch batches of G rows, plus the one token the last target needs. */
static uint16_t *tiny_text(const tiny_cfg_t *c, long nbatch, uint64_t seed, size_t *ntok)
{
    static const char *const words[] = {"the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to",
                                        "red", "big", "sun", "and", "hat", "in", "box"};
    size_t n = (size_t)nbatch * c->G * c->T + 1;
    uint16_t *t = malloc(n * sizeof *t);
    if (!t)
        return NULL;
    uint64_t s = seed;
    char buf[16];
    int pos = 0, len = 0;
    for (size_t k = 0; k < n; k++) {
        if (k % c->T == 0) {
            t[k] = (uint16_t)c->eot;
            continue;
        }
        if (pos == len) {
            uint64_t r = tiny_next(&s);
            len = snprintf(buf, sizeof buf, "%s%s", words[(r >> 8) % 16], (r & 7) == 0 ? ". " : " ");
            pos = 0;
        }
        t[k] = (uint16_t)((unsigned char)buf[pos++] % c->V);
    }
    *ntok = n;
    return t;
}

static int tiny_tokens_file(const char *path, const uint16_t *t, size_t n)
{
    int32_t hdr[256] = {TINY_TOKENS_MAGIC, 1, (int32_t)n};
    return tiny_write(path, hdr, t, 2, n);
}

/* the split of t (n tokens) for world W, global batch G, sequence T into DIR/split{W}/ */
static int tiny_split(const uint16_t *t, size_t n, long G, long T, long W, const char *dir, const char *what)
{
    if (G % W) {
        fprintf(stderr, "llmc-tiny: --global-batch %ld is not a multiple of --world %ld\n", G, W);
        return 2;
    }
    size_t BT = (size_t)(G / W) * T, GT = (size_t)G * T;
    if (n < GT + 1) {
        fprintf(stderr, "llmc-tiny: %s: %zu tokens, fewer than one batch (%zu + 1)\n", what, n, GT);
        return 2;
    }
    size_t nb = (n - 1) / GT;
    /* the recipe holds when each rank chunk's last target is the next chunk's first input */
    for (size_t i = 0; i < nb; i++)
        for (long r = 0; r < W; r++) {
            size_t end = i * GT + (r + 1) * BT, next = (i + 1) * GT + r * BT;
            if (next < n && t[end] != t[next]) {
                fprintf(stderr,
                        "llmc-tiny: %s: token %zu (%u, rank %ld's last target in batch %zu) differs from token "
                        "%zu (%u, the first input of its next chunk): rank %ld would train on a different "
                        "target there; make every %zu-token row start with the same token (e.g. end-of-text)\n",
                        what, end, t[end], r, i, next, t[next], r, BT);
                return 1;
            }
        }
    char path[4096];
    snprintf(path, sizeof path, "%s/split%ld", dir, W);
    if (tiny_mkdirs(path) != 0)
        return tiny_err("cannot create", path);
    uint16_t *s = malloc((nb * BT + 1) * sizeof *s);
    if (!s)
        return 2;
    int rc = 0;
    for (long r = 0; r < W && rc == 0; r++) {
        for (size_t i = 0; i < nb; i++)
            memcpy(s + i * BT, t + i * GT + r * BT, BT * sizeof *s);
        s[nb * BT] = t[nb * GT]; /* == t[(nb-1)*GT + (r+1)*BT] by the check above (or the file's end) */
        snprintf(path, sizeof path, "%s/split%ld/shard%ld.bin", dir, W, r);
        rc = tiny_tokens_file(path, s, nb * BT + 1);
    }
    free(s);
    return rc;
}

static uint16_t *tiny_read_tokens(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    int32_t hdr[256];
    uint16_t *t = NULL;
    if (!f) {
        tiny_err("cannot open", path);
        return NULL;
    }
    if (fread(hdr, 4, 256, f) != 256 || hdr[0] != TINY_TOKENS_MAGIC || hdr[1] != 1 || hdr[2] <= 0) {
        fprintf(stderr, "llmc-tiny: %s: not an llm.c token file (header {20240520, 1, ntok})\n", path);
        fclose(f);
        return NULL;
    }
    *n = (size_t)hdr[2];
    t = malloc(*n * sizeof *t);
    if (!t || fread(t, 2, *n, f) != *n) {
        fprintf(stderr, "llmc-tiny: %s: shorter than the %zu tokens its header says\n", path, *n);
        free(t);
        t = NULL;
    }
    fclose(f);
    return t;
}

static void tiny_usage(FILE *out)
{
    fprintf(out,
            "usage: llmc-tiny [--layers L] [--channels C] [--heads NH] [--max-seq maxT] [--vocab V]\n"
            "                 [--padded-vocab Vp] [--seed S] [--global-batch G] [--seq T]\n"
            "                 [--train-batches N] [--val-batches N] [--world W]... DIR\n"
            "       llmc-tiny --split FILE --global-batch G --seq T --world W DIR\n"
            "defaults: L 2, C 128, NH 4, maxT 64, V 256, Vp 256, seed 1, G 4, T 64, 8 train and 4 val\n"
            "batches, world 2. llm.c's fp32 kernels need B*T, C and Vp multiples of 128.\n");
}

static int tiny_num(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "llmc-tiny: %s '%s': want an integer in [%ld, %ld]\n", opt, s ? s : "", lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    tiny_cfg_t c = {.maxT = 64, .V = 256, .Vp = 256, .L = 2, .NH = 4, .C = 128, .G = 4, .T = 64,
                    .train_batches = 8, .val_batches = 4, .seed = 1, .eot = 0};
    const char *dir = NULL, *split = NULL;
    long seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long *dst = NULL, lo = 1, hi = 1 << 20;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            tiny_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--layers")) dst = &c.L, hi = 64;
        else if (!strcmp(a, "--channels")) dst = &c.C;
        else if (!strcmp(a, "--heads")) dst = &c.NH;
        else if (!strcmp(a, "--max-seq")) dst = &c.maxT;
        else if (!strcmp(a, "--vocab")) dst = &c.V, lo = 2, hi = 65536;
        else if (!strcmp(a, "--padded-vocab")) dst = &c.Vp, hi = 65536;
        else if (!strcmp(a, "--seed")) dst = &seed, lo = 0, hi = 0x7fffffff;
        else if (!strcmp(a, "--global-batch")) dst = &c.G;
        else if (!strcmp(a, "--seq")) dst = &c.T;
        else if (!strcmp(a, "--train-batches")) dst = &c.train_batches;
        else if (!strcmp(a, "--val-batches")) dst = &c.val_batches;
        else if (!strcmp(a, "--world")) {
            if (c.nworlds == 16 || tiny_num(a, v, 1, 1024, &c.worlds[c.nworlds]) != 0)
                return 2;
            c.nworlds++, i++;
            continue;
        } else if (!strcmp(a, "--split")) {
            if (!v) {
                fprintf(stderr, "llmc-tiny: --split needs a token file\n");
                return 2;
            }
            split = v, i++;
            continue;
        } else if (a[0] == '-') {
            fprintf(stderr, "llmc-tiny: unknown option '%s'\n", a);
            tiny_usage(stderr);
            return 2;
        } else if (dir) {
            fprintf(stderr, "llmc-tiny: one output directory only ('%s' and '%s')\n", dir, a);
            return 2;
        } else {
            dir = a;
            continue;
        }
        if (tiny_num(a, v, lo, hi, dst) != 0)
            return 2;
        i++;
    }
    c.seed = (uint64_t)seed;
    if (!dir) {
        tiny_usage(stderr);
        return 2;
    }
    if (c.nworlds == 0)
        c.worlds[c.nworlds++] = 2;
    if (tiny_mkdirs(dir) != 0)
        return tiny_err("cannot create", dir);
    if (split) {
        size_t n;
        uint16_t *t = tiny_read_tokens(split, &n);
        int rc = t ? 0 : 2;
        for (int w = 0; w < c.nworlds && rc == 0; w++)
            rc = tiny_split(t, n, c.G, c.T, c.worlds[w], dir, split);
        free(t);
        return rc;
    }
    if (c.C % c.NH || c.Vp < c.V || c.T > c.maxT || c.eot >= c.V) {
        fprintf(stderr, "llmc-tiny: inconsistent sizes: C %ld must be a multiple of NH %ld, Vp %ld >= V %ld, "
                        "T %ld <= maxT %ld\n", c.C, c.NH, c.Vp, c.V, c.T, c.maxT);
        return 2;
    }
    char path[4096];
    int rc = tiny_model(&c, dir);
    if (rc == 0)
        rc = tiny_tokenizer(&c, dir);
    snprintf(path, sizeof path, "%s/dev/data/tinyshakespeare", dir);
    if (rc == 0 && tiny_mkdirs(path) != 0)
        rc = tiny_err("cannot create", path);
    size_t ntrain = 0, nval = 0;
    uint16_t *train = rc == 0 ? tiny_text(&c, c.train_batches, c.seed * 2 + 1, &ntrain) : NULL;
    uint16_t *val = rc == 0 ? tiny_text(&c, c.val_batches, c.seed * 2 + 2, &nval) : NULL;
    if (rc == 0 && (!train || !val))
        rc = 2;
    snprintf(path, sizeof path, "%s/dev/data/tinyshakespeare/tiny_shakespeare_train.bin", dir);
    if (rc == 0)
        rc = tiny_tokens_file(path, train, ntrain);
    snprintf(path, sizeof path, "%s/dev/data/tinyshakespeare/tiny_shakespeare_val.bin", dir);
    if (rc == 0)
        rc = tiny_tokens_file(path, val, nval);
    if (rc == 0)
        rc = tiny_split(train, ntrain, c.G, c.T, 1, dir, "train");
    for (int w = 0; w < c.nworlds && rc == 0; w++)
        rc = tiny_split(train, ntrain, c.G, c.T, c.worlds[w], dir, "train");
    free(train), free(val);
    if (rc == 0)
        printf("llmc-tiny: %s: L %ld, C %ld, NH %ld, maxT %ld, V %ld, Vp %ld; %ld train batches of %ld x %ld "
               "tokens, %ld val\n", dir, c.L, c.C, c.NH, c.maxT, c.V, c.Vp, c.train_batches, c.G, c.T,
               c.val_batches);
    return rc;
}
