/* ash_kernels.h — private to intercept/: the kernel cache, CUfunction/CUkernel handle -> what the
 * sync engine needs to know (ash_kernel_info_t: names, parameter sizes, matched rules).
 *
 * Read path (every launch): ash_kernel_lookup, lock-free — one acquire load of the table, a
 * multiplicative hash, an open-addressing probe of acquire-loaded entry pointers. Entries are
 * immutable once published (except the relaxed launch counter) and never freed; an entry is
 * replaced, not edited, when a handle is relearned. Writes (first launch of a handle, names
 * recorded by cuModuleGetFunction / cuLibraryGetKernel / cuKernelGetFunction) take one mutex;
 * the table doubles at half load, and old tables are kept (readers may still probe them).
 */
#ifndef ASH_KERNELS_H
#define ASH_KERNELS_H

#include "ash_sync.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ash_kentry {
    ash_kernel_info_t info;            /* what the sync engine sees */
    unsigned char slow;                /* 1: not yet learned, or info.rules != NULL */
    unsigned char learned;             /* names and params asked from the driver */
    _Atomic unsigned long long launches; /* relaxed load+store: approximate under races */
} ash_kentry_t;

typedef struct {
    unsigned shift;                    /* 64 - log2(capacity) */
    size_t mask;                       /* capacity - 1 */
    _Atomic(ash_kentry_t *) slots[];
} ash_ktable_t;

extern _Atomic(ash_ktable_t *) ash_ktable;

static inline size_t ash_kernel_hash(const void *h, unsigned shift)
{
    return (size_t)(((uint64_t)(uintptr_t)h * 0x9E3779B97F4A7C15ull) >> shift);
}

static inline ash_kentry_t *ash_kernel_lookup(const void *h)
{
    ash_ktable_t *t = atomic_load_explicit(&ash_ktable, memory_order_acquire);
    size_t i = ash_kernel_hash(h, t->shift);
    for (;;) {
        ash_kentry_t *e = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (e == NULL || e->info.handle == h)
            return e;
        i = (i + 1) & t->mask;
    }
}

static inline void ash_kernel_count(ash_kentry_t *e)
{
    atomic_store_explicit(&e->launches, atomic_load_explicit(&e->launches, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

void ash_kernels_init(void); /* from the hook init: matcher, exit reporter */
/* The slow path of a launch: learn h (first launch), returns its entry; NULL only without memory. */
ash_kentry_t *ash_kernel_learn(const void *h);
/* A name hook saw handle h get name (is_kernel: 1 CUkernel, 0 CUfunction). */
void ash_kernel_note(const void *h, const char *name, int is_kernel);
/* The recorded or learned name of h, or NULL. */
const char *ash_kernel_name(const void *h);

#endif /* ASH_KERNELS_H */
