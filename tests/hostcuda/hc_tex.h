/* hc_tex.h — private to hostcuda: what a texture or surface object is, shared by the driver side
 * that makes them (hc_array.c: CUDA arrays, cuTexObjectCreate, cuSurfObjectCreate) and the
 * interpreter that samples them (hc_exec_tex.c: tex, tld4, txq, suld, sust, suq).
 * A view is a copy: the interpreter asks for one per handle (hc_tex_lookup) and reads texels from
 * its `data` (host memory: an array's own buffer, or device memory's read-write view).
 * Threading: the object table has its own lock; a view, once copied, is the caller's.
 */
#ifndef HC_TEX_H
#define HC_TEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct hc_tex_view {
    char *data;              /* first texel (level 0, layer 0) */
    size_t pitch, slice;     /* bytes per row, bytes per 2D slice (a 3D depth slice or a layer) */
    unsigned w, h, d;        /* texels; h = d = 1 where the geometry has none */
    unsigned layers;         /* a layered array: its layers (else 0) */
    int fmt;                 /* CUarray_format */
    int nch, chsize;         /* channels, bytes per channel */
    int dims;                /* 1, 2 or 3 */
    int linear_res;          /* a LINEAR resource (tex1Dfetch): out-of-range reads give 0 */
    /* sampler (textures) */
    int addr[3];             /* CUaddress_mode per dimension */
    int filter;              /* CU_TR_FILTER_MODE_POINT / _LINEAR */
    int normalized;          /* CU_TRSF_NORMALIZED_COORDINATES */
    int read_int;            /* CU_TRSF_READ_AS_INTEGER, or a 32-bit or float format: element type */
    float border[4];
} hc_tex_view;

/* 0 and *out filled if h is a live texture (surf 0) or surface (surf 1) object, else -1 */
int hc_tex_lookup(uint64_t h, int surf, hc_tex_view *out);

#endif /* HC_TEX_H */
