/* hc_procaddr.c — hostcuda cuGetProcAddress (4-argument legacy and _v2), cuGetExportTable, and the
 * test-only call counters.
 *
 * HOSTCUDA_UNEXPORTED_PROCS=1: cuGetProcAddress hands out, instead of the exported symbol, a
 * hidden thunk (one per hc_api.def row, a single jump to that symbol) — an entry point dladdr
 * cannot name, as a driver that returns internal functions would. Calls through it still count.
 * cuGetExportTable refuses every table (CUDA_ERROR_NOT_SUPPORTED) after printing its UUID on
 * stderr: hostcuda answers no private table (no integrity check, no runtime callbacks).
 *
 * The map comes from hc_api.def, whose rows were derived from cudaTypedefs.h: a lookup of base
 * name B at version V returns the default-stream variant of B with the highest PFN version <= V;
 * with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM it returns the _ptds/_ptsz twin when B has
 * one at or below V. CU_GET_PROC_ADDRESS_DEFAULT behaves like LEGACY_STREAM (the per-thread choice
 * is made by cuda.h's inline wrapper at compile time), unless CUDA_API_PER_THREAD_DEFAULT_STREAM=1
 * is set in the environment. Works before cuInit. Threading: read-only table; atomic counters.
 * Must not: answer a private export table (cuGetExportTable refuses every one); return a variant
 * newer than the requested PFN version; need cuInit.
 */
#include "hc_internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { PLAIN, PTDS, PTSZ };

typedef struct {
    const char *name, *base;
    int version, kind;
    void *fn, *thunk;
} hc_api_row;

/* hc_thunk_<name>: a hidden function that jumps to <name> (bound inside hostcuda: -Bsymbolic). */
#if defined(__x86_64__)
#define HC_THUNK_BODY(name) "jmp " #name "@PLT\n"
#define HC_THUNK_TYPE "@function"
#elif defined(__aarch64__)
#define HC_THUNK_BODY(name) "b " #name "\n"
#define HC_THUNK_TYPE "%function"
#else
#error "hostcuda thunks: add this architecture's tail jump"
#endif
#define X(name, base, ver, kind)                                                               \
    __asm__(".text\n.p2align 4\n.globl hc_thunk_" #name "\n.hidden hc_thunk_" #name "\n"       \
            ".type hc_thunk_" #name "," HC_THUNK_TYPE "\nhc_thunk_" #name ":\n" HC_THUNK_BODY(name) \
            ".size hc_thunk_" #name ", .-hc_thunk_" #name "\n");                               \
    extern char hc_thunk_##name[] HC_INTERNAL;
#include "hc_api.def"
#undef X

static const hc_api_row rows[HC_API_COUNT] = {
#define X(name, base, ver, kind) {#name, #base, ver, kind, (void *)&name, (void *)hc_thunk_##name},
#include "hc_api.def"
#undef X
};

static CUresult proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
                     CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    const cuuint64_t legacy = CU_GET_PROC_ADDRESS_LEGACY_STREAM, ptds = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if ((flags & ~(legacy | ptds)) || (flags & legacy && flags & ptds) || version > CUDA_VERSION) {
        *pfn = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    hc_options_load();
    int per_thread = (flags & ptds) || (flags == CU_GET_PROC_ADDRESS_DEFAULT && hc_opt.ptds_default);
    const hc_api_row *plain = NULL, *pt = NULL;
    int known = 0;
    for (int i = 0; i < HC_API_COUNT; i++) {
        const hc_api_row *r = &rows[i];
        if (strcmp(r->base, symbol))
            continue;
        known = 1;
        if (r->version > version)
            continue;
        const hc_api_row **slot = r->kind == PLAIN ? &plain : &pt;
        if (!*slot || (*slot)->version < r->version)
            *slot = r;
    }
    const hc_api_row *hit = per_thread && pt ? pt : plain;
    *pfn = hit ? (hc_opt.unexported_procs ? hit->thunk : hit->fn) : NULL;
    if (status)
        *status = hit ? CU_GET_PROC_ADDRESS_SUCCESS
                      : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return hit ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    HC_COUNT(cuGetProcAddress);
    return proc(symbol, pfn, cudaVersion, flags, NULL);
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus)
{
    HC_COUNT(cuGetProcAddress_v2);
    return proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/* hostcuda has no private export tables and never will answer one (they include the check that
 * authenticates a driver to NVIDIA's runtime): every request is printed, then refused. */
CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    HC_COUNT(cuGetExportTable);
    if (!ppExportTable || !pExportTableId)
        return CUDA_ERROR_INVALID_VALUE;
    *ppExportTable = NULL;
    char line[128];
    const unsigned char *u = (const unsigned char *)pExportTableId->bytes;
    int n = snprintf(line, sizeof line,
                     "hostcuda: cuGetExportTable %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x: "
                     "refused (no private tables)\n",
                     u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    if (n > 0)
        (void)!write(2, line, (size_t)n);
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---------------------------------------------------------------- test-only counters */
__attribute__((visibility("default"))) unsigned long long hostcuda_call_count(const char *exported_symbol)
{
    if (!exported_symbol)
        return 0;
    for (int i = 0; i < HC_API_COUNT; i++)
        if (!strcmp(rows[i].name, exported_symbol))
            return atomic_load_explicit(&hc_calls[i], memory_order_relaxed);
    return 0;
}

__attribute__((visibility("default"))) void hostcuda_reset_call_counts(void)
{
    for (int i = 0; i < HC_API_COUNT; i++)
        atomic_store_explicit(&hc_calls[i], 0, memory_order_relaxed);
}
