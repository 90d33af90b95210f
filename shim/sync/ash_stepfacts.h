/* ash_stepfacts.h — private to shim/sync/: what the step watch (unfired.c) knows of a kernel's
 * pointer arguments, from the PTX of the images the program loaded while the watch is on (read
 * with shim/core/image.c, parsed and analysed with shim/ptx/: per parameter read / written /
 * atomic). A kernel found in no readable image (SASS only, PTX the reader refuses), or one that
 * writes through an address its facts do not follow (a pointer loaded from memory), has no facts.
 * Threading: images and lookups under one mutex; a returned kernel record is immutable and never
 * freed. Callers: unfired.c, only while the step watch is on.
 */
#ifndef ASH_STEPFACTS_H
#define ASH_STEPFACTS_H

#include <stdint.h>

#define ASH_SF_READ 1u  /* the kernel reads memory through this parameter */
#define ASH_SF_WRITE 2u /* it writes (or atomically updates) memory through it */

typedef struct ash_stepfacts_kernel {
    int nparams;
    const uint32_t *offs, *sizes; /* the PTX's parameter layout */
    const unsigned char *acc;     /* per parameter: ASH_SF_READ | ASH_SF_WRITE; 0 = no access */
} ash_stepfacts_kernel_t;

/* An image the program loaded (the image, or the file's path): its PTX is read and analysed now;
 * one without PTX, or whose PTX does not parse, is logged (debug) and adds nothing. */
void ash_stepfacts_image(const char *api, const void *image, const char *path);
/* The facts of the .entry NAME (mangled) in the images read so far (the latest first); NULL when
 * none has it, when it writes through an address its facts do not follow, or without memory. */
const ash_stepfacts_kernel_t *ash_stepfacts_find(const char *name);

#endif /* ASH_STEPFACTS_H */
