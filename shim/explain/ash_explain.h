/* ash_explain.h — private to the shim: explain mode (ACCELSHIM_EXPLAIN=FILE, `accelerate-run
 * explain`): what the program's kernels do with their arguments, and what its step looks like.
 *
 * Folder shim/explain/ owns: explain mode: the images the program loads (their PTX, read with
 * the reader of `shim/ptx/` and its kernel facts), every launch with the allocations its pointer
 * arguments point into, and at exit the step that repeats and its reading (parameters,
 * gradients, optimizer state, the sync point, the broadcast point), written to ACCELSHIM_EXPLAIN
 *
 * Why a folder of its own, not an observer: it needs each launch's arguments and each loaded
 * image, which the observer interface does not carry, and it runs with no policy at all.
 * intercept/ calls it (three functions below) only while ash_explain_on; it calls nothing of the
 * engine (shim/sync/) and nothing of intercept/.
 * Threading: every entry point may be called from any thread; one mutex guards the recorded
 * images and launches; the exit step runs once from the exit sequence.
 */
#ifndef ASH_EXPLAIN_H
#define ASH_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

/* Nonzero when ACCELSHIM_EXPLAIN is set: launches take intercept's slow path and are recorded.
 * Set once by ash_explain_init (shim init), read by intercept/ without a lock. */
extern int ash_explain_on;

/* shim init, after the options: reads ACCELSHIM_EXPLAIN, registers the exit step */
void ash_explain_init(void);

/* A successful image load: api is the call's name; image the data it was given (PTX text, a
 * fatbin, a fatbin wrapper, an ELF cubin) or NULL with path the file it named. */
void ash_explain_image(const char *api, const void *image, const char *path);

/* A kernel launch (before the real launch): the kernel's mangled and demangled names, the
 * driver's parameter layout when known (nparams -1: unknown), and the launch's kernelParams or
 * extra (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE). */
void ash_explain_launch(const char *name, const char *demangled, int nparams, const uint32_t *offsets,
                        const uint32_t *sizes, void **params, void **extra);

/* A memset of [ptr, ptr + bytes) (writes the allocation, reads nothing) */
void ash_explain_memset(const char *api, uint64_t ptr, size_t bytes);

#endif /* ASH_EXPLAIN_H */
