/* ash_alloc.h — private to the shim: the table of live device allocations (an interval map).
 *
 * Owns: which allocation contains a pointer (base <= ptr < base + size), per-device current/peak
 * bytes, and the count of stale entries found (a missed free). Knows no CUDA: the intercept hooks
 * call it with what the driver returned. Invariant: live ranges never overlap; size > 0.
 * Threading: every function is safe from any thread at any time, including before any init (the
 * table is static, lock statically initialised), but not from a signal handler (it takes a lock);
 * lookups take a read lock and never allocate.
 * Callers: intercept/ alloc and free hooks (insert/remove), shim/sync/sync (find, for
 * `region: allocation`), the exit report (stats, snapshot), tests (reset, check).
 */
#ifndef ASH_ALLOC_H
#define ASH_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* shim/core/ash_status.h did not exist when this module was written, so the table has its own status.
 * The first four values equal ASH_OK, ASH_ERR_INVALID, ASH_ERR_NOT_FOUND, ASH_ERR_NOMEM of the
 * planned ash_status_t, so a caller may map them one to one; ASH_ALLOC_ERR_OVERLAP has no twin. */
typedef enum {
    ASH_ALLOC_OK = 0,
    ASH_ALLOC_ERR_INVALID = 1,   /* size 0, device outside 0..63, base + size wraps, bad kind */
    ASH_ALLOC_ERR_NOT_FOUND = 2, /* remove: no live allocation has that exact base; find: none holds ptr */
    ASH_ALLOC_ERR_NOMEM = 3,     /* no memory for a tree node; the table is unchanged */
    ASH_ALLOC_ERR_OVERLAP = 4,   /* insert DONE, but live entries overlapped the new range: they were
                                    stale (a free we never saw), so they were dropped and counted */
} ash_alloc_status_t;

typedef enum {
    ASH_ALLOC_KIND_DEVICE = 0,      /* cuMemAlloc */
    ASH_ALLOC_KIND_PITCH,           /* cuMemAllocPitch: size = pitch * height */
    ASH_ALLOC_KIND_MANAGED,         /* cuMemAllocManaged */
    ASH_ALLOC_KIND_ASYNC,           /* cuMemAllocAsync (stream-ordered, default pool) */
    ASH_ALLOC_KIND_POOL,            /* cuMemAllocFromPoolAsync */
    ASH_ALLOC_KIND_HOST_REGISTERED, /* cuMemHostRegister: base is the host address */
    ASH_ALLOC_KIND_MAPPED,          /* cuMemMap (VMM): one entry per mapping, its mapped extent */
    ASH_ALLOC_KIND_COUNT_
} ash_alloc_kind_t;

#define ASH_ALLOC_MAX_DEVICES 64 /* device ordinals 0..63 */

typedef struct {
    uint64_t base; /* CUdeviceptr (or host address for HOST_REGISTERED) */
    uint64_t size; /* bytes, > 0 */
    int device;    /* ordinal 0..63, as the driver sees it (the physical device after remap) */
    ash_alloc_kind_t kind;
} ash_alloc_entry_t;

/* Record [base, base + size) on `device`. Call AFTER the real allocation succeeded.
 * Returns OK, INVALID (nothing changed), NOMEM (nothing changed) or OVERLAP (inserted; the stale
 * overlapping entries were removed from the table and the stats, and ash_alloc_stale_count()
 * grew by their number; the caller should log one warning). */
ash_alloc_status_t ash_alloc_insert(uint64_t base, uint64_t size, int device, ash_alloc_kind_t kind);

/* Forget the allocation whose base is exactly `base`; copy it to *removed (may be NULL).
 * Unknown base (including a pointer inside an allocation) -> NOT_FOUND, table unchanged.
 *
 * Call BEFORE the real free (cuMemFree, cuMemFreeAsync, cuMemHostUnregister): once the driver
 * has the address back, another thread may receive it from an allocation and insert it first,
 * and a late remove would then drop that new entry. If the real free fails, put the entry back
 * with ash_alloc_insert(removed->base, removed->size, removed->device, removed->kind).
 *
 * Stream-ordered frees (cuMemFreeAsync): remove at the hook, when the free is ENQUEUED, not when
 * the stream reaches it. The application may not touch the pointer after enqueueing the free,
 * and the stream-ordered allocator may hand the same address to the next cuMemAllocAsync at once
 * (same stream, or after an event), so an entry kept until completion would be a false overlap.
 * Consequence: current bytes count what the application holds, not what the driver or a pool
 * still reserves. */
ash_alloc_status_t ash_alloc_remove(uint64_t base, ash_alloc_entry_t *removed);

/* Forget every allocation whose base lies in [base, base + size) (cuMemUnmap, cuMemAddressFree:
 * a range may hold several mappings). Copies up to `cap` of them, ascending by base, into out
 * (may be NULL when cap == 0), to put back if the real call fails; *n (may be NULL) receives how
 * many were removed. Call BEFORE the real unmap, for the reason ash_alloc_remove gives.
 * OK (possibly none removed) or INVALID (size 0 or wrapping; nothing changed). */
ash_alloc_status_t ash_alloc_remove_range(uint64_t base, uint64_t size, ash_alloc_entry_t *out, size_t cap,
                                          size_t *n);

/* Which live allocation contains ptr? OK and *entry filled (entry may be NULL), or NOT_FOUND.
 * O(log n), read lock only, no allocation: usable on the launch path. */
ash_alloc_status_t ash_alloc_find(uint64_t ptr, ash_alloc_entry_t *entry);

/* Per-device figures for device 0..63 (any out pointer may be NULL): bytes live now, the highest
 * value `current` reached since start/reset, live allocation count. INVALID for other devices. */
ash_alloc_status_t ash_alloc_stats(int device, uint64_t *current, uint64_t *peak, uint64_t *count);

/* Number of stale entries replaced by overlapping inserts since start/reset (warning counter). */
uint64_t ash_alloc_stale_count(void);

/* Copy up to `cap` live entries, ascending by base, into out (may be NULL when cap == 0); *total
 * (may be NULL) receives the number of live entries. Returns how many were copied.
 * For the exit report (leaks) and tests; takes the read lock for the whole walk. */
size_t ash_alloc_snapshot(ash_alloc_entry_t *out, size_t cap, size_t *total);

/* Tests only: drop every entry and zero all stats and counters. Not for use while other threads
 * use the table's results (they stay valid copies, but the table forgets them). */
void ash_alloc_reset(void);

/* Tests only: verify the tree (order, balance, heights), that ranges do not overlap and that the
 * per-device stats match the entries. OK or INVALID. */
ash_alloc_status_t ash_alloc_check(void);

const char *ash_alloc_status_name(ash_alloc_status_t status);
const char *ash_alloc_kind_name(ash_alloc_kind_t kind);

#endif /* ASH_ALLOC_H */
