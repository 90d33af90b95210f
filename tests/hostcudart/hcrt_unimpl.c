/* hcrt_unimpl.c — a body for every runtime symbol in hcrt_api.def, so that a program built
 * against any part of the CUDA 13 runtime loads. Each body is weak: a real implementation
 * elsewhere in the library overrides it at link time. A weak body prints
 * `hostcudart: NAME is not implemented` once and answers cudaErrorNotSupported (a `void` entry
 * point just prints; one that returns a char or a pointer answers 0/NULL). The bodies take no
 * parameters: the caller's arguments are ignored, which the x86-64 and AArch64 calling conventions
 * allow for functions returning a scalar in a register. This file does not include the runtime's
 * headers, whose prototypes these definitions would contradict.
 * Must not: pretend to succeed (every body answers cudaErrorNotSupported or 0/NULL). */
#include <stdint.h>

typedef int hcrt_err_t;
hcrt_err_t hcrt_unimplemented(const char *name, int *said);

#define HCRT_BODY_ERR(n) { static int said; return hcrt_unimplemented(#n, &said); }
#define HCRT_BODY_STR(n) { static int said; hcrt_unimplemented(#n, &said); return ""; }
#define HCRT_BODY_VOID(n) { static int said; hcrt_unimplemented(#n, &said); }
#define HCRT_BODY_CHAR(n) { static int said; hcrt_unimplemented(#n, &said); return 0; }
#define HCRT_BODY_OTHER(n) { static int said; hcrt_unimplemented(#n, &said); return 0; }
#define HCRT_TYPE_ERR hcrt_err_t
#define HCRT_TYPE_STR const char *
#define HCRT_TYPE_VOID void
#define HCRT_TYPE_CHAR char
#define HCRT_TYPE_OTHER uintptr_t

#define HCRT_FN(name, kind) \
    __attribute__((weak, visibility("default"))) HCRT_TYPE_##kind name(void); \
    __attribute__((weak, visibility("default"))) HCRT_TYPE_##kind name(void) HCRT_BODY_##kind(name)
#include "hcrt_api.def"
#undef HCRT_FN
