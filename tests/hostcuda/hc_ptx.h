/* hc_ptx.h — private to hostcuda: what hostcuda reads out of PTX text (kernels and globals). */
#ifndef HC_PTX_H
#define HC_PTX_H

#include <stddef.h>
#include <stdint.h>

typedef struct hc_ptx_param {
    size_t offset, size;
} hc_ptx_param;

typedef struct hc_ptx_entry {
    char *name;             /* as in the PTX: the mangled name for C++ kernels */
    hc_ptx_param *params;
    int nparams;
    size_t argsize;         /* end of the last parameter */
} hc_ptx_entry;

typedef struct hc_ptx_var {
    char *name;
    size_t size;
    unsigned char *init;    /* size bytes, or NULL for zero-initialised */
} hc_ptx_var;

typedef struct hc_ptx_image {
    hc_ptx_entry *entries;
    int nentries;
    hc_ptx_var *vars;
    int nvars;
} hc_ptx_image;

/* 0 on success; -1 if the text is not PTX (no .version) or memory ran out. */
int hc_ptx_parse(const char *text, hc_ptx_image *img);
void hc_ptx_free(hc_ptx_image *img);

#endif /* HC_PTX_H */
