/* reading.c — explain mode's reading of what explain.c recorded, written at exit:
 *   the images (PTX or not, how many kernels), the step (the launch sequence that repeats: of the
 *   periods with at least two repetitions, the one covering the most launches, the shortest on a
 *   tie, whose repetition holds parameters and gradients (an evaluation loop holds none); with
 *   none such, the most covering one, and if it covers less than half of the launches no step:
 *   cannot tell), begun where a repetition carries in the fewest values from the one before (the
 *   forward pass, not the update where a first step that differs may have left the run's start),
 *   each launch of one repetition with its pointer arguments (allocation, bytes, elements of the
 *   accessed type, offset, read/written) and its values (an integer equal to an allocation's
 *   element count is named as such), then the reading:
 *     parameters  first accessed in the step by a launch that only reads them, written later
 *                 in the step; the launches that write them are the update
 *     optimizer state   read and written, only by the update
 *     gradients   read by the update, written by launches before it, sized like a parameter
 *                 buffer the same update launch touches (else: cannot tell, with the evidence);
 *                 reset each step when their first access in the step is a write that reads
 *                 nothing (a memset or an overwrite)
 *     sync point  the first launch after the gradients' last write that reads them
 *     broadcast   the first launch of the step that reads the parameters
 *   and one line per rule the reading suggests ("rule: ..."), for `accelerate-run suggest`.
 * Where the evidence does not decide it says "cannot tell" and why.
 * Must not: guess (every claim is a fact of the recorded launches or says "cannot tell"); call
 *   CUDA; take longer than O(N^2) in the recorded launches (N is capped at EXP_STEP_SCAN).
 */
#include "explain_int.h"

#include <stdlib.h>
#include <string.h>

#define EXP_STEP_SCAN 20000   /* launches the step search looks at */
#define A_R 1
#define A_W 2
#define A_A 4
#define A_U 8                 /* accessed by a kernel without PTX facts: unknown */

typedef struct {
    const exp_state_t *s;
    FILE *f;
    size_t base;              /* first launch of the repetition shown */
    int p;                    /* launches a step */
    unsigned char *acc;       /* acc[b * p + pos] */
    int *role;                /* per buffer */
} rd_t;

enum { R_OTHER = 0, R_PARAM, R_OPT, R_GRAD, R_GRAD_UNSURE };

static const exp_launch_t *L(const rd_t *r, int pos) { return &r->s->launches[r->base + (size_t)pos]; }
static const exp_arg_t *ARG(const rd_t *r, int pos, int i) { return &r->s->args[L(r, pos)->first + (size_t)i]; }

static long tok(const exp_state_t *s, size_t i)
{
    const exp_launch_t *l = &s->launches[i];
    if (l->kernel == EXP_MEMSET)
        return -3 - (long)s->args[l->first].buf;
    return l->kernel;
}

/* the element type used to count a pointer argument's elements: the first float type accessed,
 * else the first type; 0 when none */
static int elem_type(uint32_t mask)
{
    static const int floats[] = {ASH_PTX_T_F32, ASH_PTX_T_BF16, ASH_PTX_T_F16, ASH_PTX_T_F64};
    for (size_t i = 0; i < sizeof floats / sizeof *floats; i++)
        if (mask >> floats[i] & 1)
            return floats[i];
    for (int t = 1; t < 32; t++)
        if (mask >> t & 1)
            return t;
    return 0;
}

static int is_float(int t)
{
    return t == ASH_PTX_T_F32 || t == ASH_PTX_T_F64 || t == ASH_PTX_T_F16 || t == ASH_PTX_T_BF16 ||
           t == ASH_PTX_T_F16X2 || t == ASH_PTX_T_BF16X2;
}

/* the element type a C++ kernel's signature gives pointer parameter i ("__nv_bfloat16*" bf16,
 * "__half*" f16, "float*" f32, "double*" f64), or 0 (a C name, or no such pointer) */
static int sig_type(const char *dem, int i)
{
    const char *p = strchr(dem, '(');
    if (!p)
        return 0;
    int depth = 0, n = 0;
    const char *start = p + 1;
    for (const char *c = p + 1; *c; c++) {
        if (*c == '<' || *c == '(')
            depth++;
        else if ((*c == '>' || *c == ')') && depth > 0)
            depth--;
        else if ((*c == ',' || *c == ')') && depth == 0) {
            if (n == i) {
                char t[128];
                size_t len = (size_t)(c - start) < sizeof t - 1 ? (size_t)(c - start) : sizeof t - 1;
                memcpy(t, start, len);
                t[len] = 0;
                if (!strchr(t, '*'))
                    return 0;
                if (strstr(t, "bfloat16"))
                    return ASH_PTX_T_BF16;
                if (strstr(t, "__half") || strstr(t, "half"))
                    return ASH_PTX_T_F16;
                if (strstr(t, "double"))
                    return ASH_PTX_T_F64;
                if (strstr(t, "float"))
                    return ASH_PTX_T_F32;
                return 0;
            }
            n++;
            start = c + 1;
        }
        if (*c == ')' && depth == 0)
            break;
    }
    return 0;
}

/* the element type of pointer argument i: the PTX's float type, else (integer loads, as nvcc
 * moves bf16 and float4) the type the C++ signature gives, else the PTX's; *by_sig set when the
 * signature decided */
static int arg_type(const exp_state_t *s, const exp_kernel_t *k, int i, int *by_sig)
{
    const ash_ptx_pfact *pf = exp_pfact(s, k, i);
    if (by_sig)
        *by_sig = 0;
    if (!pf)
        return 0;
    int t = elem_type(pf->elem_types);
    if (is_float(t))
        return t;
    int st = sig_type(k->demangled, i);
    if (st && by_sig)
        *by_sig = 1;
    return st ? st : t;
}

/* a kernel's name in the reading: the demangled name without its parameter list */
static const char *kname(const exp_state_t *s, int k)
{
    static _Thread_local char buf[4][256];
    static _Thread_local int next;
    if (k == EXP_MEMSET)
        return "memset";
    const char *d = s->kernels[k].demangled, *paren = strchr(d, '(');
    if (!paren || paren == d)
        return d;
    /* "void name<T>(...)": drop the return type a template's demangled name starts with */
    const char *end = paren;
    while (end > d && end[-1] == ' ')
        end--;
    const char *lt = memchr(d, '<', (size_t)(end - d)), *start = d;
    for (const char *c = d; c < (lt ? lt : end); c++)
        if (*c == ' ')
            start = c + 1;
    char *b = buf[next++ & 3];
    snprintf(b, sizeof buf[0], "%.*s", (int)(end - start), start);
    return b;
}

/* the policy's `at:` for a kernel: a C++ name as its base name and a glob */
static void at_name(const exp_state_t *s, int k, char *out, size_t cap)
{
    const char *d = s->kernels[k].demangled;
    const char *paren = strchr(d, '(');
    if (!paren || paren == d) {
        snprintf(out, cap, "%s", d);
        return;
    }
    const char *lt = memchr(d, '<', (size_t)(paren - d)), *sp = memchr(d, ' ', (size_t)(paren - d));
    if (!lt && !sp) {                     /* name(params): the name and a glob over the params */
        snprintf(out, cap, "%.*s*", (int)(paren - d), d);
        return;
    }
    /* "void name<T>(params)": the bare name between globs */
    const char *end = lt ? lt : paren, *b = end;
    while (b > d && b[-1] != ' ' && b[-1] != ':')
        b--;
    snprintf(out, cap, "*%.*s*", (int)(end - b), b);
}

static int param_type(const exp_state_t *s, const exp_kernel_t *k, int i)
{
    if (k->image < 0)
        return 0;
    const ash_ptx_module *m = &s->images[k->image].m;
    const ash_ptx_func *fn = &m->funcs[k->func];
    return i < fn->nparams && fn->params[i].var >= 0 ? m->vars[fn->params[i].var].type : 0;
}

static void print_value(FILE *f, uint64_t v, int type, uint32_t size)
{
    if (type == ASH_PTX_T_F32 && size == 4) {
        float x;
        uint32_t u = (uint32_t)v;
        memcpy(&x, &u, 4);
        fprintf(f, "%g (f32)", (double)x);
    } else if (type == ASH_PTX_T_F64) {
        double x;
        memcpy(&x, &v, 8);
        fprintf(f, "%g (f64)", x);
    } else if (size == 4) {
        fprintf(f, "%d", (int32_t)(uint32_t)v);
    } else if (size == 8) {
        fprintf(f, "%lld", (long long)v);
    } else {
        fprintf(f, "0x%llx (%u bytes)", (unsigned long long)v, size);
    }
}

static uint64_t buf_elems(const exp_state_t *s, int b, int type)
{
    int es = type ? ash_ptx_type_size(type) : 0;
    return es > 0 ? s->bufs[b].size / (uint64_t)es : 0;
}

/* is the value argument vi of the launch at pos equal to the element count of the allocation of
 * one of its pointer arguments? that argument's index, or -1 */
static int count_of(const rd_t *r, int pos, int vi, int target)
{
    const exp_launch_t *l = L(r, pos);
    const exp_kernel_t *k = &r->s->kernels[l->kernel];
    uint64_t v = ARG(r, pos, vi)->value;
    if (k->sizes[vi] == 4)
        v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
    if (v == 0)
        return -1;
    for (int j = target < 0 ? 0 : target; j < (target < 0 ? l->nargs : target + 1); j++) {
        const ash_ptx_pfact *pf = exp_pfact(r->s, k, j);
        const exp_arg_t *a = ARG(r, pos, j);
        if (!pf || !pf->is_ptr || a->buf < 0)
            continue;
        int t = arg_type(r->s, k, j, NULL);
        uint64_t n = buf_elems(r->s, a->buf, t);
        if (n && v == n && a->off == 0)
            return j;
    }
    return -1;
}

static void print_images(const exp_state_t *s, FILE *f)
{
    fprintf(f, "images: %d loaded\n", s->nimages);
    for (int i = 0; i < s->nimages; i++) {
        const exp_image_t *im = &s->images[i];
        int entries = 0;
        if (im->parsed)
            for (int k = 0; k < im->m.nfuncs; k++)
                entries += im->m.funcs[k].is_entry && im->m.funcs[k].defined;
        fprintf(f, "  image %d: %s: %s", i, im->api, im->what);
        if (im->parsed)
            fprintf(f, "; %d kernel%s\n", entries, entries == 1 ? "" : "s");
        else if (im->has_ptx)
            fprintf(f, "; its PTX does not parse: %s\n", im->error ? im->error : "?");
        else
            fprintf(f, "; no kernel facts from it\n");
    }
    for (int k = 0; k < s->nkernels; k++)
        if (s->kernels[k].image < 0)
            fprintf(f, "  kernel %s: no PTX seen for it (reads and writes: cannot tell)\n", s->kernels[k].demangled);
}

static void print_launch(const rd_t *r, int pos)
{
    const exp_state_t *s = r->s;
    const exp_launch_t *l = L(r, pos);
    FILE *f = r->f;
    if (l->kernel == EXP_MEMSET) {
        const exp_arg_t *a = ARG(r, pos, 0);
        fprintf(f, "  #%d memset\n", pos);
        if (a->buf >= 0)
            fprintf(f, "       -> buf%d +%llu (%llu bytes of %llu) written\n", a->buf, (unsigned long long)a->off,
                    (unsigned long long)a->value, (unsigned long long)s->bufs[a->buf].size);
        else
            fprintf(f, "       -> not an allocation the shim saw (%llu bytes)\n", (unsigned long long)a->value);
        return;
    }
    const exp_kernel_t *k = &s->kernels[l->kernel];
    fprintf(f, "  #%d %s\n", pos, k->demangled);
    for (int i = 0; i < l->nargs; i++) {
        const exp_arg_t *a = ARG(r, pos, i);
        const ash_ptx_pfact *pf = exp_pfact(s, k, i);
        if (pf && pf->is_ptr) {
            char types[128];
            int by_sig = 0;
            int t = arg_type(s, k, i, &by_sig);
            fprintf(f, "       arg%d -> ", i);
            if (a->buf >= 0)
                fprintf(f, "buf%d +%llu (%llu bytes = %llu %s)", a->buf, (unsigned long long)a->off,
                        (unsigned long long)s->bufs[a->buf].size, (unsigned long long)buf_elems(s, a->buf, t),
                        t ? ash_ptx_type_name(t) : "?");
            else
                fprintf(f, "0x%llx (not an allocation the shim saw)", (unsigned long long)a->value);
            fprintf(f, " %s%s%s %s%s%s\n", pf->read ? "read" : "", pf->read && pf->written ? "/" : "",
                    pf->written ? (pf->atomic ? "written (atomic)" : "written") : "",
                    ash_ptx_facts_types(pf->elem_types, types, sizeof types),
                    by_sig ? " in the PTX; " : "", by_sig ? ash_ptx_type_name(t) : "");
            if (by_sig)
                fprintf(f, "            (%s: the kernel's signature; the PTX moves it as integers)\n",
                        ash_ptx_type_name(t));
        } else if (pf) {
            int pt = param_type(s, k, i);
            fprintf(f, "       arg%d = ", i);
            print_value(f, a->value, pt, k->sizes[i]);
            int nc = 0;
            for (int j = 0; j < l->nargs && k->sizes[i] <= 8 && pt != ASH_PTX_T_F32 && pt != ASH_PTX_T_F64; j++)
                if (count_of(r, pos, i, j) == j)
                    fprintf(f, "%s arg%d's (buf%d)", nc++ ? "," : "  = the element count of the allocation of",
                            j, ARG(r, pos, j)->buf);
            fprintf(f, "\n");
        } else {
            fprintf(f, "       arg%d = 0x%llx%s\n", i, (unsigned long long)a->value,
                    a->buf >= 0 ? " (points into an allocation; no PTX: read/written cannot tell)" : "");
        }
    }
}

/* the accesses of every buffer in the shown repetition */
static void collect(rd_t *r)
{
    const exp_state_t *s = r->s;
    for (int pos = 0; pos < r->p; pos++) {
        const exp_launch_t *l = L(r, pos);
        for (int i = 0; i < l->nargs; i++) {
            const exp_arg_t *a = ARG(r, pos, i);
            if (a->buf < 0)
                continue;
            unsigned char m = 0;
            if (l->kernel == EXP_MEMSET) {
                m = A_W;
            } else {
                const ash_ptx_pfact *pf = exp_pfact(s, &s->kernels[l->kernel], i);
                if (!pf)
                    m = A_U;
                else if (pf->is_ptr)
                    m = (pf->read ? A_R : 0) | (pf->written ? A_W : 0) | (pf->atomic ? A_A : 0);
            }
            r->acc[(size_t)a->buf * (size_t)r->p + (size_t)pos] |= m;
        }
    }
}

/* the argument of the launch at pos pointing into b (the first), or -1 */
static int arg_into(const rd_t *r, int pos, int b)
{
    const exp_launch_t *l = L(r, pos);
    for (int i = 0; i < l->nargs; i++)
        if (ARG(r, pos, i)->buf == b) {
            if (l->kernel == EXP_MEMSET)
                return i;
            const ash_ptx_pfact *pf = exp_pfact(r->s, &r->s->kernels[l->kernel], i);
            if (!pf || pf->is_ptr)
                return i;
        }
    return -1;
}

static int elem_of_arg(const rd_t *r, int pos, int i)
{
    const exp_launch_t *l = L(r, pos);
    if (l->kernel == EXP_MEMSET)
        return 0;
    return arg_type(r->s, &r->s->kernels[l->kernel], i, NULL);
}

static void list_positions(const rd_t *r, int b, unsigned char want, unsigned char not, FILE *f)
{
    int n = 0;
    for (int pos = 0; pos < r->p; pos++) {
        unsigned char m = r->acc[(size_t)b * (size_t)r->p + (size_t)pos];
        if ((m & want) && !(m & not)) {
            if (L(r, pos)->kernel == EXP_MEMSET)
                fprintf(f, "%s#%d memset", n ? ", " : "", pos);
            else
                fprintf(f, "%s#%d %s (arg%d)", n ? ", " : "", pos, kname(r->s, L(r, pos)->kernel), arg_into(r, pos, b));
            n++;
        }
    }
    if (!n)
        fprintf(f, "none");
}

static void buf_desc(const rd_t *r, int b, int type, FILE *f)
{
    fprintf(f, "buf%d (%llu bytes", b, (unsigned long long)r->s->bufs[b].size);
    if (type)
        fprintf(f, " = %llu %s", (unsigned long long)buf_elems(r->s, b, type), ash_ptx_type_name(type));
    fprintf(f, ")");
}

/* the first element type any launch of the step accesses b with */
static int buf_type(const rd_t *r, int b)
{
    for (int pos = 0; pos < r->p; pos++) {
        int i = arg_into(r, pos, b);
        if (i >= 0 && r->acc[(size_t)b * (size_t)r->p + (size_t)pos] && elem_of_arg(r, pos, i))
            return elem_of_arg(r, pos, i);
    }
    return 0;
}

static const char *dtype_word(int t)
{
    switch (t) {
    case ASH_PTX_T_F32: return "f32";
    case ASH_PTX_T_BF16: case ASH_PTX_T_BF16X2: return "bf16";
    case ASH_PTX_T_F16: case ASH_PTX_T_F16X2: return "f16";
    case ASH_PTX_T_F64: return "f64";
    default: return NULL;
    }
}

/* the count of a rule's buffer at the launch at pos, argument ai: an argument equal to the
 * allocation's element count, else the whole allocation; written to out */
static void rule_buffer(const rd_t *r, int pos, int ai, char *out, size_t cap)
{
    const exp_launch_t *l = L(r, pos);
    const exp_kernel_t *k = &r->s->kernels[l->kernel];
    for (int i = 0; i < l->nargs; i++) {
        const ash_ptx_pfact *pf = exp_pfact(r->s, k, i);
        int pt = param_type(r->s, k, i);
        if (pf && !pf->is_ptr && k->sizes[i] <= 8 && pt != ASH_PTX_T_F32 && pt != ASH_PTX_T_F64 &&
            count_of(r, pos, i, ai) == ai) {
            snprintf(out, cap, "{ arg: %d, count_arg: %d }", ai, i);
            return;
        }
    }
    /* one launch per part: an integer argument whose slices (pointer + that many elements), over
     * every launch of this kernel reading the buffer from here on, tile the allocation exactly */
    int b = ARG(r, pos, ai)->buf, t = elem_of_arg(r, pos, ai);
    int es = t ? ash_ptx_type_size(t) : 0;
    for (int i = 0; i < l->nargs && es > 0; i++) {
        const ash_ptx_pfact *pf = exp_pfact(r->s, k, i);
        int pt = param_type(r->s, k, i);
        if (!pf || pf->is_ptr || k->sizes[i] > 8 || pt == ASH_PTX_T_F32 || pt == ASH_PTX_T_F64)
            continue;
        uint64_t covered = 0, next = 0;
        int parts = 0, ok = 1;
        for (int q = pos; q < r->p && ok; q++) {
            if (L(r, q)->kernel != l->kernel || ARG(r, q, ai)->buf != b)
                continue;
            uint64_t v = ARG(r, q, i)->value;
            if (k->sizes[i] == 4)
                v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
            ok = ARG(r, q, ai)->off == next && v > 0;
            next += v * (uint64_t)es;
            covered = next;
            parts++;
        }
        if (ok && parts > 1 && covered == r->s->bufs[b].size) {
            snprintf(out, cap, "{ arg: %d, count_arg: %d }", ai, i);
            return;
        }
    }
    if (ARG(r, pos, ai)->off == 0)
        snprintf(out, cap, "{ arg: %d, region: allocation }", ai);
    else
        snprintf(out, cap, "{ arg: %d, count_arg: cannot-tell }", ai);
}

/* the roles of the buffers in the repetition r shows (r->role), the update launches (is_u) and
 * whether a kernel without facts touched any (returned through *unknown); r->acc filled */
static void classify(rd_t *r, unsigned char *is_u, int *unknown_out)
{
    const exp_state_t *s = r->s;
    int nb = s->nbufs, p = r->p;
    int unknown = 0;
    /* parameters */
    for (int b = 0; b < nb; b++) {
        unsigned char *a = &r->acc[(size_t)b * (size_t)p];
        int first = -1, written = 0;
        for (int pos = 0; pos < p; pos++) {
            if (a[pos] & A_U)
                unknown = 1;
            if (a[pos] && first < 0)
                first = pos;
            written |= (a[pos] & A_W) != 0;
        }
        if (first >= 0 && written && (a[first] & A_R) && !(a[first] & (A_W | A_U)))
            r->role[b] = R_PARAM;
    }
    for (int b = 0; b < nb; b++)
        if (r->role[b] == R_PARAM)
            for (int pos = 0; pos < p; pos++)
                if (r->acc[(size_t)b * (size_t)p + (size_t)pos] & A_W)
                    is_u[pos] = 1;
    /* optimizer state, gradients */
    for (int b = 0; b < nb; b++) {
        if (r->role[b] == R_PARAM)
            continue;
        unsigned char *a = &r->acc[(size_t)b * (size_t)p];
        int any = 0, only_u = 1, rd = 0, wr = 0, read_by_u = 0, written_by_other = 0;
        for (int pos = 0; pos < p; pos++) {
            if (!a[pos])
                continue;
            any = 1;
            only_u &= is_u[pos];
            rd |= (a[pos] & A_R) != 0;
            wr |= (a[pos] & A_W) != 0;
            if (is_u[pos] && (a[pos] & A_R))
                read_by_u = 1;
            if (!is_u[pos] && (a[pos] & A_W))
                written_by_other = 1;
        }
        if (any && only_u && rd && wr)
            r->role[b] = R_OPT;
        else if (read_by_u && written_by_other) {
            /* sized like a parameter buffer the same update launch touches? */
            int sized = 0;
            for (int pos = 0; pos < p && !sized; pos++) {
                if (!is_u[pos] || !(a[pos] & A_R))
                    continue;
                int gi = arg_into(r, pos, b);
                uint64_t gn = buf_elems(s, b, elem_of_arg(r, pos, gi));
                for (int pb = 0; pb < nb; pb++)
                    if (r->role[pb] == R_PARAM && (r->acc[(size_t)pb * (size_t)p + (size_t)pos] & A_W)) {
                        int pi = arg_into(r, pos, pb);
                        if (gn && gn == buf_elems(s, pb, elem_of_arg(r, pos, pi)))
                            sized = 1;
                    }
            }
            r->role[b] = sized ? R_GRAD : R_GRAD_UNSURE;
        }
    }
    *unknown_out = unknown;
}

/* has a rule with this key been written already? (else remember it) */
static int seen_rule(char seen[][768], int *n, const char *key)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(seen[i], key))
            return 1;
    if (*n < 64)
        snprintf(seen[(*n)++], 768, "%s", key);
    return 0;
}

/* a rule at the kernel of the launch at pos, argument ai, fires at every launch of that kernel:
 * name those whose argument ai points into a buffer of another role ("cannot tell") */
static void other_launches(const rd_t *r, int pos, int ai, int role, const char *what)
{
    int k = L(r, pos)->kernel;
    for (int q = 0; q < r->p; q++) {
        if (q == pos || L(r, q)->kernel != k || ai >= L(r, q)->nargs)
            continue;
        int b = ARG(r, q, ai)->buf;
        if (b >= 0 && r->role[b] != role && !(role == R_GRAD && r->role[b] == R_GRAD_UNSURE))
            fprintf(r->f, "  cannot tell: a rule at %s arg%d also fires at #%d, where arg%d points into buf%d, which is "
                          "not a %s buffer: check that the rule there is what you want\n",
                    kname(r->s, k), ai, q, ai, b, what);
    }
}

static void reading(rd_t *r)
{
    const exp_state_t *s = r->s;
    FILE *f = r->f;
    int nb = s->nbufs, p = r->p;
    unsigned char *is_u = calloc((size_t)p, 1);
    if (!is_u)
        return;
    int unknown = 0;
    classify(r, is_u, &unknown);
    static char seen[64][768];
    int nseen = 0;

    fprintf(f, "\nreading:\n");
    if (unknown)
        fprintf(f, "  note: some launches touch allocations through kernels without PTX facts: what they read "
                   "and write cannot tell, and the reading below does not count them\n");
    int np = 0, ng = 0, no = 0;
    for (int b = 0; b < nb; b++) {
        np += r->role[b] == R_PARAM;
        ng += r->role[b] == R_GRAD;
        no += r->role[b] == R_OPT;
    }
    if (!np)
        fprintf(f, "  parameters: cannot tell: no allocation is read first in the step and written later in it\n");
    for (int b = 0; b < nb; b++) {
        if (r->role[b] != R_PARAM)
            continue;
        fprintf(f, "  parameters: ");
        buf_desc(r, b, buf_type(r, b), f);
        fprintf(f, ": read by ");
        list_positions(r, b, A_R, A_W, f);
        fprintf(f, "; written only by the update: ");
        list_positions(r, b, A_W, 0, f);
        fprintf(f, "\n");
    }
    for (int b = 0; b < nb; b++) {
        if (r->role[b] != R_OPT)
            continue;
        fprintf(f, "  optimizer state: ");
        buf_desc(r, b, buf_type(r, b), f);
        fprintf(f, ": read and written only by the update: ");
        list_positions(r, b, A_R | A_W, 0, f);
        fprintf(f, "\n");
    }
    if (!no && np)
        fprintf(f, "  optimizer state: none (the update reads and writes no allocation of its own)\n");
    for (int b = 0; b < nb; b++) {
        if (r->role[b] != R_GRAD && r->role[b] != R_GRAD_UNSURE)
            continue;
        unsigned char *a = &r->acc[(size_t)b * (size_t)p];
        if (r->role[b] == R_GRAD_UNSURE) {
            fprintf(f, "  cannot tell: ");
            buf_desc(r, b, buf_type(r, b), f);
            fprintf(f, " is written in the step by ");
            list_positions(r, b, A_W, 0, f);
            fprintf(f, " and read by the update, but it is not sized like the parameters the update writes: "
                       "an input of the update (a scale, a step count), not a gradient, unless you say so\n");
            continue;
        }
        fprintf(f, "  gradients: ");
        buf_desc(r, b, buf_type(r, b), f);
        fprintf(f, ": written by ");
        list_positions(r, b, A_W, 0, f);
        int first = 0;
        while (first < p && !a[first])
            first++;
        if (first < p && (a[first] & A_W) && !(a[first] & (A_R | A_U)))
            fprintf(f, "; reset each step (by #%d %s, which writes it before anything reads it)", first,
                    kname(s, L(r, first)->kernel));
        else
            fprintf(f, "; reset each step: cannot tell (its first access in the step, #%d %s, reads it)", first,
                    kname(s, L(r, first)->kernel));
        fprintf(f, "; read by the update: ");
        for (int pos = 0, n = 0; pos < p; pos++)
            if (is_u[pos] && (a[pos] & A_R))
                fprintf(f, "%s#%d %s (arg%d)", n++ ? ", " : "", pos, kname(s, L(r, pos)->kernel), arg_into(r, pos, b));
        fprintf(f, "\n");
    }
    if (!ng)
        fprintf(f, "  gradients: cannot tell: no allocation is written before the update and read by it, sized "
                   "like the parameters\n");
    if (ng > 1)
        fprintf(f, "  note: %d allocations behave like gradients: each has its sync point below (one rule serves "
                   "those whose sync point is the same kernel and argument)\n", ng);

    /* the sync point: per gradient buffer */
    for (int b = 0; b < nb; b++) {
        if (r->role[b] != R_GRAD)
            continue;
        unsigned char *a = &r->acc[(size_t)b * (size_t)p];
        int lw = -1, sp = -1;
        for (int pos = 0; pos < p; pos++)
            if (a[pos] & A_W && !is_u[pos])
                lw = pos;
        for (int pos = lw + 1; pos < p && sp < 0; pos++)
            if (a[pos] & A_R)
                sp = pos;
        if (sp < 0) {
            fprintf(f, "  sync point for buf%d: cannot tell (nothing reads it after its last write, #%d)\n", b, lw);
            continue;
        }
        for (int pos = 0; pos < lw; pos++)
            if ((a[pos] & A_R) && !(a[pos] & A_W))
                fprintf(f, "  note: #%d %s reads buf%d before its last write (#%d): a partial read\n", pos,
                        kname(s, L(r, pos)->kernel), b, lw);
        int unsure = 0;
        for (int pos = lw + 1; pos < sp; pos++)
            if (a[pos] & A_U) {
                fprintf(f, "  cannot tell: #%d %s (no PTX) touches buf%d after its last known write (#%d) and before "
                           "#%d reads it: if it writes it, the sync point is later\n", pos, kname(s, L(r, pos)->kernel),
                        b, lw, sp);
                unsure = 1;
            }
        int ai = arg_into(r, sp, b);
        fprintf(f, "  sync point%s: #%d %s (arg%d): the first launch that reads the complete gradients (after their "
                   "last write, #%d %s)", unsure ? " (if those write nothing)" : "", sp, kname(s, L(r, sp)->kernel), ai, lw,
                kname(s, L(r, lw)->kernel));
        if (is_u[sp])
            fprintf(f, "; nothing but the update reads them first\n");
        else
            fprintf(f, "; it is not the update: it reads them first (a norm for clipping?), so they must be "
                       "averaged there, before it\n");
        int nu = 0;
        for (int pos = sp; pos < p; pos++)
            nu += is_u[pos] && (a[pos] & A_R) && L(r, pos)->kernel == L(r, sp)->kernel;
        if (nu > 1)
            fprintf(f, "  note: %d launches of %s read buf%d, each its own part: the rule fires at each\n", nu,
                    kname(s, L(r, sp)->kernel), b);
        char at[512], buffer[128];
        at_name(s, L(r, sp)->kernel, at, sizeof at);
        rule_buffer(r, sp, ai, buffer, sizeof buffer);
        const char *dt = dtype_word(elem_of_arg(r, sp, ai));
        other_launches(r, sp, ai, R_GRAD, "gradient");
        char key[768];
        snprintf(key, sizeof key, "gradients %s %s %s", at, buffer, dt ? dt : "");
        if (seen_rule(seen, &nseen, key)) {
            fprintf(f, "  note: buf%d's rule is the one above (at \"%s\", arg%d): it fires at each such launch, on the "
                       "allocation that launch's arg%d points into\n", b, at, ai, ai);
            continue;
        }
        fprintf(f, "rule: gradients at: \"%s\" buffer: %s dtype: %s   # evidence: #%d reads buf%d first after its "
                   "last write (#%d)\n", at, buffer, dt ? dt : "cannot-tell", sp, b, lw);
    }

    /* the broadcast points: per parameter buffer, the first launch of the step that reads it */
    int nbp = 0;
    for (int b = 0; b < nb; b++) {
        if (r->role[b] != R_PARAM)
            continue;
        int bp = -1;
        for (int pos = 0; pos < p && bp < 0; pos++)
            if (r->acc[(size_t)b * (size_t)p + (size_t)pos] & A_R)
                bp = pos;
        if (bp < 0)
            continue;
        int ai = arg_into(r, bp, b);
        char at[512], key[768];
        at_name(s, L(r, bp)->kernel, at, sizeof at);
        const char *dt = dtype_word(elem_of_arg(r, bp, ai));
        snprintf(key, sizeof key, "parameters %s %d %s", at, ai, dt ? dt : "");
        if (seen_rule(seen, &nseen, key)) {
            fprintf(f, "  broadcast: buf%d is first read by #%d %s (arg%d): the rule above covers it (once per "
                       "distinct allocation)\n", b, bp, kname(s, L(r, bp)->kernel), ai);
            continue;
        }
        fprintf(f, "  broadcast: #%d %s (arg%d) is the first launch of the step that reads the parameters (buf%d): "
                   "broadcast: once there makes every rank start from rank 0's values (always suggested: a program "
                   "may seed its weights by rank, pid or time, which one run cannot see)\n",
                bp, kname(s, L(r, bp)->kernel), ai, b);
        other_launches(r, bp, ai, R_PARAM, "parameter");
        fprintf(f, "rule: parameters at: \"%s\" buffer: { arg: %d, region: allocation } dtype: %s broadcast: once   "
                   "# evidence: #%d reads buf%d first in the step\n", at, ai, dt ? dt : "cannot-tell", bp, b);
        nbp++;
    }
    if (!nbp)
        fprintf(f, "  broadcast: cannot tell (no parameters found)\n");
    free(is_u);
}

/* a candidate step: a period p repeated from launch s for run + p launches (cov) */
typedef struct {
    size_t cov, p, s, run;
} cand_t;

/* The phase of a repeating run of period p covering cov launches from start: of the offsets at
 * which one whole repetition still lies inside the run, the one whose repetition reads the fewest
 * allocations before writing them in it (values carried in from the step before). A run begins
 * wherever the program's first step stopped differing from the later ones (llm.c allocates and
 * zeroes its optimizer state inside its first update, so its run begins at the update); a
 * training step read from there straddles two steps. Started at the forward pass, a step carries
 * in only the parameters, the optimizer state and the inputs, while the activations and
 * gradients are written first; started anywhere else it also carries in the gradients (the
 * update first) or the activations (the backward pass first). The earliest offset on a tie. */
static size_t step_phase(const exp_state_t *s, size_t start, size_t cov, size_t p)
{
    size_t omax = cov > p ? cov - p : 0;
    if (omax > p - 1)
        omax = p - 1;
    if (!omax || !s->nbufs)
        return 0;
    size_t w = p + omax;
    rd_t q = {.s = s, .base = start, .p = (int)w};
    q.acc = calloc((size_t)s->nbufs * w, 1);
    size_t *live = calloc(omax + 1, sizeof *live);
    size_t best = 0;
    if (q.acc && live) {
        collect(&q);
        for (int b = 0; b < s->nbufs; b++) {
            const unsigned char *a = &q.acc[(size_t)b * w];
            size_t nxt = w;   /* the next access at or after pos */
            for (size_t pos = w; pos-- > 0;) {
                if (a[pos])
                    nxt = pos;
                if (pos <= omax && nxt < pos + p && (a[nxt] & (A_R | A_A | A_U)))
                    live[pos]++;
            }
        }
        for (size_t o = 1; o <= omax; o++)
            if (live[o] < live[best])
                best = o;
    }
    free(q.acc);
    free(live);
    return best;
}

static int cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->cov != y->cov)
        return x->cov < y->cov ? 1 : -1;
    return x->p < y->p ? -1 : x->p > y->p;
}

void exp_write(const exp_state_t *s, FILE *f)
{
    fprintf(f, "accelshim explain (one rank)\n");
    print_images(s, f);
    size_t n = s->nlaunches < EXP_STEP_SCAN ? s->nlaunches : EXP_STEP_SCAN;
    fprintf(f, "launches: %zu recorded%s", s->nlaunches, s->dropped ? "" : "\n");
    if (s->dropped)
        fprintf(f, ", %zu more not recorded (past the cap)\n", s->dropped);
    long *t = malloc((n ? n : 1) * sizeof *t);
    if (!t) {
        fprintf(f, "step: cannot tell (no memory)\n");
        return;
    }
    for (size_t i = 0; i < n; i++)
        t[i] = tok(s, i);
    /* per period, its longest run of at least two repetitions */
    cand_t *c = calloc(n / 2 + 1, sizeof *c);
    size_t nc = 0;
    for (size_t p = 1; c && p <= n / 2; p++) {
        size_t run = 0;
        cand_t b = {0, 0, 0, 0};
        for (size_t i = 0; i + p < n; i++) {
            if (t[i] == t[i + p]) {
                run++;
                if (run >= p && run + p > b.cov)
                    b = (cand_t){run + p, p, i + 1 - run, run};
            } else {
                run = 0;
            }
        }
        if (b.p)
            c[nc++] = b;
    }
    free(t);
    /* the one covering the most launches (the shortest on a tie) ... */
    qsort(c, nc, sizeof *c, cand_cmp);
    size_t best = 0, bs = 0, bp = 0, brun = 0;
    if (nc)
        best = c[0].cov, bp = c[0].p, bs = c[0].s, brun = c[0].run;
    /* ... unless it holds no training step (no parameters and gradients: an evaluation loop, the
     * layers of one pass) and a less covering one does: the first such one */
    int trained = 0;
    for (size_t k = 0; k < nc && k < 64 && !trained; k++) {
        size_t o = step_phase(s, c[k].s, c[k].cov, c[k].p);
        size_t reps = (c[k].cov - o) / c[k].p;
        rd_t q = {.s = s, .f = f, .base = c[k].s + o + (reps >= 3 ? 1 : 0) * c[k].p, .p = (int)c[k].p};
        q.acc = calloc((size_t)(s->nbufs ? s->nbufs : 1) * c[k].p, 1);
        q.role = calloc((size_t)(s->nbufs ? s->nbufs : 1), sizeof *q.role);
        unsigned char *u = calloc(c[k].p, 1);
        if (q.acc && q.role && u) {
            int unk = 0, np = 0, ng = 0;
            collect(&q);
            classify(&q, u, &unk);
            for (int b = 0; b < s->nbufs; b++) {
                np += q.role[b] == R_PARAM;
                ng += q.role[b] == R_GRAD;
            }
            if (np && ng) {
                trained = 1;
                best = c[k].cov, bp = c[k].p, bs = c[k].s, brun = c[k].run;
            }
        }
        free(q.acc);
        free(q.role);
        free(u);
    }
    free(c);
    if (!n) {
        fprintf(f, "step: cannot tell: the program launched no kernel the shim saw\n");
        return;
    }
    if (!bp) {
        fprintf(f, "step: cannot tell: no launch sequence repeats (run more steps)\n");
        return;
    }
    if (!trained && best * 2 < n) { /* a repetition inside one step (two alike layers), not the step */
        fprintf(f, "step: cannot tell: the longest repeating sequence (%zu launch%s, %zu times) covers %zu of the "
                   "first %zu launches, less than half (run more steps)\n", bp, bp == 1 ? "" : "es",
                (brun + bp) / bp, best, n);
        return;
    }
    size_t o = step_phase(s, bs, best, bp);
    bs += o;
    size_t reps = (best - o) / bp;
    size_t shown = reps >= 3 ? 1 : 0;
    rd_t r = {.s = s, .f = f, .base = bs + shown * bp, .p = (int)bp};
    fprintf(f, "step: %zu launches, repeated %zu times from launch %zu (launches %zu..%zu of the first %zu); "
               "repetition %zu shown\n", bp, reps, bs, bs, bs + reps * bp - 1, n, shown + 1);
    for (int pos = 0; pos < r.p; pos++)
        print_launch(&r, pos);
    r.acc = calloc((size_t)(s->nbufs ? s->nbufs : 1) * bp, 1);
    r.role = calloc((size_t)(s->nbufs ? s->nbufs : 1), sizeof *r.role);
    if (r.acc && r.role) {
        collect(&r);
        reading(&r);
    } else {
        fprintf(f, "reading: cannot tell (no memory)\n");
    }
    free(r.acc);
    free(r.role);
}
