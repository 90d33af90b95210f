/* ash_digest.h — private to the shim: do the ranks end with the same parameters?
 *
 * Owns: the parameter buffers the broadcast rules synchronised (pointer, bytes, stream, noted
 * when the rule fires), a 64-bit xxHash3 digest of each taken just before the program frees it
 * (or at exit if it is still live), and one small exchange at exit (ash_coll_fingerprint) that
 * compares the ranks' combined digests with rank 0's. A difference is an error naming the first
 * differing rank; the exit verdict (shim/unfired.c) then ends the process with status 8.
 * Threading: note/before_free from any thread (a mutex); compare once, from the communicator's
 * atexit close. Callers: sync.c (note, compare), intercept/hooks_mem.c (before_free), unfired.c.
 */
#ifndef ASH_DIGEST_H
#define ASH_DIGEST_H

#include "ash_coll.h"

#include <cuda.h>
#include <stddef.h>

/* A parameters rule broadcast BYTES at PTR on stream S (DRV: the real driver, lives forever). */
void ash_digest_note(const ash_coll_driver_t *drv, CUdeviceptr ptr, size_t bytes, CUstream s);
/* The program is about to free PTR: digest it now if it is a noted buffer. Cheap when not. */
void ash_digest_before_free(CUdeviceptr ptr);
/* At exit, before the communicator closes: digest what is left, exchange, compare, report. */
void ash_digest_compare(ash_coll_t *c);
/* 1 when the ranks' parameters differed (the error has been printed). */
int ash_digest_failed(void);

#endif /* ASH_DIGEST_H */
