/* hcb_unimpl.c — a body for every function NVIDIA's libcublas.so.13 (hcb_api.def) or, built with
 * -DHCB_LT, libcublasLt.so.13 (hcblt_api.def) exports, so that a program linked against any part
 * of cuBLAS loads on hostcublas. Each body is weak: the implementation in hostcublas.c /
 * hostcublaslt.c overrides it at link time. A weak body prints `hostcublas: NAME is not
 * implemented` on stderr once and answers CUBLAS_STATUS_NOT_SUPPORTED (15); a legacy entry point
 * returning void only prints, one returning a number, a string or a complex answers 0 / "" / 0+0i.
 * The bodies take no parameters: the caller's arguments are ignored, which the x86-64 and AArch64
 * calling conventions allow for functions returning a scalar or a small struct in registers. This
 * file does not include the cuBLAS headers, whose prototypes these definitions would contradict.
 * Must not: pretend to succeed (no body answers CUBLAS_STATUS_SUCCESS). */
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#define HCB_NOT_SUPPORTED 15 /* CUBLAS_STATUS_NOT_SUPPORTED */

typedef struct { float x, y; } hcb_cplx_t;
typedef struct { double x, y; } hcb_zcplx_t;

static int hcb_unimplemented(const char *name, int *said)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED)) {
        char line[160];
        int n = snprintf(line, sizeof line, "hostcublas: %s is not implemented\n", name);
        if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
            (void)0;
    }
    return HCB_NOT_SUPPORTED;
}

#define HCB_TYPE_ST int
#define HCB_TYPE_VOID void
#define HCB_TYPE_INT int
#define HCB_TYPE_FLT float
#define HCB_TYPE_DBL double
#define HCB_TYPE_STR const char *
#define HCB_TYPE_SIZE size_t
#define HCB_TYPE_CPLX hcb_cplx_t
#define HCB_TYPE_ZCPLX hcb_zcplx_t
#define HCB_BODY_ST(n) { static int said; return hcb_unimplemented(#n, &said); }
#define HCB_BODY_VOID(n) { static int said; hcb_unimplemented(#n, &said); }
#define HCB_BODY_ZERO(n) { static int said; hcb_unimplemented(#n, &said); return 0; }
#define HCB_BODY_INT HCB_BODY_ZERO
#define HCB_BODY_FLT HCB_BODY_ZERO
#define HCB_BODY_DBL HCB_BODY_ZERO
#define HCB_BODY_SIZE HCB_BODY_ZERO
#define HCB_BODY_STR(n) { static int said; hcb_unimplemented(#n, &said); return ""; }
#define HCB_BODY_CPLX(n) { static int said; hcb_unimplemented(#n, &said); return (hcb_cplx_t){0, 0}; }
#define HCB_BODY_ZCPLX(n) { static int said; hcb_unimplemented(#n, &said); return (hcb_zcplx_t){0, 0}; }

#define HCB_FN(name, kind) \
    __attribute__((weak, visibility("default"))) HCB_TYPE_##kind name(void); \
    __attribute__((weak, visibility("default"))) HCB_TYPE_##kind name(void) HCB_BODY_##kind(name)
#ifdef HCB_LT
#include "hcblt_api.def"
#else
#include "hcb_api.def"
#endif
#undef HCB_FN
