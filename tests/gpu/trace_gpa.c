/* trace_gpa.c — a tracing libcuda.so.1 (test tool): put its directory first on LD_LIBRARY_PATH and
 * it forwards to the driver at TRACE_GPA_DRIVER (a path; default: hostcuda next to it in build/),
 * printing every cuGetProcAddress_v2 / legacy cuGetProcAddress query to stderr as
 *     gpa_v2 NAME VERSION FLAGS -> CURESULT SYMBOL      (SYMBOL: what dladdr names, '-' if none)
 * Static cudart dlopen()s libcuda.so.1, takes cuGetProcAddress from it, then asks it for the
 * resolver again: the tracer hands back ITSELF for those (and for cuGetExportTable), so it sees
 * every later query too. Used by tests/gpu/gen_cudart_queries.sh and scripts/gpu-check.sh to learn
 * the exact (name, version, flags) queries a runtime-API program makes. Single process, any thread.
 */
#include <cuda.h>
#undef cuGetProcAddress
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TG_API __attribute__((visibility("default")))
typedef CUresult (*tg_gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*tg_gpa1_fn)(const char *, void **, int, cuuint64_t);

static void *tg_real(const char *name)
{
    static void *h;
    if (h == NULL) {
        const char *path = getenv("TRACE_GPA_DRIVER");
        char buf[4096];
        if (path == NULL || *path == '\0') {
            Dl_info self;
            if (dladdr((void *)tg_real, &self) == 0 || self.dli_fname == NULL)
                return NULL;
            snprintf(buf, sizeof buf, "%s", self.dli_fname);
            char *slash = strrchr(buf, '/');
            snprintf(slash ? slash + 1 : buf, sizeof buf - (size_t)(slash ? slash + 1 - buf : 0),
                     "../../hostcuda/libcuda.so.1");
            path = buf;
        }
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            fprintf(stderr, "trace_gpa: cannot load the driver %s: %s\n", path, dlerror());
            return NULL;
        }
    }
    return dlsym(h, name);
}

TG_API CUresult cuGetProcAddress_v2(const char *s, void **p, int v, cuuint64_t f, CUdriverProcAddressQueryResult *st);
TG_API CUresult cuGetProcAddress(const char *s, void **p, int v, cuuint64_t f);
TG_API CUresult cuGetExportTable(const void **t, const CUuuid *id);

/* the tracer's own entry points replace the driver's resolver and export-table pointers */
static void tg_substitute(CUresult r, void **p, const char *sym)
{
    if (r != CUDA_SUCCESS || p == NULL || *p == NULL)
        return;
    if (strcmp(sym, "cuGetProcAddress_v2") == 0)
        *p = (void *)cuGetProcAddress_v2;
    else if (strcmp(sym, "cuGetProcAddress") == 0)
        *p = (void *)cuGetProcAddress;
    else if (strcmp(sym, "cuGetExportTable") == 0)
        *p = (void *)cuGetExportTable;
}

static const char *tg_name(void *p)
{
    Dl_info i;
    return p != NULL && dladdr(p, &i) != 0 && i.dli_sname != NULL && i.dli_saddr == p ? i.dli_sname : "-";
}

CUresult cuGetProcAddress_v2(const char *s, void **p, int v, cuuint64_t f, CUdriverProcAddressQueryResult *st)
{
    tg_gpa2_fn real = (tg_gpa2_fn)tg_real("cuGetProcAddress_v2");
    CUresult r = real ? real(s, p, v, f, st) : CUDA_ERROR_NOT_INITIALIZED;
    const char *sym = tg_name(r == CUDA_SUCCESS && p ? *p : NULL);
    fprintf(stderr, "gpa_v2 %s %d %llu -> %d %s\n", s && *s ? s : "-", v, (unsigned long long)f, (int)r, sym);
    tg_substitute(r, p, sym);
    return r;
}

CUresult cuGetProcAddress(const char *s, void **p, int v, cuuint64_t f)
{
    tg_gpa1_fn real = (tg_gpa1_fn)tg_real("cuGetProcAddress");
    CUresult r = real ? real(s, p, v, f) : CUDA_ERROR_NOT_INITIALIZED;
    const char *sym = tg_name(r == CUDA_SUCCESS && p ? *p : NULL);
    fprintf(stderr, "gpa_legacy %s %d %llu -> %d %s\n", s && *s ? s : "-", v, (unsigned long long)f, (int)r, sym);
    tg_substitute(r, p, sym);
    return r;
}

CUresult cuGetExportTable(const void **t, const CUuuid *id)
{
    CUresult (*real)(const void **, const CUuuid *) =
        (CUresult (*)(const void **, const CUuuid *))tg_real("cuGetExportTable");
    return real ? real(t, id) : CUDA_ERROR_NOT_INITIALIZED;
}

TG_API CUresult cuInit(unsigned flags)
{
    CUresult (*real)(unsigned) = (CUresult (*)(unsigned))tg_real("cuInit");
    return real ? real(flags) : CUDA_ERROR_NOT_INITIALIZED;
}

TG_API CUresult cuDriverGetVersion(int *v)
{
    CUresult (*real)(int *) = (CUresult (*)(int *))tg_real("cuDriverGetVersion");
    return real ? real(v) : CUDA_ERROR_NOT_INITIALIZED;
}
