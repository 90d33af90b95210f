/* hc_link.c — the JIT linker (cuLinkCreate/AddData/AddFile/Complete/Destroy) over PTX.
 * Device code compiled relocatable (nvcc -rdc=true, CMake's CUDA_SEPARABLE_COMPILATION) must be
 * linked before it loads: a runtime hands each translation unit's fatbin to these calls. A link
 * state collects PTX texts (CU_JIT_INPUT_PTX, or the PTX entry of a CU_JIT_INPUT_FATBINARY, the
 * same entry cuModuleLoadData would take); cuLinkComplete parses and links them with the PTX
 * reader (ash_ptx_parse_units: each unit's internal names its own, declarations resolved to
 * another unit's .visible or .weak definition) and answers an image in hostcuda's own format —
 * HC_LINK_MAGIC, the unit count, then the NUL-terminated texts — which cuModuleLoadData,
 * cuModuleLoadDataEx and cuLibraryLoadData load (hc_module.c). As the Driver API documents, the
 * image lives until cuLinkDestroy. Link errors (a unit that does not parse, an undefined variable,
 * a name defined .visible twice) are CUDA_ERROR_INVALID_PTX with the reason in the
 * CU_JIT_ERROR_LOG_BUFFER the state was created with, and on stderr.
 * Cubins, host objects and libraries cannot be linked (hostcuda runs PTX only):
 * CUDA_ERROR_NOT_SUPPORTED, naming the input.
 * Threading: a link state is used by one thread at a time (the Driver API's rule); the states
 * are registered under hc_mu so that a stale or foreign handle is refused, never dereferenced.
 * Must not: keep a pointer into the caller's data after cuLinkAddData returns (texts are copied),
 * or hand back an image that does not load.
 */
#include "hc_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../shim/ptx/ash_ptx.h"

struct CUlinkState_st {
    uint32_t magic;   /* HC_K_LINK */
    char **texts;
    int n, cap;
    char *err_buf;    /* CU_JIT_ERROR_LOG_BUFFER of cuLinkCreate, or NULL */
    size_t err_cap;
    char *image;      /* cuLinkComplete's result, kept until cuLinkDestroy */
    size_t image_size;
};

static CUresult link_state(CUlinkState s)
{
    pthread_mutex_lock(&hc_mu);
    enum hc_kind k = hc_reg_kind(s);
    pthread_mutex_unlock(&hc_mu);
    return s != NULL && k == HC_K_LINK ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* the reason into the state's error log and on stderr */
static CUresult link_fail(struct CUlinkState_st *s, CUresult rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static CUresult link_fail(struct CUlinkState_st *s, CUresult rc, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "hostcuda: cuLink: %s\n", msg);
    if (s->err_buf && s->err_cap)
        snprintf(s->err_buf, s->err_cap, "%s", msg);
    return rc;
}

CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                 CUlinkState *stateOut)
{
    HC_COUNT(cuLinkCreate_v2);
    HC_CHECK_INIT();
    if (!stateOut || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUlinkState_st *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = HC_K_LINK;
    for (unsigned int i = 0; i < numOptions; i++) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
            s->err_buf = optionValues[i];
        else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            s->err_cap = (size_t)(uintptr_t)optionValues[i];
        else if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
            optionValues[i] = (void *)(uintptr_t)0;   /* nothing to say: an empty info log */
    }
    for (unsigned int i = 0; i < numOptions; i++)
        if (options[i] == CU_JIT_INFO_LOG_BUFFER && optionValues[i])
            for (unsigned int j = 0; j < numOptions; j++)
                if (options[j] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
                    ((char *)optionValues[i])[0] = 0;
    if (s->err_buf && s->err_cap)
        s->err_buf[0] = 0;
    pthread_mutex_lock(&hc_mu);
    hc_reg_add(s, HC_K_LINK);
    pthread_mutex_unlock(&hc_mu);
    *stateOut = s;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                              CUlinkState *stateOut)
{
    HC_COUNT(cuLinkCreate);
    return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

static const char *input_kind(CUjitInputType t)
{
    switch (t) {
    case CU_JIT_INPUT_CUBIN: return "a cubin";
    case CU_JIT_INPUT_PTX: return "PTX";
    case CU_JIT_INPUT_FATBINARY: return "a fatbin";
    case CU_JIT_INPUT_OBJECT: return "a host object";
    case CU_JIT_INPUT_LIBRARY: return "a library";
    default: return "an input of unknown type";
    }
}

/* one input's PTX text, malloc'ed */
static CUresult add_text(struct CUlinkState_st *s, CUjitInputType type, const void *data, size_t size,
                         const char *name)
{
    char *text = NULL;
    if (type == CU_JIT_INPUT_PTX) {
        size_t n = strnlen(data, size);
        if (!(text = malloc(n + 1)))
            return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(text, data, n);
        text[n] = 0;
    } else if (type == CU_JIT_INPUT_FATBINARY) {
        if (hc_fatbin_kind(data) != 1)
            return link_fail(s, CUDA_ERROR_INVALID_IMAGE, "%s: not a fatbin", name ? name : "(unnamed input)");
        CUresult rc = hc_fatbin_ptx(data, &text);
        if (rc != CUDA_SUCCESS)
            return link_fail(s, rc, "%s: no PTX to link in this fatbin", name ? name : "(unnamed input)");
    } else if (type == CU_JIT_INPUT_CUBIN || type == CU_JIT_INPUT_OBJECT || type == CU_JIT_INPUT_LIBRARY) {
        return link_fail(s, CUDA_ERROR_NOT_SUPPORTED, "%s: %s cannot be linked: hostcuda links PTX only (PTX, or "
                         "a fatbin with a PTX entry)", name ? name : "(unnamed input)", input_kind(type));
    } else {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        char **nt = realloc(s->texts, (size_t)cap * sizeof *nt);
        if (!nt) {
            free(text);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        s->texts = nt;
        s->cap = cap;
    }
    s->texts[s->n++] = text;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                                  unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    HC_COUNT(cuLinkAddData_v2);
    HC_CHECK_INIT();
    (void)numOptions, (void)options, (void)optionValues;
    CUresult rc = link_state(state);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!data || !size)
        return CUDA_ERROR_INVALID_VALUE;
    if (state->image)
        return CUDA_ERROR_INVALID_VALUE;   /* completed already */
    return add_text(state, type, data, size, name);
}

CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                               unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    HC_COUNT(cuLinkAddData);
    return cuLinkAddData_v2(state, type, data, size, name, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                                  CUjit_option *options, void **optionValues)
{
    HC_COUNT(cuLinkAddFile_v2);
    HC_CHECK_INIT();
    (void)numOptions, (void)options, (void)optionValues;
    CUresult rc = link_state(state);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!path)
        return CUDA_ERROR_INVALID_VALUE;
    char *buf;
    size_t len;
    rc = hc_read_file(path, &buf, &len);
    if (rc != CUDA_SUCCESS)
        return rc == CUDA_ERROR_FILE_NOT_FOUND ? link_fail(state, rc, "%s: cannot open", path) : rc;
    rc = len ? add_text(state, type, buf, len, path) : link_fail(state, CUDA_ERROR_INVALID_IMAGE, "%s: empty", path);
    free(buf);
    return rc;
}

CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                               CUjit_option *options, void **optionValues)
{
    HC_COUNT(cuLinkAddFile);
    return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    HC_COUNT(cuLinkComplete);
    HC_CHECK_INIT();
    CUresult rc = link_state(state);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!cubinOut || !sizeOut)
        return CUDA_ERROR_INVALID_VALUE;
    if (!state->image) {
        if (state->n == 0)
            return link_fail(state, CUDA_ERROR_INVALID_VALUE, "nothing to link (no cuLinkAddData / cuLinkAddFile)");
        /* the link itself: what a load would find wrong is found here, as nvlink would */
        ash_ptx_module m;
        char err[512];
        if (ash_ptx_parse_units((const char *const *)state->texts, state->n, "ptx", &m, err, sizeof err) != 0)
            return link_fail(state, CUDA_ERROR_INVALID_PTX, "%s", err);
        ash_ptx_free(&m);
        size_t size = HC_LINK_HEADER;
        for (int i = 0; i < state->n; i++)
            size += strlen(state->texts[i]) + 1;
        if (!(state->image = malloc(size)))
            return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(state->image, HC_LINK_MAGIC, 8);
        uint32_t n = (uint32_t)state->n;
        memcpy(state->image + 8, &n, 4);
        memset(state->image + 12, 0, HC_LINK_HEADER - 12);
        size_t at = HC_LINK_HEADER;
        for (int i = 0; i < state->n; i++) {
            size_t len = strlen(state->texts[i]) + 1;
            memcpy(state->image + at, state->texts[i], len);
            at += len;
        }
        state->image_size = size;
    }
    *cubinOut = state->image;
    *sizeOut = state->image_size;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
    HC_COUNT(cuLinkDestroy);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    if (state == NULL || hc_reg_kind(state) != HC_K_LINK) {
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    hc_reg_del(state);
    pthread_mutex_unlock(&hc_mu);
    for (int i = 0; i < state->n; i++)
        free(state->texts[i]);
    free(state->texts);
    free(state->image);
    free(state);
    return CUDA_SUCCESS;
}

int hc_link_units(const void *image, const char ***texts)
{
    const char *p = image;
    if (strncmp(p, HC_LINK_MAGIC, 8)) /* stops at a short text's NUL */
        return 0;
    uint32_t n;
    memcpy(&n, p + 8, 4);
    if (n == 0 || n > 1u << 20)
        return -1;
    const char **t = malloc(n * sizeof *t);
    if (!t)
        return -1;
    const char *at = p + HC_LINK_HEADER;
    for (uint32_t i = 0; i < n; i++) {
        t[i] = at;
        at += strlen(at) + 1;
    }
    *texts = t;
    return (int)n;
}
