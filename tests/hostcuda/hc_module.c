/* hc_module.c — hostcuda modules, libraries, functions, kernels and kernel launches.
 *
 * A module or library is PTX text scanned by hc_ptx.c, given as text or as a fatbin (or cudart's
 * fatbin wrapper) whose PTX entry hc_fatbin.c extracts; cubins are refused. The host implementation of kernel NAME is
 * `hostcuda_kernel_NAME`, looked up with dlsym in each library of HOSTCUDA_KERNEL_LIBS (opened on
 * the first load) and then in RTLD_DEFAULT, when the function or kernel handle is requested; a
 * missing one fails there with CUDA_ERROR_NOT_FOUND and one line on stderr. A launch copies the
 * parameter values (kernelParams or the `extra` buffer) into a private blob, turns each 8-byte
 * value that lies in a device arena into hostcuda's read-write address, and queues the call.
 * Launches accept a CUfunction or a CUkernel (told apart by the handle registry / magic tag).
 * Invariant: a library's image is shared by the modules it creates (one per context, on demand).
 * Threading: handle tables under hc_mu; kernels run on the stream's worker without it.
 * Must not: load a cubin; run a kernel without its host implementation (CUDA_ERROR_NOT_FOUND and
 * one line on stderr); hold hc_mu while a kernel runs.
 */
#include "hc_internal.h"
#include "hc_tex.h"
#include "hc_exec.h"
#include "hc_ptx.h"

#include <dlfcn.h>
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*hc_kfn)(const hostcuda_dims *, void **);

typedef struct hc_image {
    int refs;
    hc_ptx_image ptx;
    ash_ptx_module px;             /* the decoded PTX (for the interpreter), if px_ok */
    int px_ok;
    int linked;                    /* from cuLinkComplete: px (several units) made ptx and px_var */
    char px_err[512];
    int *px_func;                  /* per entry: its function in px */
    int *px_var;                   /* per px variable: its index in ptx.vars, or -1 */
    int *use_px;                   /* per entry: launched through the interpreter */
    struct hc_refusal {            /* per entry: why it cannot run (the hostcuda: line, or NULL) */
        CUresult code;             /* and what asking for it answers */
        char *why;
    } *refused;
} hc_image;

struct CUfunc_st {
    uint32_t magic;
    struct CUmod_st *mod;
    hc_ptx_entry *e;
    hc_kfn fn;
    int max_dyn_shared;
    int px;                        /* function in the image's px when interpreted, else -1 */
};

struct CUmod_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    hc_image *img;
    CUdeviceptr *gaddr;            /* one per PTX variable */
    struct CUfunc_st **funcs;      /* one per entry, created on demand */
    struct CUlib_st *lib;          /* set for a library's per-context module */
    struct CUmod_st *next;         /* in ctx->modules */
    struct CUmod_st *lib_next;     /* in lib->mods */
    uint64_t *px_addr;             /* per px variable: its device address (global / const) */
};

struct CUkern_st {
    uint32_t magic;
    struct CUlib_st *lib;
    hc_ptx_entry *e;
    hc_kfn fn;
    int px;
    int max_dyn_shared;            /* cuKernelSetAttribute; the functions made from it start with it */
};

struct CUlib_st {
    uint32_t magic;
    hc_image *img;
    struct CUkern_st **kerns;
    struct CUmod_st *mods;
};

/* ---------------------------------------------------------------- host kernel lookup */
#define HC_MAX_KLIBS 32
static void *klibs[HC_MAX_KLIBS];
static int nklibs;
static pthread_once_t klibs_once = PTHREAD_ONCE_INIT;

static void klibs_open(void)
{
    const char *v = hc_opt.kernel_libs;
    if (!v)
        return;
    char *copy = strdup(v), *save = NULL;
    for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p && nklibs < HC_MAX_KLIBS;
         p = strtok_r(NULL, ":", &save)) {
        void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
        if (h)
            klibs[nklibs++] = h;
        else
            fprintf(stderr, "hostcuda: cannot open HOSTCUDA_KERNEL_LIBS entry: %s\n", dlerror());
    }
    free(copy);
}

static hc_kfn host_kernel(const char *name, int quiet)
{
    char sym[512];
    snprintf(sym, sizeof sym, "hostcuda_kernel_%s", name);
    for (int i = 0; i < nklibs; i++) {
        void *f = dlsym(klibs[i], sym);
        if (f)
            return (hc_kfn)f;
    }
    void *f = dlsym(RTLD_DEFAULT, sym);
    if (!f && !quiet) {
        const char *libs = hc_opt.kernel_libs;
        fprintf(stderr, "hostcuda: kernel %s has no host implementation: define %s in a library listed in "
                        "HOSTCUDA_KERNEL_LIBS (now \"%s\")\n", name, sym, libs ? libs : "");
    }
    return (hc_kfn)f;
}

static int entry_index(hc_image *img, const char *name)
{
    for (int i = 0; i < img->ptx.nentries; i++)
        if (!strcmp(img->ptx.entries[i].name, name))
            return i;
    return -1;
}

static int var_index(hc_image *img, const char *name)
{
    for (int i = 0; i < img->ptx.nvars; i++)
        if (!strcmp(img->ptx.vars[i].name, name))
            return i;
    return -1;
}

/* ---------------------------------------------------------------- the interpreter's options and stats */
void hc_exec_options_read(hc_options *o)
{
    static char err[256];
    const char *v = getenv("HOSTCUDA_EXEC");
    o->exec_mode = HC_EXEC_AUTO;
    if (v && *v) {
        if (!strcmp(v, "auto"))
            o->exec_mode = HC_EXEC_AUTO;
        else if (!strcmp(v, "ptx"))
            o->exec_mode = HC_EXEC_PTX;
        else if (!strcmp(v, "twin"))
            o->exec_mode = HC_EXEC_TWIN;
        else {
            snprintf(err, sizeof err, "HOSTCUDA_EXEC=%.100s: expected auto, ptx or twin", v);
            o->opt_error = err;
        }
    }
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    o->exec_threads = nc > 0 ? (int)nc : 1;
    v = getenv("HOSTCUDA_THREADS");
    if (v && *v) {
        char *end;
        errno = 0;
        long x = strtol(v, &end, 10);
        if (errno || *end || x < 1 || x > 4096) {
            snprintf(err, sizeof err, "HOSTCUDA_THREADS=%.100s: expected a thread count from 1 to 4096", v);
            o->opt_error = err;
        } else {
            o->exec_threads = (int)x;
        }
    }
    o->kernel_timeout_s = 600;
    v = getenv("HOSTCUDA_KERNEL_TIMEOUT_S");
    if (v && *v) {
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        if (errno || *end || !(x >= 0)) {
            snprintf(err, sizeof err, "HOSTCUDA_KERNEL_TIMEOUT_S=%.100s: expected seconds (0 = no limit)", v);
            o->opt_error = err;
        } else {
            o->kernel_timeout_s = x;
        }
    }
    v = getenv("HOSTCUDA_EXEC_STATS");
    o->exec_stats = 0;
    if (v && *v && strcmp(v, "0")) {
        if (!strcmp(v, "1"))
            o->exec_stats = 1;
        else if (!strcmp(v, "launch"))
            o->exec_stats = 2;
        else {
            snprintf(err, sizeof err, "HOSTCUDA_EXEC_STATS=%.100s: expected 0, 1 or launch", v);
            o->opt_error = err;
        }
    }
}

/* per kernel name, for HOSTCUDA_EXEC_STATS (never freed: printed at exit) */
typedef struct exec_stat {
    char *name;
    hc_exec_stats st;
    struct exec_stat *next;
} exec_stat;
static exec_stat *exec_stats;
static pthread_mutex_t exec_stats_mu = PTHREAD_MUTEX_INITIALIZER;

static void stat_line(const exec_stat *e)
{
    fprintf(stderr, "hostcuda: exec %s launches=%llu warp_instr=%llu lane_instr=%llu seconds=%.6f\n", e->name,
            (unsigned long long)e->st.launches, (unsigned long long)e->st.warp_instr,
            (unsigned long long)e->st.lane_instr, (double)e->st.nanos / 1e9);
}

static void stats_at_exit(void)
{
    pthread_mutex_lock(&exec_stats_mu);
    for (exec_stat *e = exec_stats; e; e = e->next)
        stat_line(e);
    pthread_mutex_unlock(&exec_stats_mu);
}

static exec_stat *stats_for(const char *name)
{
    pthread_mutex_lock(&exec_stats_mu);
    exec_stat *e = exec_stats, *last = NULL;
    for (; e; last = e, e = e->next)
        if (!strcmp(e->name, name))
            break;
    if (!e && (e = calloc(1, sizeof *e)) && (e->name = strdup(name))) {
        if (!exec_stats && hc_opt.exec_stats == 1)
            atexit(stats_at_exit);
        if (last)
            last->next = e;   /* in order of first launch */
        else
            exec_stats = e;
    } else if (e && !e->name) {
        free(e);
        e = NULL;
    }
    pthread_mutex_unlock(&exec_stats_mu);
    return e;
}

CUresult hc_ctx_sticky(struct CUctx_st *c)
{
    return c ? (CUresult)atomic_load(&c->sticky) : CUDA_SUCCESS;
}

void hc_ctx_flush_printf(struct CUctx_st *c)
{
    if (c && c->printf_len) {
        fwrite(c->printf_buf, 1, c->printf_len, stdout);
        fflush(stdout);
        free(c->printf_buf);
        c->printf_buf = NULL;
        c->printf_len = 0;
    }
}

/* Decode the PTX for the interpreter and choose, per entry, twin or interpreter. A kernel that
 * must be interpreted but uses what the interpreter does not implement (or whose PTX cannot be
 * read) is refused on its own: the image loads, as on a GPU, and asking for that kernel answers
 * CUDA_ERROR_NOT_SUPPORTED / CUDA_ERROR_INVALID_PTX with the reason (module_function). */
static CUresult image_decode(hc_image *img, const char *text)
{
    int mode = hc_opt.exec_mode;
    int n = img->ptx.nentries;
    img->px_func = calloc((size_t)n + 1, sizeof *img->px_func);
    img->use_px = calloc((size_t)n + 1, sizeof *img->use_px);
    img->refused = calloc((size_t)n + 1, sizeof *img->refused);
    if (!img->px_func || !img->use_px || !img->refused)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (mode == HC_EXEC_TWIN)
        return CUDA_SUCCESS;
    if (!img->linked)
        img->px_ok = ash_ptx_parse(text, "ptx", &img->px, img->px_err, sizeof img->px_err) == 0;
    if (img->px_ok && !img->linked) {
        img->px_var = calloc((size_t)img->px.nvars + 1, sizeof *img->px_var);
        if (!img->px_var)
            return CUDA_ERROR_OUT_OF_MEMORY;
        for (int i = 0; i < img->px.nvars; i++) {
            img->px_var[i] = -1;
            const ash_ptx_var *v = &img->px.vars[i];
            if (v->func < 0 && (v->space == ASH_PTX_S_GLOBAL || v->space == ASH_PTX_S_CONST))
                for (int j = 0; j < img->ptx.nvars; j++)
                    if (!strcmp(img->ptx.vars[j].name, v->name))
                        img->px_var[i] = j;
        }
    }
    for (int i = 0; i < n; i++) {
        const char *name = img->ptx.entries[i].name;
        if (mode == HC_EXEC_AUTO && host_kernel(name, 1))
            continue;
        char msg[1024];
        int f = img->px_ok ? ash_ptx_find_func(&img->px, name) : -1;
        if (!img->px_ok)
            snprintf(msg, sizeof msg, "kernel %s has no host twin and its PTX cannot be read: %s", name, img->px_err);
        else if (f < 0 || !img->px.funcs[f].is_entry)
            snprintf(msg, sizeof msg, "kernel %s: no .entry of that name in the decoded PTX", name);
        else if (hc_exec_check(&img->px, f, msg, sizeof msg) == 0) {
            msg[0] = 0;
            for (int v = 0; v < img->px.nvars && !msg[0]; v++) {
                const ash_ptx_var *pv = &img->px.vars[v];
                if (pv->func < 0 && (pv->space == ASH_PTX_S_GLOBAL || pv->space == ASH_PTX_S_CONST) &&
                    !pv->is_extern && img->px_var[v] < 0)
                    snprintf(msg, sizeof msg, "kernel %s: module variable %s was not allocated", name, pv->name);
            }
            if (!msg[0]) {
                img->px_func[i] = f;
                img->use_px[i] = 1;
                continue;
            }
        }
        /* unreadable PTX or no such entry: invalid PTX; what the interpreter lacks: not supported */
        img->refused[i].code = img->px_ok && f >= 0 ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_PTX;
        if (!(img->refused[i].why = strdup(msg)))
            return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

static void image_release(hc_image *img)
{
    hc_ptx_free(&img->ptx);
    if (img->px_ok)
        ash_ptx_free(&img->px);
    free(img->px_func);
    free(img->px_var);
    free(img->use_px);
    for (int i = 0; img->refused && i < img->ptx.nentries; i++)
        free(img->refused[i].why);
    free(img->refused);
    free(img);
}

/* ---------------------------------------------------------------- images */
/* A linked image's kernels and globals, from its decoded units (the text scanner sees one unit):
 * every defined entry, every module .global/.const definition (internal names of two units may
 * be equal: px_var maps each by position, never by name). */
static CUresult image_tables_from_px(hc_image *img)
{
    const ash_ptx_module *m = &img->px;
    hc_ptx_image *t = &img->ptx;
    t->entries = calloc((size_t)m->nfuncs + 1, sizeof *t->entries);
    t->vars = calloc((size_t)m->nvars + 1, sizeof *t->vars);
    img->px_var = calloc((size_t)m->nvars + 1, sizeof *img->px_var);
    if (!t->entries || !t->vars || !img->px_var)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < m->nfuncs; i++) {
        const ash_ptx_func *f = &m->funcs[i];
        if (!f->is_entry || !f->defined)
            continue;
        hc_ptx_entry *e = &t->entries[t->nentries];
        if (!(e->name = strdup(f->name)) || !(e->params = calloc((size_t)f->nparams + 1, sizeof *e->params)))
            return free(e->name), e->name = NULL, CUDA_ERROR_OUT_OF_MEMORY;
        for (int k = 0; k < f->nparams; k++)
            e->params[k] = (hc_ptx_param){.offset = f->params[k].offset, .size = f->params[k].size};
        e->nparams = f->nparams;
        e->argsize = f->argsize;
        t->nentries++;
    }
    for (int i = 0; i < m->nvars; i++) {
        const ash_ptx_var *v = &m->vars[i];
        img->px_var[i] = -1;
        if (v->func >= 0 || v->is_extern || (v->space != ASH_PTX_S_GLOBAL && v->space != ASH_PTX_S_CONST))
            continue;
        hc_ptx_var *hv = &t->vars[t->nvars];
        if (!(hv->name = strdup(v->name)))
            return CUDA_ERROR_OUT_OF_MEMORY;
        hv->size = v->size;
        if (v->init) {
            if (!(hv->init = malloc(v->size ? v->size : 1)))
                return free(hv->name), hv->name = NULL, CUDA_ERROR_OUT_OF_MEMORY;
            memcpy(hv->init, v->init, v->size);
        }
        img->px_var[i] = t->nvars++;
    }
    /* a declaration resolved to another unit's definition takes its allocation */
    for (int i = 0; i < m->nvars; i++)
        if (img->px_var[i] < 0 && m->vars[i].func < 0 && m->vars[i].is_extern) {
            int d = ash_ptx_find_var(m, m->vars[i].name);
            if (d >= 0 && !m->vars[d].is_extern)
                img->px_var[i] = img->px_var[d];
        }
    return CUDA_SUCCESS;
}

static CUresult image_decode(hc_image *img, const char *text);
static void image_release(hc_image *img);

/* cuLinkComplete's image (hc_link.c): its units decoded and linked into one module */
static CUresult image_from_units(const char *const *texts, int n, hc_image **out)
{
    hc_image *img = calloc(1, sizeof *img);
    if (!img)
        return CUDA_ERROR_OUT_OF_MEMORY;
    img->linked = 1;
    if (ash_ptx_parse_units(texts, n, "ptx", &img->px, img->px_err, sizeof img->px_err) != 0) {
        fprintf(stderr, "hostcuda: the linked image does not decode: %s\n", img->px_err);
        free(img);
        return CUDA_ERROR_INVALID_PTX;
    }
    img->px_ok = 1;
    CUresult rc = image_tables_from_px(img);
    if (rc == CUDA_SUCCESS)
        rc = image_decode(img, NULL);
    if (rc != CUDA_SUCCESS) {
        image_release(img);
        return rc;
    }
    img->refs = 1;
    *out = img;
    return CUDA_SUCCESS;
}

static CUresult image_from_text(const char *text, hc_image **out)
{
    pthread_once(&klibs_once, klibs_open);
    const unsigned char *u = (const unsigned char *)text;
    /* byte by byte: a short text stops at its NUL */
    if (u[0] == 0x7f && u[1] == 'E' && u[2] == 'L' && u[3] == 'F') {
        fprintf(stderr, "hostcuda: only PTX can be loaded (got a cubin); load PTX or a fatbin with a PTX entry\n");
        return CUDA_ERROR_INVALID_IMAGE;
    }
    const char **units;
    int nunits = hc_link_units(u, &units);
    if (nunits != 0) { /* cuLinkComplete's image */
        if (nunits < 0)
            return CUDA_ERROR_INVALID_IMAGE;
        CUresult rc = image_from_units(units, nunits, out);
        free(units);
        return rc;
    }
    if (hc_fatbin_kind(u)) { /* a fatbin or its wrapper: its PTX entry, decompressed */
        char *ptx;
        CUresult rc = hc_fatbin_ptx(u, &ptx);
        if (rc != CUDA_SUCCESS)
            return rc;
        rc = hc_fatbin_kind(ptx) ? CUDA_ERROR_INVALID_IMAGE : image_from_text(ptx, out);
        free(ptx);
        return rc;
    }
    hc_image *img = calloc(1, sizeof *img);
    if (!img)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (hc_ptx_parse(text, &img->ptx) != 0) {
        free(img);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    CUresult drc = image_decode(img, text);
    if (drc != CUDA_SUCCESS) {
        image_release(img);
        return drc;
    }
    img->refs = 1;
    *out = img;
    return CUDA_SUCCESS;
}

/* a whole file, NUL-terminated (malloc'ed), and its length if len is not NULL */
CUresult hc_read_file(const char *path, char **out, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return CUDA_ERROR_FILE_NOT_FOUND;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 4096) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[len] = 0;
    *out = buf;
    if (len_out)
        *len_out = len;
    return CUDA_SUCCESS;
}

static void image_unref(hc_image *img)
{
    if (img && --img->refs == 0)
        image_release(img);
}

/* ---------------------------------------------------------------- modules */
static CUresult module_new(struct CUctx_st *c, hc_image *img, struct CUlib_st *lib, struct CUmod_st **out)
{
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->gaddr = calloc((size_t)img->ptx.nvars + 1, sizeof *m->gaddr);
    m->funcs = calloc((size_t)img->ptx.nentries + 1, sizeof *m->funcs);
    if (!m->gaddr || !m->funcs) {
        free(m->gaddr);
        free(m->funcs);
        free(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < img->ptx.nvars; i++) {
        hc_ptx_var *v = &img->ptx.vars[i];
        CUresult rc = hc_mem_alloc(c, v->size ? v->size : 1, NULL, &m->gaddr[i]);
        if (rc != CUDA_SUCCESS) {
            for (int j = 0; j < i; j++)
                hc_mem_free(m->gaddr[j]);
            free(m->gaddr);
            free(m->funcs);
            free(m);
            return rc;
        }
        void *rw = hc_dev_rw((uintptr_t)m->gaddr[i]);
        if (v->init)
            memcpy(rw, v->init, v->size);
        else
            memset(rw, 0, v->size);
    }
    if (img->px_ok) {
        m->px_addr = calloc((size_t)img->px.nvars + 1, sizeof *m->px_addr);
        if (!m->px_addr) {
            for (int j = 0; j < img->ptx.nvars; j++)
                hc_mem_free(m->gaddr[j]);
            free(m->gaddr);
            free(m->funcs);
            free(m);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        for (int i = 0; i < img->px.nvars; i++)
            if (img->px_var[i] >= 0)
                m->px_addr[i] = m->gaddr[img->px_var[i]];
        /* addresses inside initialisers (`generic(sym)`, `sym+N`, a function's name): the generic
         * address of a global is its device address; a function's is the interpreter's */
        for (int i = 0; i < img->px.nvars; i++) {
            const ash_ptx_var *v = &img->px.vars[i];
            if (!v->nrelocs || img->px_var[i] < 0)
                continue;
            unsigned char *rw = hc_dev_rw((uintptr_t)m->px_addr[i]);
            for (int r = 0; r < v->nrelocs; r++) {
                const ash_ptx_reloc *rl = &v->relocs[r];
                uint64_t a = (rl->sym >= 0 ? m->px_addr[rl->sym] : hc_exec_func_addr(rl->func)) +
                             (uint64_t)rl->addend;   /* a function's: a vtable entry */
                if (rl->offset + (size_t)rl->size <= v->size)
                    memcpy(rw + rl->offset, &a, (size_t)rl->size);
            }
        }
    }
    m->magic = HC_K_MODULE;
    m->ctx = c;
    m->img = img;
    img->refs++;
    m->lib = lib;
    m->next = c->modules;
    c->modules = m;
    if (lib) {
        m->lib_next = lib->mods;
        lib->mods = m;
    }
    hc_reg_add(m, HC_K_MODULE);
    *out = m;
    return CUDA_SUCCESS;
}

void hc_module_unload_locked(struct CUmod_st *m)
{
    for (struct CUmod_st **pp = &m->ctx->modules; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    if (m->lib)
        for (struct CUmod_st **pp = &m->lib->mods; *pp; pp = &(*pp)->lib_next)
            if (*pp == m) {
                *pp = m->lib_next;
                break;
            }
    for (int i = 0; i < m->img->ptx.nentries; i++)
        if (m->funcs[i]) {
            hc_reg_del(m->funcs[i]);
            free(m->funcs[i]);
        }
    for (int i = 0; i < m->img->ptx.nvars; i++)
        hc_mem_free(m->gaddr[i]);
    hc_reg_del(m);
    image_unref(m->img);
    free(m->px_addr);
    free(m->gaddr);
    free(m->funcs);
    free(m);
}

static CUresult load_text(CUmodule *module, const char *text)
{
    HC_CHECK_INIT();
    if (!module || !text)
        return CUDA_ERROR_INVALID_VALUE;
    hc_image *img;
    CUresult rc = image_from_text(text, &img);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    rc = hc_current_ctx(&c);
    if (rc == CUDA_SUCCESS)
        rc = module_new(c, img, NULL, module);
    image_unref(img);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* JIT options: hostcuda has no log to report; write back empty logs where asked. */
static void jit_options(unsigned int n, CUjit_option *opts, void **vals)
{
    if (!opts || !vals)
        return;
    for (unsigned int i = 0; i < n; i++) {
        if (opts[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES || opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            CUjit_option buf_opt = opts[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ? CU_JIT_INFO_LOG_BUFFER
                                                                               : CU_JIT_ERROR_LOG_BUFFER;
            size_t sz = (size_t)(uintptr_t)vals[i];
            for (unsigned int j = 0; j < n; j++)
                if (opts[j] == buf_opt && vals[j] && sz > 0)
                    ((char *)vals[j])[0] = 0;
            vals[i] = (void *)(uintptr_t)0;
        }
    }
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    HC_COUNT(cuModuleLoadData);
    return load_text(module, image);
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    HC_COUNT(cuModuleLoadFatBinary);
    return load_text(module, fatCubin);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
    HC_COUNT(cuModuleLoadDataEx);
    if (numOptions && (!options || !optionValues))
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = load_text(module, image);
    if (rc == CUDA_SUCCESS)
        jit_options(numOptions, options, optionValues);
    return rc;
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
    HC_COUNT(cuModuleLoad);
    HC_CHECK_INIT();
    if (!module || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    char *text;
    CUresult rc = hc_read_file(fname, &text, NULL);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = load_text(module, text);
    free(text);
    return rc;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    HC_COUNT(cuModuleUnload);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(hmod) != HC_K_MODULE || hmod->lib) {
        rc = CUDA_ERROR_INVALID_HANDLE;
    } else {
        hc_ctx_sync(hmod->ctx);   /* kernels from it may still be queued */
        if (hc_reg_kind(hmod) == HC_K_MODULE)
            hc_module_unload_locked(hmod);
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* entry I of IMG was refused at load: say why (one hostcuda: line) and answer its CUresult */
static CUresult refusal(const hc_image *img, int i)
{
    fprintf(stderr, "hostcuda: %s\n", img->refused[i].why);
    return img->refused[i].code;
}

/* hc_mu held */
static CUresult module_function(struct CUmod_st *m, const char *name, struct CUfunc_st **out)
{
    int i = entry_index(m->img, name);
    if (i < 0)
        return CUDA_ERROR_NOT_FOUND;
    if (!m->funcs[i] && m->img->refused[i].why)
        return refusal(m->img, i);
    if (!m->funcs[i]) {
        int px = m->img->use_px[i] ? m->img->px_func[i] : -1;
        hc_kfn fn = px >= 0 ? NULL : host_kernel(m->img->ptx.entries[i].name, 0);
        if (!fn && px < 0)
            return CUDA_ERROR_NOT_FOUND;
        struct CUfunc_st *f = calloc(1, sizeof *f);
        if (!f)
            return CUDA_ERROR_OUT_OF_MEMORY;
        f->magic = HC_K_FUNC;
        f->mod = m;
        f->e = &m->img->ptx.entries[i];
        f->fn = fn;
        f->px = px;
        f->max_dyn_shared = 49152;
        hc_reg_add(f, HC_K_FUNC);
        m->funcs[i] = f;
    }
    *out = m->funcs[i];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    HC_COUNT(cuModuleGetFunction);
    HC_CHECK_INIT();
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hmod) == HC_K_MODULE ? module_function(hmod, name, hfunc) : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

static CUresult module_global(CUdeviceptr *dptr, size_t *bytes, struct CUmod_st *m, const char *name)
{
    int i = var_index(m->img, name);
    if (i < 0)
        return CUDA_ERROR_NOT_FOUND;
    if (dptr)
        *dptr = m->gaddr[i];
    if (bytes)
        *bytes = m->img->ptx.vars[i].size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule hmod, const char *name)
{
    HC_COUNT(cuModuleGetGlobal);
    HC_CHECK_INIT();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUdeviceptr d;
    size_t b;
    CUresult rc = hc_reg_kind(hmod) == HC_K_MODULE ? module_global(&d, &b, hmod, name) : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&hc_mu);
    if (rc == CUDA_SUCCESS && dptr && d > 0xffffffffu)
        return CUDA_ERROR_NOT_SUPPORTED;   /* 32-bit variant cannot hold the address */
    if (rc == CUDA_SUCCESS) {
        if (dptr)
            *dptr = (CUdeviceptr_v1)d;
        if (bytes)
            *bytes = (unsigned int)b;
    }
    return rc;
}

CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    HC_COUNT(cuModuleGetGlobal_v2);
    HC_CHECK_INIT();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hmod) == HC_K_MODULE ? module_global(dptr, bytes, hmod, name) : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* ---------------------------------------------------------------- libraries and kernels */
static CUresult library_new(const char *text, CUlibrary *out)
{
    hc_image *img;
    CUresult rc = image_from_text(text, &img);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUlib_st *l = calloc(1, sizeof *l);
    if (l)
        l->kerns = calloc((size_t)img->ptx.nentries + 1, sizeof *l->kerns);
    if (!l || !l->kerns) {
        free(l);
        image_unref(img);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    l->magic = HC_K_LIBRARY;
    l->img = img;
    pthread_mutex_lock(&hc_mu);
    hc_reg_add(l, HC_K_LIBRARY);
    pthread_mutex_unlock(&hc_mu);
    *out = l;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions)
{
    HC_COUNT(cuLibraryLoadData);
    HC_CHECK_INIT();
    if (!library || !code || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
        (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = library_new(code, library);
    if (rc == CUDA_SUCCESS)
        jit_options(numJitOptions, jitOptions, jitOptionsValues);
    return rc;
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                                       void **jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                       unsigned int numLibraryOptions)
{
    HC_COUNT(cuLibraryLoadFromFile);
    HC_CHECK_INIT();
    if (!library || !fileName || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
        (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    char *text;
    CUresult rc = hc_read_file(fileName, &text, NULL);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = library_new(text, library);
    free(text);
    if (rc == CUDA_SUCCESS)
        jit_options(numJitOptions, jitOptions, jitOptionsValues);
    return rc;
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
    HC_COUNT(cuLibraryUnload);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(library) != HC_K_LIBRARY) {
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    hc_reg_del(library);
    for (struct CUmod_st *m = library->mods; m; m = m->lib_next)
        hc_ctx_sync(m->ctx);
    while (library->mods)
        hc_module_unload_locked(library->mods);
    for (int i = 0; i < library->img->ptx.nentries; i++)
        if (library->kerns[i]) {
            hc_reg_del(library->kerns[i]);
            free(library->kerns[i]);
        }
    image_unref(library->img);
    pthread_mutex_unlock(&hc_mu);
    free(library->kerns);
    free(library);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    HC_COUNT(cuLibraryGetKernel);
    HC_CHECK_INIT();
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    int i = -1;
    if (hc_reg_kind(library) != HC_K_LIBRARY)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if ((i = entry_index(library->img, name)) < 0)
        rc = CUDA_ERROR_NOT_FOUND;
    if (rc == CUDA_SUCCESS && !library->kerns[i] && library->img->refused[i].why)
        rc = refusal(library->img, i);
    else if (rc == CUDA_SUCCESS && !library->kerns[i]) {
        int px = library->img->use_px[i] ? library->img->px_func[i] : -1;
        hc_kfn fn = px >= 0 ? NULL : host_kernel(library->img->ptx.entries[i].name, 0);
        struct CUkern_st *k = fn || px >= 0 ? calloc(1, sizeof *k) : NULL;
        if (!fn && px < 0) {
            rc = CUDA_ERROR_NOT_FOUND;
        } else if (!k) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            k->magic = HC_K_KERNEL;
            k->lib = library;
            k->e = &library->img->ptx.entries[i];
            k->fn = fn;
            k->px = px;
            k->max_dyn_shared = 49152;
            hc_reg_add(k, HC_K_KERNEL);
            library->kerns[i] = k;
        }
    }
    if (rc == CUDA_SUCCESS)
        *pKernel = library->kerns[i];
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* the library's module in the current context, created on first use (hc_mu held) */
static CUresult lib_module(struct CUlib_st *l, struct CUmod_st **out)
{
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    if (rc != CUDA_SUCCESS)
        return rc;
    for (struct CUmod_st *m = l->mods; m; m = m->lib_next)
        if (m->ctx == c) {
            *out = m;
            return CUDA_SUCCESS;
        }
    return module_new(c, l->img, l, out);
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    HC_COUNT(cuLibraryGetModule);
    HC_CHECK_INIT();
    if (!pMod)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(library) == HC_K_LIBRARY ? lib_module(library, pMod) : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    HC_COUNT(cuLibraryGetGlobal);
    HC_CHECK_INIT();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUmod_st *m;
    CUresult rc = hc_reg_kind(library) == HC_K_LIBRARY ? lib_module(library, &m) : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS)
        rc = module_global(dptr, bytes, m, name);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    HC_COUNT(cuKernelGetFunction);
    HC_CHECK_INIT();
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUmod_st *m;
    CUresult rc = hc_reg_kind(kernel) == HC_K_KERNEL ? lib_module(kernel->lib, &m) : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS)
        rc = module_function(m, kernel->e->name, pFunc);
    if (rc == CUDA_SUCCESS && kernel->max_dyn_shared > (*pFunc)->max_dyn_shared)
        (*pFunc)->max_dyn_shared = kernel->max_dyn_shared;   /* what cuKernelSetAttribute allowed */
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* ---------------------------------------------------------------- names, params, attributes */
/* Look up a CUfunction or CUkernel handle (hc_mu held). */
static CUresult callee(const void *h, hc_ptx_entry **e, hc_kfn *fn, int *max_dyn)
{
    switch (hc_reg_kind(h)) {
    case HC_K_FUNC: {
        const struct CUfunc_st *f = h;
        *e = f->e;
        if (fn) *fn = f->fn;
        if (max_dyn) *max_dyn = f->max_dyn_shared;
        return CUDA_SUCCESS;
    }
    case HC_K_KERNEL: {
        const struct CUkern_st *k = h;
        *e = k->e;
        if (fn) *fn = k->fn;
        if (max_dyn) *max_dyn = k->max_dyn_shared;
        return CUDA_SUCCESS;
    }
    default:
        return CUDA_ERROR_INVALID_HANDLE;
    }
}

/* the interpreter's view of a CUfunction or CUkernel (hc_mu held): px < 0 for a twin; *mod is
 * the module whose globals it uses (a library's module in the current context) */
static CUresult callee_px(const void *h, int *px, struct CUmod_st **mod)
{
    switch (hc_reg_kind(h)) {
    case HC_K_FUNC: {
        const struct CUfunc_st *f = h;
        *px = f->px;
        *mod = f->mod;
        return CUDA_SUCCESS;
    }
    case HC_K_KERNEL: {
        const struct CUkern_st *k = h;
        *px = k->px;
        return k->px >= 0 ? lib_module(k->lib, mod) : ((*mod = NULL), CUDA_SUCCESS);
    }
    default:
        return CUDA_ERROR_INVALID_HANDLE;
    }
}

static CUresult get_name(const char **name, const void *h, enum hc_kind want)
{
    HC_CHECK_INIT();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    hc_ptx_entry *e;
    CUresult rc = hc_reg_kind(h) == want ? callee(h, &e, NULL, NULL) : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS)
        *name = e->name;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
    HC_COUNT(cuFuncGetName);
    return get_name(name, hfunc, HC_K_FUNC);
}

CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
    HC_COUNT(cuKernelGetName);
    return get_name(name, hfunc, HC_K_KERNEL);
}

static CUresult param_info(const void *h, enum hc_kind want, size_t idx, size_t *off, size_t *size)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    hc_ptx_entry *e;
    CUresult rc = hc_reg_kind(h) == want ? callee(h, &e, NULL, NULL) : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS && idx >= (size_t)e->nparams)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        if (off)
            *off = e->params[idx].offset;
        if (size)
            *size = e->params[idx].size;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    HC_COUNT(cuFuncGetParamInfo);
    return param_info(func, HC_K_FUNC, paramIndex, paramOffset, paramSize);
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    HC_COUNT(cuKernelGetParamInfo);
    return param_info(kernel, HC_K_KERNEL, paramIndex, paramOffset, paramSize);
}

/* what the PTX says of an interpreted kernel (twins: the defaults) */
typedef struct px_facts {
    int max_threads, shared, local, regs;
    int ptx_version;              /* the PTX's .target, e.g. 75 for sm_75 (twins: 80) */
} px_facts;

static px_facts facts_of(const void *h)
{
    px_facts pf = {1024, 0, 0, 32, 80};
    int px;
    struct CUmod_st *m;
    if (callee_px(h, &px, &m) != CUDA_SUCCESS || px < 0 || !m)
        return pf;
    const ash_ptx_func *f = &m->img->px.funcs[px];
    int mt = 1;
    const int *d = f->reqntid[0] ? f->reqntid : f->maxntid;
    for (int i = 0; i < 3; i++)
        mt *= d[i] ? d[i] : 1;
    if (d[0] && mt < 1024)
        pf.max_threads = mt;
    pf.shared = (int)hc_exec_static_shared(&m->img->px, px);
    pf.local = (int)f->frame_size;
    /* NUM_REGS: ptxas decides it, the PTX cannot tell (its virtual registers are far more); 32, as for
     * twins, so occupancy calculations stay what they were */
    pf.regs = 32;
    if (m->img->px.target_sm > 0)
        pf.ptx_version = m->img->px.target_sm;
    return pf;
}

static CUresult func_attr(int *pi, CUfunction_attribute a, int max_dyn, px_facts pf)
{
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = pf.max_threads; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = pf.shared; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = pf.local; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = pf.regs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = pf.ptx_version; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;   /* the device's compute capability 9.0 */
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = max_dyn; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
    default:
        if ((int)a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX)
            return CUDA_ERROR_INVALID_VALUE;
        *pi = 0;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    HC_COUNT(cuFuncGetAttribute);
    HC_CHECK_INIT();
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    hc_ptx_entry *e;
    int md = 0;
    CUresult rc = hc_reg_kind(hfunc) == HC_K_FUNC ? callee(hfunc, &e, NULL, &md) : CUDA_ERROR_INVALID_HANDLE;
    px_facts pf = facts_of(hfunc);
    pthread_mutex_unlock(&hc_mu);
    return rc == CUDA_SUCCESS ? func_attr(pi, attrib, md, pf) : rc;
}

CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
    HC_COUNT(cuKernelGetAttribute);
    HC_CHECK_INIT();
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= hc_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&hc_mu);
    hc_ptx_entry *e;
    int md = 0;
    CUresult rc = hc_reg_kind(kernel) == HC_K_KERNEL ? callee(kernel, &e, NULL, &md) : CUDA_ERROR_INVALID_HANDLE;
    px_facts pf = facts_of(kernel);
    pthread_mutex_unlock(&hc_mu);
    return rc == CUDA_SUCCESS ? func_attr(pi, attrib, md, pf) : rc;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    HC_COUNT(cuFuncSetAttribute);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(hfunc) != HC_K_FUNC)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        rc = value < 0 || value > 232448 ? CUDA_ERROR_INVALID_VALUE : ((hfunc->max_dyn_shared = value), CUDA_SUCCESS);
    else if (attrib == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)
        rc = value < -1 || value > 100 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    else if ((int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
        rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
    HC_COUNT(cuKernelSetAttribute);
    HC_CHECK_INIT();
    if (dev < 0 || dev >= hc_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(kernel) != HC_K_KERNEL) {
        rc = CUDA_ERROR_INVALID_HANDLE;
    } else if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        if (val < 0 || val > 232448) {
            rc = CUDA_ERROR_INVALID_VALUE;
        } else {
            kernel->max_dyn_shared = val;
            /* the kernel's functions in every context follow, as the driver's do */
            for (struct CUmod_st *m = kernel->lib->mods; m; m = m->lib_next) {
                int i = entry_index(m->img, kernel->e->name);
                if (i >= 0 && m->funcs[i])
                    m->funcs[i]->max_dyn_shared = val;
            }
        }
    } else if (attrib == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) {
        rc = val < -1 || val > 100 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    } else if ((int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX) {
        rc = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    HC_COUNT(cuFuncSetCacheConfig);
    HC_CHECK_INIT();
    if ((int)config < 0 || config > CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hfunc) == HC_K_FUNC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    HC_COUNT(cuFuncGetModule);
    HC_CHECK_INIT();
    if (!hmod)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hfunc) == HC_K_FUNC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS)
        *hmod = hfunc->mod;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* ---------------------------------------------------------------- launch */
typedef struct {
    hc_kfn fn;
    hostcuda_dims dims;
    void **args;        /* nparams pointers into blob */
    unsigned char *blob;
    /* interpreted launches */
    int px;             /* function in mod's image, or -1 for a twin */
    struct CUmod_st *mod;
    struct CUctx_st *ctx;
    size_t argsize;
    int coop;
    CUdeviceptr gridbar;   /* a cooperative launch's grid-barrier workspace (device memory) */
    hc_launch_limits lim;  /* the context's limits when it was launched, its malloc heap */
} launch_payload;

/* memory mapped through the virtual-memory API (hc_vmm.c), outside the allocation table */
static void *vmm_resolve(uint64_t a, size_t n)
{
    void *rw = NULL;
    int dev;
    return hc_vmm_resolve((uintptr_t)a, n, &rw, &dev) ? rw : NULL;
}

static void run_interpreted(launch_payload *p)
{
    if (hc_ctx_sticky(p->ctx) != CUDA_SUCCESS)
        return;   /* the context is unusable after a fault, as on a GPU */
    pthread_mutex_lock(&hc_mu);
    int nr = 0;
    hc_exec_range *ranges = hc_mem_ranges(&nr);
    pthread_mutex_unlock(&hc_mu);
    if (!ranges) {
        fprintf(stderr, "hostcuda: out of host memory for a launch of %s\n", p->mod->img->px.funcs[p->px].name);
        atomic_store(&p->ctx->sticky, CUDA_ERROR_OUT_OF_MEMORY);
        return;
    }
    const ash_ptx_func *f = &p->mod->img->px.funcs[p->px];
    exec_stat *es = hc_opt.exec_stats ? stats_for(f->name) : NULL;
    hc_exec_launch L = {
        .m = &p->mod->img->px, .func = p->px,
        .grid = {p->dims.grid.x, p->dims.grid.y, p->dims.grid.z},
        .block = {p->dims.block.x, p->dims.block.y, p->dims.block.z},
        .shmem = p->dims.shared_bytes, .params = p->blob, .params_size = p->argsize,
        .var_addr = p->mod->px_addr, .ranges = ranges, .nranges = nr,
        .threads = hc_opt.exec_threads, .coop = p->coop,
        .timeout_s = hc_opt.kernel_timeout_s,
        .stats = es ? &es->st : NULL, .resolve = vmm_resolve,
        .envreg = {0, (uint32_t)((uint64_t)p->gridbar >> 32), (uint32_t)p->gridbar},
        .stack_size = p->lim.stack, .printf_fifo = p->lim.printf_fifo,
        .heap = p->lim.heap, .heap_alloc = hc_heap_alloc, .heap_free = hc_heap_free, .tex_lookup = hc_tex_lookup,
    };
    if (p->gridbar)
        memset(hc_dev_rw((uintptr_t)p->gridbar), 0, 256);
    char *out = NULL;
    size_t outlen = 0;
    L.out = &out;
    L.outlen = &outlen;
    CUresult rc = hc_exec_run(&L);
    free(ranges);
    if (out) {   /* device printf: written when the host synchronises, as a GPU does */
        pthread_mutex_lock(&hc_mu);
        struct CUctx_st *c = p->ctx;
        char *nb = realloc(c->printf_buf, c->printf_len + outlen);
        if (nb) {
            memcpy(nb + c->printf_len, out, outlen);
            c->printf_buf = nb;
            c->printf_len += outlen;
        }
        if (rc != CUDA_SUCCESS)   /* the context is lost: its output (an assert's message) goes now */
            hc_ctx_flush_printf(c);
        pthread_mutex_unlock(&hc_mu);
        free(out);
    }
    if (es && hc_opt.exec_stats == 2)
        stat_line(es);
    if (rc != CUDA_SUCCESS) {
        int zero = 0;
        atomic_compare_exchange_strong(&p->ctx->sticky, &zero, (int)rc);
    }
}

static void run_launch(hc_op *op)
{
    launch_payload *p = op->payload;
    if (p->px >= 0)
        run_interpreted(p);
    else
        p->fn(&p->dims, p->args);
}

static void fini_launch(hc_op *op)
{
    launch_payload *p = op->payload;
    if (p->gridbar) {
        pthread_mutex_lock(&hc_mu);
        hc_mem_free(p->gridbar);
        pthread_mutex_unlock(&hc_mu);
    }
    free(p->args);
    free(p->blob);
    free(p);
}

/* values of the parameters: from kernelParams, or the CU_LAUNCH_PARAM_BUFFER_POINTER of `extra` */
static CUresult gather_params(const hc_ptx_entry *e, void **params, void **extra, launch_payload *p)
{
    if (params && extra)
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *buf = NULL;
    size_t bufsize = 0;
    if (extra) {
        int have_size = 0;
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
                buf = extra[i + 1];
            } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
                if (!extra[i + 1])
                    return CUDA_ERROR_INVALID_VALUE;
                bufsize = *(size_t *)extra[i + 1];
                have_size = 1;
            } else {
                return CUDA_ERROR_INVALID_VALUE;
            }
        }
        if ((e->nparams && !buf) || (buf && !have_size) || bufsize < e->argsize)
            return CUDA_ERROR_INVALID_VALUE;
    } else if (e->nparams && !params) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    p->blob = calloc(1, e->argsize + 8);
    p->args = calloc((size_t)e->nparams + 1, sizeof *p->args);
    if (!p->blob || !p->args)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < e->nparams; i++) {
        const hc_ptx_param *pp = &e->params[i];
        unsigned char *dst = p->blob + pp->offset;
        const void *src = buf ? buf + pp->offset : params[i];
        if (!src)
            return CUDA_ERROR_INVALID_VALUE;
        memcpy(dst, src, pp->size);
        if (pp->size == 8 && p->px < 0) {   /* twins get hostcuda's read-write address */
            uint64_t v;
            memcpy(&v, dst, 8);
            void *rw = hc_dev_rw((uintptr_t)v);
            if (rw) {
                v = (uint64_t)(uintptr_t)rw;
                memcpy(dst, &v, 8);
            }
        }
        p->args[i] = dst;
    }
    return CUDA_SUCCESS;
}

/* coop: a cooperative launch (cuLaunchCooperativeKernel, CU_LAUNCH_ATTRIBUTE_COOPERATIVE): refused
 * with more CTAs than the device holds at once (hc_occupancy.c's blocks per SM x HOSTCUDA_SMS); an
 * interpreted one has all its CTAs resident, interleaved on the workers (hc_exec.c), and a grid
 * workspace in envreg 1:2, so grid-wide synchronisation (cooperative groups' grid.sync) completes */
static CUresult launch(const void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                       unsigned int by, unsigned int bz, unsigned int shmem, CUstream h, void **params,
                       void **extra, int pt, int coop)
{
    HC_CHECK_INIT();
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || bx > 1024 || by > 1024 || bz > 64 ||
        (unsigned long long)bx * by * bz > 1024 || gy > 65535 || gz > 65535 || gx > 2147483647u)
        return CUDA_ERROR_INVALID_VALUE;
    launch_payload *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&hc_mu);
    hc_ptx_entry *e;
    int max_dyn = 0;
    struct CUstream_st *s = NULL;
    CUresult rc = callee(f, &e, &p->fn, &max_dyn);
    p->px = -1;
    if (rc == CUDA_SUCCESS)
        rc = callee_px(f, &p->px, &p->mod);
    if (rc == CUDA_SUCCESS && shmem > (unsigned int)max_dyn)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && s && hc_ctx_sticky(s->ctx) != CUDA_SUCCESS)
        rc = hc_ctx_sticky(s->ctx);   /* after a fault every launch fails, as on a GPU */
    if (rc == CUDA_SUCCESS && p->px >= 0) {
        p->ctx = p->mod->ctx;
        p->argsize = e->argsize;
        p->coop = coop;
        px_facts pf = facts_of(f);
        unsigned long long per_sm = (unsigned long long)hc_occ_blocks_per_sm(pf.regs, pf.shared, (int)(bx * by * bz),
                                                                             shmem);
        if ((unsigned long long)bx * by * bz > (unsigned long long)pf.max_threads)
            rc = CUDA_ERROR_INVALID_VALUE;
        else if (coop && (unsigned long long)gx * gy * gz > per_sm * (unsigned long long)hc_device_sms())
            rc = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;   /* more CTAs than could be resident */
        else if (coop)
            rc = hc_mem_alloc(p->ctx, 256, NULL, &p->gridbar);
        if (rc == CUDA_SUCCESS && hc_ctx_sticky(p->ctx) != CUDA_SUCCESS)
            rc = hc_ctx_sticky(p->ctx);
        if (rc == CUDA_SUCCESS) {
            unsigned uses = hc_exec_uses(&p->mod->img->px, p->px);
            rc = hc_limit_for_launch(p->ctx, (uses & HC_EXEC_USES_HEAP) != 0, (uses & HC_EXEC_USES_PRINTF) != 0,
                                     &p->lim);
        }
    }
    if (rc == CUDA_SUCCESS)
        rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS)
        rc = gather_params(e, params, extra, p);
    hc_op *op = NULL;
    if (rc == CUDA_SUCCESS && !(op = hc_op_new(run_launch, fini_launch, p)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        p->dims = (hostcuda_dims){{gx, gy, gz}, {bx, by, bz}, shmem};
        hc_enqueue(s, op);
    }
    pthread_mutex_unlock(&hc_mu);
    if (rc != CUDA_SUCCESS) {
        if (p->gridbar) {
            pthread_mutex_lock(&hc_mu);
            hc_mem_free(p->gridbar);
            pthread_mutex_unlock(&hc_mu);
        }
        free(p->args);
        free(p->blob);
        free(p);
    }
    return rc;
}

/* hc_gnode.c: a kernel node is built as cuLaunchKernel builds its op, on a capturing stream of
 * its own (hc_mu not held) */
CUresult hc_launch_on(const void *f, const unsigned int dims[6], unsigned int shmem, CUstream h, void **params,
                      void **extra)
{
    return launch(f, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], shmem, h, params, extra, 0, 0);
}

int hc_op_is_launch(const hc_op *op)
{
    return op->run == run_launch;
}

/* hc_gnode.c: a kernel node's parameters as the caller gave them, for cuGraphKernelNodeGetParams:
 * one malloc'ed block, nparams pointers then the values (hc_mu held) */
CUresult hc_kernel_params_copy(const void *f, void **params, void **extra, void ***out, size_t *bytes)
{
    hc_ptx_entry *e;
    CUresult rc = callee(f, &e, NULL, NULL);
    if (rc != CUDA_SUCCESS)
        return rc;
    launch_payload p = {.px = 0};   /* no twin rewrite: the caller's values */
    rc = gather_params(e, params, extra, &p);
    size_t n = ((size_t)e->nparams + 1) * sizeof(void *) + e->argsize + 8;
    void **v = rc == CUDA_SUCCESS ? malloc(n) : NULL;
    if (rc == CUDA_SUCCESS && !v)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        unsigned char *blob = (unsigned char *)(v + e->nparams + 1);
        memcpy(blob, p.blob, e->argsize);
        for (int i = 0; i < e->nparams; i++)
            v[i] = blob + e->params[i].offset;
        v[e->nparams] = NULL;
        *out = v;
        *bytes = n;
    }
    free(p.args);
    free(p.blob);
    return rc;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    HC_COUNT(cuLaunchKernel);
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, extra, 0, 0);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra)
{
    HC_COUNT(cuLaunchKernel_ptsz);
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, extra, 1, 0);
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra, int pt)
{
    if (!c)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    if (c->numAttrs && !c->attrs)
        return CUDA_ERROR_INVALID_VALUE;
    int coop = 0;
    for (unsigned int i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
            coop = c->attrs[i].value.cooperative != 0;
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                  c->sharedMemBytes, c->hStream, params, extra, pt, coop);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    HC_COUNT(cuLaunchKernelEx);
    return launch_ex(config, f, kernelParams, extra, 0);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                       void **extra)
{
    HC_COUNT(cuLaunchKernelEx_ptsz);
    return launch_ex(config, f, kernelParams, extra, 1);
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void **kernelParams)
{
    HC_COUNT(cuLaunchCooperativeKernel);
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, NULL, 0, 1);
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                unsigned int gridDimZ, unsigned int blockDimX,
                                                unsigned int blockDimY, unsigned int blockDimZ,
                                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
    HC_COUNT(cuLaunchCooperativeKernel_ptsz);
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, NULL, 1, 1);
}
