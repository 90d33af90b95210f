/* ash_unfired.h — private to the shim: rules that never fired, and the job's verdict at exit.
 *
 * Owns: which policy rules fired (matched a launched kernel), the distinct kernel names seen
 * (for "nearest names" under a rule that never fired), the policy's origin line at init, and
 * the exit verdict: a job of more than one rank in which no gradient rule fired (or that runs
 * without a policy) ends with ASH_EXIT_UNSYNCED unless sync is optional (policy `sync:
 * optional` or ACCELSHIM_SYNC=optional). The verdict also applies the parameter digest's
 * (shim/digest.c). Threading: seen/fire from any thread (a mutex; atomics); init and the exit
 * handler run once. Callers: lifecycle.c (init), sync.c (matcher, prepare, fatal path),
 * intercept's launch, copy, memset and image load hooks (the step watch).
 */
#ifndef ASH_UNFIRED_H
#define ASH_UNFIRED_H

#include <stdint.h>

#include "ash_fatal.h" /* ASH_EXIT_UNSYNCED, ASH_EXIT_PARAMS_DIFFER */
#include "ash_policy.h"
#include "ash_sync.h" /* ash_kernel_info_t */

#include <stdatomic.h>
#include <stddef.h>

/* Exit statuses of the verdict (next to 3 mismatch, 4 watchdog, 5 NaN, 6 capture stop). */

/* After the policy is loaded: log where it came from, warn about a policy without rules or a
 * multi-rank job without one; register the exit verdict (atexit, so it runs after the other
 * exit handlers). Ends the process (exit 2) on a malformed ACCELSHIM_SYNC. */
void ash_unfired_init(void);
/* A distinct kernel the matcher was asked about: KERNEL (its ash_kernel_info_t, the key
 * ash_unfired_launch is given), mangled and demangled name (either may be NULL). */
void ash_unfired_seen(const void *kernel, const char *name, const char *demangled);
/* The step watch (sync required, >1 rank, gradient rules, ACCELSHIM_SYNC_WATCH_STEPS > 0): until
 * a gradient rule fires, every launch (kernel id) and host read of device memory (a copy hook's
 * name) is a token; once a block of tokens that holds a host read has repeated (the program's
 * step, seen ACCELSHIM_SYNC_WATCH_STEPS times, default 2) and changes persistent state, or
 * ACCELSHIM_SYNC_WATCH_LAUNCHES launches went by (default 100000), every rank names the unfired
 * gradient rules with their nearest kernels and stops, exit 7. A repeated block changes
 * persistent state when some allocation is read in it (by a launch or a device-to-device copy)
 * before it is written in it, and then written in it: which pointer arguments a kernel reads and
 * writes comes from its PTX (ash_stepfacts.h), memsets and copies into device memory are writes.
 * A block whose every launch has facts and that changes no persistent state (an evaluation batch,
 * a gradient-accumulation micro-step) is not a step; with a launch without facts and no
 * persistent write seen, a repeated block is a step (no evidence either way).
 * ash_unfired_watch_on: 1 while it watches; the launch hooks then take their slow path and call
 * ash_unfired_launch (after the sync point's own prepare) with the launch's arguments, the copy
 * hooks ash_unfired_copy, the memset hooks ash_unfired_memset, the image load hooks
 * ash_unfired_image (after a successful load); 0 again once a gradient rule fired (the fast path
 * is back, and nothing more is read). */
extern _Atomic int ash_unfired_watch_on;
void ash_unfired_launch(const ash_kernel_info_t *kernel, void **params, void **extra);
/* An image the program loaded (the image, or its file's path): its kernels' facts. */
void ash_unfired_image(const char *api, const void *image, const char *path);
/* A memset of device memory at dst: a write. */
void ash_unfired_memset(uint64_t dst);
/* api: the copy hook's name; dst, src: its first two arguments. A copy is a host read when it
 * goes device -> host: the DtoH forms, and the generic cuMemcpy[Async] forms (unified
 * addressing, as a runtime calls them for every direction) when src lies in a device allocation
 * of the table and dst does not; a copy into device memory writes dst (and a device-to-device
 * one reads src). */
void ash_unfired_copy(const char *api, uint64_t dst, uint64_t src);
/* 1 when the job, as it stands, ends with exit 7 (the digest check words its line by it). */
int ash_unfired_will_fail(void);
/* These rules matched a kernel that is being launched. */
void ash_unfired_fire(const ash_policy_rule_t *const *rules, size_t n);
/* A fatal exit is under way: the verdict keeps out of it (the process keeps its own status). */
void ash_unfired_fatal(void);

#endif /* ASH_UNFIRED_H */
