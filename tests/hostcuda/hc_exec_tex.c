/* hc_exec_tex.c — the executor's texture and surface instructions: tex (1d, 2d, 3d, a1d, a2d; .level
 * and .grad read level 0, hostcuda having no mipmaps), tld4, txq, suld.b, sust.b, suq, on objects
 * whose handle is in a register (the launch's tex_lookup gives each handle's view, hc_tex.h).
 *
 * Sampling follows the CUDA programming guide's "Texture Fetching" appendix: normalized
 * coordinates are scaled by the size; point sampling takes texel floor(x); linear filtering takes
 * xB = x - 0.5, i = floor(xB) and the weight alpha = frac(xB) held in 9-bit fixed point with 8
 * fractional bits (rounded to the nearest 1/256), then (1-a)T[i] + aT[i+1] per dimension, in
 * float. Address modes act on texel indices: clamp to the edge, border (the border colour), wrap
 * and mirror (normalized coordinates only; unnormalized they clamp, as the guide says). 8- and
 * 16-bit integer formats read as normalized floats (unsigned v/(2^n-1), signed max(v/(2^(n-1)-1), -1))
 * unless read as integers. Channels a format lacks read 0, and a missing fourth 1 (a choice: not
 * checked on a GPU).
 * Threading: called by one CTA worker for one warp; texels are only read, surfaces written with
 * plain stores (as on a GPU, racing surface writes are the program's business).
 * Must not: read or write outside a view's texels; a bad handle or an out-of-range .trap access
 * faults naming the kernel, the PTX line, the lane and the handle.
 */
#include "hc_exec_int.h"
#include "hc_exec_num.h"
#include "hc_tex.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* CUarray_format and CUaddress_mode values (cuda.h), without the header's other baggage */
enum {
    FMT_U8 = 0x01, FMT_U16 = 0x02, FMT_U32 = 0x03, FMT_S8 = 0x08, FMT_S16 = 0x09, FMT_S32 = 0x0a,
    FMT_HALF = 0x10, FMT_FLOAT = 0x20,
};
enum { AM_WRAP = 0, AM_CLAMP = 1, AM_MIRROR = 2, AM_BORDER = 3 };

static inline __attribute__((always_inline)) uint64_t opnd_lane(const hc_warp *W, const ash_ptx_opnd *o, int i, int l)
{
    if (o->kind == ASH_PTX_K_VEC) {
        if (i >= o->n || o->vec[i] == -1)
            return 0;
        return o->vec[i] == -2 ? (uint64_t)o->vimm[i] : W->R[(size_t)o->vec[i] * 32 + l];
    }
    if (o->kind == ASH_PTX_K_REG)
        return i == 0 ? W->R[(size_t)o->reg * 32 + l] : 0;
    if (o->kind == ASH_PTX_K_IMM)
        return i == 0 ? (uint64_t)o->imm : 0;
    return 0;
}

static inline __attribute__((always_inline)) void put_lane(hc_warp *W, const ash_ptx_opnd *o, int i, int l, uint64_t v)
{
    if (o->kind == ASH_PTX_K_VEC && i < o->n && o->vec[i] >= 0)
        W->R[(size_t)o->vec[i] * 32 + l] = v;
    else if (o->kind == ASH_PTX_K_REG && i == 0)
        W->R[(size_t)o->reg * 32 + l] = v;
}


static const char *geom_name(int g)
{
    static const char *n[] = {"?", "1d", "2d", "3d", "a1d", "a2d"};
    return g >= 0 && g <= 5 ? n[g] : "?";
}

static void fault(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, int lane, const char *what, uint64_t h)
{
    unsigned t[3];
    hc_thread_xyz(C->X, (unsigned)(W->id * 32 + lane), t);
    hc_xfail(C->X, CUDA_ERROR_ILLEGAL_ADDRESS,
             "%s in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): %s (handle 0x%llx)",
             ash_ptx_opcode_name(in->op), C->X->f->name, in->line, ash_ptx_line_text(C->X->m, in->line),
             C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0], t[1], t[2], what, (unsigned long long)h);
}

/* the view of lane l's handle (one lookup per distinct handle in the warp instruction) */
typedef struct vcache {
    uint64_t h;
    int ok;
    hc_tex_view v;
} vcache;

static const hc_tex_view *view_of(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, int l, int surf, vcache *vc)
{
    const ash_ptx_opnd *a = &in->o[in->op == ASH_PTX_OP_SUST ? 0 : 1];
    uint64_t h = W->R[(size_t)a->reg * 32 + l] + (uint64_t)a->imm;
    if (!vc->ok || vc->h != h) {
        const hc_exec_launch *L = C->X->L;
        vc->h = h;
        vc->ok = L->tex_lookup && L->tex_lookup(h, surf, &vc->v) == 0;
        if (!vc->ok) {
            fault(C, W, in, l, surf ? "not a live surface object" : "not a live texture object", h);
            return NULL;
        }
    }
    return &vc->v;
}

/* ---------------------------------------------------------------- texels */
/* the texel index i of a dimension of n texels under an address mode; -1: the border */
static inline __attribute__((always_inline)) long addr_index(long i, unsigned n, int mode, int normalized)
{
    long N = (long)n;
    if (!normalized && (mode == AM_WRAP || mode == AM_MIRROR))
        mode = AM_CLAMP;   /* wrap and mirror need normalized coordinates: clamp otherwise */
    switch (mode) {
    case AM_WRAP: {
        long m = i % N;
        return m < 0 ? m + N : m;
    }
    case AM_MIRROR: {
        long m = i % (2 * N);
        if (m < 0)
            m += 2 * N;
        return m >= N ? 2 * N - 1 - m : m;
    }
    case AM_BORDER:
        return i < 0 || i >= N ? -1 : i;
    default:
        return i < 0 ? 0 : i >= N ? N - 1 : i;
    }
}

/* channel c of the texel at p as a float (normalized or float formats) or as integer bits */
static inline __attribute__((always_inline)) void read_texel(const hc_tex_view *v, const char *p, float f[4], uint32_t u[4])
{
    for (int c = 0; c < 4; c++) {
        if (c >= v->nch) {
            f[c] = c == 3 ? 1.0f : 0.0f;
            u[c] = c == 3 ? 1 : 0;
            continue;
        }
        const char *q = p + c * v->chsize;
        uint8_t b8;
        uint16_t b16;
        uint32_t b32;
        switch (v->fmt) {
        case FMT_U8: memcpy(&b8, q, 1); u[c] = b8; f[c] = (float)b8 / 255.0f; break;
        case FMT_S8: memcpy(&b8, q, 1); u[c] = (uint32_t)(int32_t)(int8_t)b8;
            f[c] = fmaxf((float)(int8_t)b8 / 127.0f, -1.0f); break;
        case FMT_U16: memcpy(&b16, q, 2); u[c] = b16; f[c] = (float)b16 / 65535.0f; break;
        case FMT_S16: memcpy(&b16, q, 2); u[c] = (uint32_t)(int32_t)(int16_t)b16;
            f[c] = fmaxf((float)(int16_t)b16 / 32767.0f, -1.0f); break;
        case FMT_HALF: memcpy(&b16, q, 2); f[c] = hc_h2f(b16); u[c] = (uint32_t)bf32(f[c]); break;
        case FMT_FLOAT: memcpy(&b32, q, 4); u[c] = b32; f[c] = f32(b32); break;
        default: memcpy(&b32, q, 4); u[c] = b32; f[c] = (float)b32; break;   /* U32 / S32: element type */
        }
    }
}

/* texel (i, j, k) of layer `layer`, address modes applied; border -> the border colour (a LINEAR
 * resource's: 0) */
static inline __attribute__((always_inline)) void fetch(const hc_tex_view *v, long i, long j, long k, unsigned layer, float f[4], uint32_t u[4])
{
    int norm = v->normalized;
    long ii = addr_index(i, v->w, v->linear_res ? AM_BORDER : v->addr[0], norm);
    long jj = v->dims >= 2 ? addr_index(j, v->h, v->addr[1], norm) : 0;
    long kk = v->dims >= 3 ? addr_index(k, v->d, v->addr[2], norm) : 0;
    if (ii < 0 || jj < 0 || kk < 0) {
        for (int c = 0; c < 4; c++) {
            f[c] = v->linear_res ? 0.0f : v->border[c];
            u[c] = v->linear_res ? 0 : (uint32_t)bf32(v->border[c]);
        }
        return;
    }
    const char *p = v->data + (size_t)(v->layers ? layer : (unsigned long)kk) * v->slice + (size_t)jj * v->pitch +
                    (size_t)ii * (size_t)(v->nch * v->chsize);
    read_texel(v, p, f, u);
}

/* the 9-bit fixed-point weight of a fraction: 8 fractional bits, to the nearest */
static float weight9(float frac)
{
    return nearbyintf(frac * 256.0f) / 256.0f;
}

/* sample view v at (x, y, z) in layer `layer`; coordinates are floats unless icoord */
static void sample(const hc_tex_view *v, const float x[3], const int32_t xi[3], int icoord, unsigned layer,
                   float out[4], uint32_t uout[4])
{
    if (icoord) {   /* integer coordinates: the texel itself */
        fetch(v, xi[0], xi[1], xi[2], layer, out, uout);
        return;
    }
    unsigned n[3] = {v->w, v->h, v->d};
    float c[3];
    for (int d = 0; d < 3; d++) {
        c[d] = x[d];
        if (v->normalized && d < v->dims) {
            if (v->addr[d] == AM_WRAP)
                c[d] -= floorf(c[d]);
            c[d] *= (float)n[d];
        }
    }
    if (v->filter == 0 || v->read_int) {   /* point */
        fetch(v, (long)floorf(c[0]), (long)floorf(c[1]), (long)floorf(c[2]), layer, out, uout);
        return;
    }
    long i[3];
    float a[3];
    for (int d = 0; d < 3; d++) {
        float b = c[d] - 0.5f;
        float fl = floorf(b);
        i[d] = (long)fl;
        a[d] = d < v->dims ? weight9(b - fl) : 0.0f;
    }
    float acc[4] = {0, 0, 0, 0};
    int nk = v->dims >= 3 ? 2 : 1, nj = v->dims >= 2 ? 2 : 1;
    for (int dk = 0; dk < nk; dk++)
        for (int dj = 0; dj < nj; dj++)
            for (int di = 0; di < 2; di++) {
                float w = (di ? a[0] : 1.0f - a[0]);
                if (nj == 2)
                    w *= (dj ? a[1] : 1.0f - a[1]);
                if (nk == 2)
                    w *= (dk ? a[2] : 1.0f - a[2]);
                float t[4];
                uint32_t tu[4];
                fetch(v, i[0] + di, i[1] + dj, i[2] + dk, layer, t, tu);
                for (int ch = 0; ch < 4; ch++)
                    acc[ch] += w * t[ch];
            }
    for (int ch = 0; ch < 4; ch++) {
        out[ch] = acc[ch];
        uout[ch] = (uint32_t)bf32(acc[ch]);
    }
}

static int geom_dims(int g)
{
    return g == ASH_PTX_G_3D ? 3 : g == ASH_PTX_G_2D || g == ASH_PTX_G_A2D ? 2 : 1;
}

static int geom_layered(int g)
{
    return g == ASH_PTX_G_A1D || g == ASH_PTX_G_A2D;
}

/* the view matches the instruction's geometry */
static int geom_ok(const hc_tex_view *v, int g)
{
    return v->dims == geom_dims(g) && !!v->layers == geom_layered(g);
}

/* ---------------------------------------------------------------- tex, tld4, txq */
static int do_tex(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    vcache vc = {0};
    const ash_ptx_opnd *co = &in->o[2];
    int g = in->geom, lay = geom_layered(g), nd = geom_dims(g);
    int icoord = in->type2 == ASH_PTX_T_S32;
    int fres = in->type == ASH_PTX_T_F32;
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        const hc_tex_view *v = view_of(C, W, in, l, 0, &vc);
        if (!v)
            return -1;
        if (!geom_ok(v, g)) {
            char msg[96];
            snprintf(msg, sizeof msg, "tex.%s on a %s%dD texture", geom_name(g), v->layers ? "layered " : "", v->dims);
            fault(C, W, in, l, msg, vc.h);
            return -1;
        }
        int base = lay ? 1 : 0;
        unsigned layer = 0;
        if (lay) {
            int32_t li = (int32_t)opnd_lane(W, co, 0, l);
            layer = li < 0 ? 0 : (unsigned)li >= v->layers ? v->layers - 1 : (unsigned)li;   /* clamped */
        }
        float x[3] = {0, 0, 0};
        int32_t xi[3] = {0, 0, 0};
        for (int d = 0; d < nd; d++) {
            uint64_t b = opnd_lane(W, co, base + d, l);
            x[d] = f32(b);
            xi[d] = (int32_t)b;
        }
        float f[4];
        uint32_t u[4];
        float r[4];
        if (in->op == ASH_PTX_OP_TLD4) {   /* the four texels of the bilinear footprint, one channel */
            int ch = in->sub - ASH_PTX_TX_R;
            float c0 = v->normalized ? x[0] * (float)v->w : x[0], c1 = v->normalized ? x[1] * (float)v->h : x[1];
            if (v->normalized && v->addr[0] == AM_WRAP)
                c0 = (x[0] - floorf(x[0])) * (float)v->w;
            if (v->normalized && v->addr[1] == AM_WRAP)
                c1 = (x[1] - floorf(x[1])) * (float)v->h;
            long i0 = (long)floorf(c0 - 0.5f), j0 = (long)floorf(c1 - 0.5f);
            static const int di[4] = {0, 1, 1, 0}, dj[4] = {1, 1, 0, 0};   /* (i,j+1) (i+1,j+1) (i+1,j) (i,j) */
            for (int q = 0; q < 4; q++) {
                float t[4];
                uint32_t tu[4];
                fetch(v, i0 + di[q], j0 + dj[q], 0, layer, t, tu);
                r[q] = t[ch];
                u[q] = v->read_int ? tu[ch] : (uint32_t)bf32(t[ch]);
            }
            for (int q = 0; q < 4; q++)
                put_lane(W, &in->o[0], q, l, fres ? bf32(r[q]) : u[q]);
            continue;
        }
        sample(v, x, xi, icoord, layer, f, u);
        for (int q = 0; q < 4; q++) {
            uint64_t val = v->read_int ? u[q] : bf32(f[q]);
            if (!fres && !v->read_int)   /* an integer result of a float texel: its bits */
                val = bf32(f[q]);
            if (in->type == ASH_PTX_T_S32 && v->read_int)
                val = (uint64_t)(int64_t)(int32_t)u[q];
            put_lane(W, &in->o[0], q, l, val);
        }
    }
    return HC_STEP_NEXT;
}

static int do_query(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    vcache vc = {0};
    int surf = in->op == ASH_PTX_OP_SUQ;
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        const hc_tex_view *v = view_of(C, W, in, l, surf, &vc);
        if (!v)
            return -1;
        uint64_t r = 0;
        switch (in->sub) {
        case ASH_PTX_TQ_WIDTH: r = v->w; break;
        case ASH_PTX_TQ_HEIGHT: r = v->h; break;
        case ASH_PTX_TQ_DEPTH: r = v->d; break;
        case ASH_PTX_TQ_ARRAY_SIZE: r = v->layers; break;
        case ASH_PTX_TQ_NORMALIZED: r = (uint64_t)v->normalized; break;
        case ASH_PTX_TQ_FILTER: r = (uint64_t)v->filter; break;
        case ASH_PTX_TQ_ADDR0: case ASH_PTX_TQ_ADDR1: case ASH_PTX_TQ_ADDR2:
            r = (uint64_t)v->addr[in->sub - ASH_PTX_TQ_ADDR0]; break;
        case ASH_PTX_TQ_MIPLEVELS: r = 1; break;
        default: break;
        }
        put_lane(W, &in->o[0], 0, l, r);
    }
    return HC_STEP_NEXT;
}

/* ---------------------------------------------------------------- suld, sust */
static int do_surf(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    vcache vc = {0};
    int st = in->op == ASH_PTX_OP_SUST;
    const ash_ptx_opnd *co = &in->o[st ? 1 : 2], *data = &in->o[st ? 2 : 0];
    int g = in->geom, lay = geom_layered(g), nd = geom_dims(g);
    int esz = ash_ptx_type_size(in->type), n = in->vec ? in->vec : 1;
    size_t size = (size_t)esz * (size_t)n;
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        const hc_tex_view *v = view_of(C, W, in, l, 1, &vc);
        if (!v)
            return -1;
        if (!geom_ok(v, g)) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s.%s on a %s%dD surface", st ? "sust" : "suld", geom_name(g),
                     v->layers ? "layered " : "", v->dims);
            fault(C, W, in, l, msg, vc.h);
            return -1;
        }
        int base = lay ? 1 : 0;
        int64_t c[4] = {0, 0, 0, 0};   /* x (bytes), y, z, layer */
        for (int d = 0; d < nd; d++)
            c[d] = (int32_t)opnd_lane(W, co, base + d, l);
        if (lay)
            c[3] = (int32_t)opnd_lane(W, co, 0, l);
        int64_t row = (int64_t)v->w * v->nch * v->chsize;
        if ((int64_t)size > row) {   /* no position holds it: clamping could not either */
            char msg[96];
            snprintf(msg, sizeof msg, "%s of %zu bytes on a surface whose rows are %lld bytes", st ? "sust" : "suld",
                     size, (long long)row);
            fault(C, W, in, l, msg, vc.h);
            return -1;
        }
        int64_t lim[4] = {row - (int64_t)size, (int64_t)v->h - 1, (int64_t)v->d - 1,
                          (int64_t)(v->layers ? v->layers : 1) - 1};
        int oob = 0;
        for (int d = 0; d < 4; d++)
            oob |= c[d] < 0 || c[d] > lim[d];
        if (oob) {
            if (in->sub == ASH_PTX_SU_CLAMP) {
                for (int d = 0; d < 4; d++)
                    c[d] = c[d] < 0 ? 0 : c[d] > lim[d] ? lim[d] : c[d];
                c[0] -= c[0] % (int64_t)size;
            } else if (in->sub == ASH_PTX_SU_ZERO) {
                if (!st)
                    for (int q = 0; q < n; q++)
                        put_lane(W, data, q, l, 0);
                continue;   /* a store out of range is dropped */
            } else {
                char msg[160];
                snprintf(msg, sizeof msg, "%s.trap out of range: byte x %lld, y %lld, z %lld, layer %lld of a "
                         "%u x %u x %u surface (%u layers), %zu bytes", st ? "sust" : "suld", (long long)c[0],
                         (long long)c[1], (long long)c[2], (long long)c[3], v->w, v->h, v->d, v->layers, size);
                fault(C, W, in, l, msg, vc.h);
                return -1;
            }
        }
        char *p = v->data + (size_t)(v->layers ? c[3] : c[2]) * v->slice + (size_t)c[1] * v->pitch + (size_t)c[0];
        for (int q = 0; q < n; q++) {
            if (st) {
                uint64_t val = opnd_lane(W, data, q, l);
                memcpy(p + q * esz, &val, (size_t)esz);   /* little endian: the low bytes */
            } else {
                uint64_t val = 0;
                memcpy(&val, p + q * esz, (size_t)esz);
                put_lane(W, data, q, l, val);
            }
        }
    }
    return HC_STEP_NEXT;
}

int hc_exec_tex(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    switch (in->op) {
    case ASH_PTX_OP_TEX: case ASH_PTX_OP_TLD4: return do_tex(C, W, in, E);
    case ASH_PTX_OP_TXQ: case ASH_PTX_OP_SUQ: return do_query(C, W, in, E);
    default: return do_surf(C, W, in, E);
    }
}

/* the load-time check: the forms above, the handle in a register */
int hc_exec_tex_supported(const ash_ptx_insn *in, const char **why)
{
    int g = in->geom;
    int hk = in->op == ASH_PTX_OP_SUST ? 0 : 1;
    if (in->o[hk].kind != ASH_PTX_K_MEM || in->o[hk].reg < 0) {
        *why = "texture / surface references not supported (only objects, the handle in a register)";
        return 0;
    }
    if (in->flags & ASH_PTX_F_BOOL_NEG) {   /* d|p: the sparse-texture residency predicate */
        *why = "texture / surface form with a predicate output not supported";
        return 0;
    }
    switch (in->op) {
    case ASH_PTX_OP_TEX:   /* operands: d, [a, c] (two), then lod (.level) or dPdx, dPdy (.grad); no offsets */
        if (!g || in->vec != 4 ||
            in->nops != 3 + (in->sub == ASH_PTX_TX_LEVEL) + 2 * (in->sub == ASH_PTX_TX_GRAD) ||
            (in->type != ASH_PTX_T_F32 && in->type != ASH_PTX_T_S32 && in->type != ASH_PTX_T_U32) ||
            (in->type2 != ASH_PTX_T_F32 && in->type2 != ASH_PTX_T_S32)) {
            *why = "tex form not supported (tex[.level/.grad].{1d,2d,3d,a1d,a2d}.v4.{f32,s32,u32}.{f32,s32}, "
                   "no offsets or depth compare)";
            return 0;
        }
        return 1;
    case ASH_PTX_OP_TLD4:
        if (g != ASH_PTX_G_2D || in->vec != 4 || in->nops != 3 || in->sub < ASH_PTX_TX_R || in->sub > ASH_PTX_TX_A ||
            in->type2 != ASH_PTX_T_F32) {
            *why = "tld4 form not supported (tld4.{r,g,b,a}.2d.v4.{f32,s32,u32}.f32)";
            return 0;
        }
        return 1;
    case ASH_PTX_OP_TXQ: case ASH_PTX_OP_SUQ:
        if (in->sub < ASH_PTX_TQ_WIDTH || in->sub > ASH_PTX_TQ_MIPLEVELS || in->nops != 2) {
            *why = "txq / suq query not supported";
            return 0;
        }
        return 1;
    default:   /* suld / sust */
        if (!g || in->nops != 3 || (in->sub && in->sub != ASH_PTX_SU_TRAP && in->sub != ASH_PTX_SU_CLAMP &&
                                    in->sub != ASH_PTX_SU_ZERO) ||
            (in->type != ASH_PTX_T_B8 && in->type != ASH_PTX_T_B16 && in->type != ASH_PTX_T_B32 &&
             in->type != ASH_PTX_T_B64)) {
            *why = "suld / sust form not supported (.b.{1d,2d,3d,a1d,a2d}.{b8,b16,b32,b64}[.v2/.v4].{trap,clamp,zero})";
            return 0;
        }
        return 1;
    }
}
