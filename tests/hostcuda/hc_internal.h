/* hc_internal.h — private to hostcuda (not for tests: they use hostcuda.h).
 *
 * hostcuda is a CUDA 13 Driver API on host memory. This header owns the shared state: devices
 * and their memory arenas, contexts, streams (queues run by worker threads), marks (completion
 * flags that ops, events and cross-stream waits share), handle registry and call counters.
 * Threading: one global mutex (hc_mu) guards every mutable structure below; one condition
 * variable (hc_cv) is broadcast whenever an op completes or a queue changes. Arena bases and
 * sizes are written once at cuInit and read without the lock afterwards.
 * Every exported function counts itself with HC_COUNT(name) first (see hc_api.def).
 */
#ifndef HC_INTERNAL_H
#define HC_INTERNAL_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ash_kernel.h"

/* ---- call counters, driven by hc_api.def ---- */
enum hc_api_idx {
#define X(name, base, ver, kind) HC_IDX_##name,
#include "hc_api.def"
#undef X
    HC_API_COUNT
};
extern _Atomic unsigned long long hc_calls[HC_API_COUNT];
#define HC_COUNT(name) atomic_fetch_add_explicit(&hc_calls[HC_IDX_##name], 1, memory_order_relaxed)

#define HC_INTERNAL __attribute__((visibility("hidden")))
#define HC_MAX_DEVICES 64
#define HC_ALIGN 256
#define HC_POISON_BYTE 0xff   /* fresh device memory: 0xffff... is a NaN in every float width */

/* ---- options (read once at cuInit) ---- */
typedef struct hc_options {
    int devices;          /* HOSTCUDA_DEVICES, default 8 */
    size_t mem_bytes;     /* HOSTCUDA_MEM_BYTES, default 1 GiB per device */
    int strict;           /* HOSTCUDA_STRICT, default 1: device view is PROT_NONE */
    int ptds_default;     /* CUDA_API_PER_THREAD_DEFAULT_STREAM=1: DEFAULT proc lookups get _ptsz/_ptds */
    const char *kernel_libs;  /* HOSTCUDA_KERNEL_LIBS: colon-separated libraries with host kernels */
    int poison;           /* HOSTCUDA_POISON, default 1: fresh device allocations filled with 0xff (NaN) */
    int jitter;           /* HOSTCUDA_JITTER=SEED set (non-empty, not 0): stream workers delay ops */
    unsigned long long jitter_seed;
    int unexported_procs; /* HOSTCUDA_UNEXPORTED_PROCS=1: cuGetProcAddress hands out non-exported thunks */
    int exec_mode;        /* HOSTCUDA_EXEC: HC_EXEC_AUTO (default), HC_EXEC_PTX, HC_EXEC_TWIN */
    int exec_threads;     /* HOSTCUDA_THREADS: host threads for one launch's CTAs (default: cores) */
    double kernel_timeout_s;  /* HOSTCUDA_KERNEL_TIMEOUT_S, default 600; 0 = none */
    int exec_stats;       /* HOSTCUDA_EXEC_STATS: 1 at exit, 2 at each launch */
    const char *opt_error;    /* a malformed option: cuInit fails naming it */
} hc_options;
enum { HC_EXEC_AUTO = 0, HC_EXEC_PTX, HC_EXEC_TWIN };
extern hc_options hc_opt;
void hc_options_load(void);   /* idempotent; cuInit and cuGetProcAddress call it */
extern atomic_int hc_initialized;
extern pthread_mutex_t hc_mu;
extern pthread_cond_t hc_cv;

#define HC_CHECK_INIT()                                                                         \
    do {                                                                                       \
        if (!atomic_load_explicit(&hc_initialized, memory_order_acquire))                      \
            return CUDA_ERROR_NOT_INITIALIZED;                                                 \
    } while (0)

/* ---- handle registry: is this pointer a live handle of this kind? (no dereference) ---- */
enum hc_kind {
    HC_K_NONE = 0,
    HC_K_CTX = 0x43545821,   /* also the magic tag stored first in each handle struct */
    HC_K_STREAM = 0x53545221,
    HC_K_EVENT = 0x45564e21,
    HC_K_MODULE = 0x4d4f4421,
    HC_K_FUNC = 0x46554e21,
    HC_K_LIBRARY = 0x4c494221,
    HC_K_KERNEL = 0x4b524e21,
    HC_K_POOL = 0x504f4c21,
    HC_K_GRAPH = 0x47524121,      /* hc_graph.c */
    HC_K_GEXEC = 0x47455821,
    HC_K_GNODE = 0x474e4421,
    HC_K_ARRAY = 0x41525221,      /* hc_array.c */
    HC_K_DEAD_CTX = 0x44454421,   /* destroyed context: kept (never freed) so stale uses are told so */
    HC_K_LINK = 0x4c4e4b21,       /* hc_link.c */
};
void hc_reg_add(const void *h, enum hc_kind k);        /* hc_mu held */
void hc_reg_del(const void *h);                       /* hc_mu held */
enum hc_kind hc_reg_kind(const void *h);              /* hc_mu held */

/* ---- marks: a completion flag shared by an op, the stream tail, events and waiters ---- */
typedef struct hc_mark {
    int refs;
    int done;
    uint64_t time_ns;   /* CLOCK_MONOTONIC at completion */
} hc_mark;
hc_mark *hc_mark_new(void);                  /* hc_mu held; refs = 1 */
hc_mark *hc_mark_ref(hc_mark *m);            /* hc_mu held; NULL-safe */
void hc_mark_unref(hc_mark *m);              /* hc_mu held; NULL-safe */
void hc_mark_wait(hc_mark *m);               /* hc_mu held, caller holds a ref; waits until done */

/* ---- ops queued on a stream; run() is called by the worker without hc_mu ---- */
typedef struct hc_op hc_op;
struct hc_op {
    hc_op *next;
    hc_mark *mark;          /* completion of this op */
    hc_mark **deps;         /* must all be done before run() */
    int ndeps, cap_deps;
    void (*run)(hc_op *op);
    void (*fini)(hc_op *op);  /* frees payload; optional; called without hc_mu */
    void *payload;
};

enum hc_stream_kind { HC_S_USER, HC_S_LEGACY, HC_S_PTDS };

struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    enum hc_stream_kind kind;
    unsigned int flags;
    int priority;
    unsigned long long id;
    pthread_t owner;            /* HC_S_PTDS: the host thread it belongs to */
    hc_op *head, *tail;
    hc_mark *last;              /* mark of the last enqueued op, or NULL */
    int worker_started, dying;
    pthread_t worker;
    struct hc_capture *capture; /* non-NULL while capturing: hc_enqueue records, not runs (hc_capture.c) */
    /* cuStreamSetAttribute's values, kept and handed back (hostcuda's caches have nothing to tune) */
    CUaccessPolicyWindow apw;
    CUsynchronizationPolicy sync_policy;   /* 0: never set (reads as CU_SYNC_POLICY_AUTO) */
    CUlaunchMemSyncDomainMap dom_map;
    CUlaunchMemSyncDomain dom;
    struct CUstream_st *next;   /* in ctx->streams */
};

struct CUevent_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned int flags;
    hc_mark *mark;              /* last record, NULL if never recorded */
    int captured;               /* last recorded in a capturing stream: not to be queried (hc_capture.c) */
    struct CUevent_st *next;    /* in ctx->events */
};

struct CUctx_st {
    uint32_t magic;
    int dev;
    unsigned int flags;
    int is_primary;
    int active;                 /* primary: retained at least once since last release to 0 */
    int prim_refs;
    unsigned long long id;
    struct CUstream_st *legacy;
    struct CUstream_st *streams;  /* user and per-thread streams */
    struct CUevent_st *events;
    struct CUmod_st *modules;
    _Atomic int sticky;          /* a launch's illegal address / assert / trap: every later sync fails */
    CUfunc_cache cache_config;   /* cuCtxSetCacheConfig (kept: host memory has no L1/shared split) */
    CUsharedconfig shmem_config; /* cuCtxSetSharedMemConfig (kept) */
    struct CUctx_st *peers[HC_MAX_DEVICES];   /* cuCtxEnablePeerAccess: the enabled peer of each device */
    char *printf_buf;            /* interpreted kernels' device printf output, written at the next sync */
    size_t printf_len;
    struct hc_limits *limits;    /* cuCtxSetLimit's values and the device malloc heap (hc_limit.c) */
};

/* a memory pool (hc_pool.c): its allocations are arena blocks (hc_mem_alloc), counted here; freed
 * memory goes back to the arena at once, so reserved == the live blocks' rounded sizes */
struct CUmemPoolHandle_st {
    uint32_t magic;
    int dev;
    int is_default;
    int dying;                   /* destroyed with allocations outstanding: freed with the last one */
    cuuint64_t threshold;        /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD (kept; nothing is held back) */
    int reuse[3];                /* the three CU_MEMPOOL_ATTR_REUSE_* flags */
    size_t live;                 /* outstanding allocations */
    cuuint64_t used, used_high, reserved, reserved_high;
    unsigned char access[HC_MAX_DEVICES];   /* CUmemAccess_flags of each other device */
};
void hc_pool_init_default(struct CUmemPoolHandle_st *p, int dev);   /* at cuInit */

/* ---- devices and arenas ---- */
typedef struct hc_block hc_block;
struct hc_block {
    size_t off, size;
    size_t req;                  /* bytes asked for (size is rounded up to HC_ALIGN) */
    int used;
    struct CUctx_st *ctx;        /* owner; NULL for stream-ordered (pool) allocations */
    struct CUmemPoolHandle_st *pool;  /* pool of a stream-ordered allocation, else NULL */
    int graph_hold, graph_freed;  /* a graph memory node's: a free only marks it freed (hc_gnode.c) */
    hc_block *prev, *next;
};

typedef struct hc_dev {
    int fd;
    char *dev_base;            /* handed out as CUdeviceptr; PROT_NONE in strict mode */
    char *rw_base;             /* hostcuda's own read-write view of the same pages */
    size_t size, used;
    hc_block *blocks;          /* address-sorted, covering the whole arena */
    struct CUctx_st *primary;
    struct CUmemPoolHandle_st default_pool;
    struct CUmemPoolHandle_st *cur_pool;
} hc_dev;
extern hc_dev hc_devs[HC_MAX_DEVICES];
extern int hc_ndev;

/* ---- hc_core.c ---- */
/* hc_mu held; INVALID_CONTEXT if none, CONTEXT_IS_DESTROYED if another thread destroyed it */
CUresult hc_current_ctx(struct CUctx_st **out);
int hc_ctx_valid(struct CUctx_st *c);                /* hc_mu held; live and active */
void hc_ctx_teardown(struct CUctx_st *c);            /* hc_mu held; frees everything it owns */

/* ---- hc_mem.c ---- */
CUresult hc_mem_init(void);                          /* at cuInit */
/* Resolve [p, p+n) to a host address hostcuda may touch. kind: 0 unknown host memory (pageable),
 * 1 device arena, 2 pinned/registered host, 3 managed. Returns NULL if n bytes do not fit the
 * allocation that holds p (for device/registered memory). Takes hc_mu itself. */
enum { HC_MEM_PAGEABLE = 0, HC_MEM_DEVICE = 1, HC_MEM_PINNED = 2, HC_MEM_MANAGED = 3 };
void *hc_mem_resolve(CUdeviceptr p, size_t n, int *kind, int *dev);
void *hc_dev_rw(uintptr_t v);                         /* lock-free: arena address -> rw, else NULL */
/* hc_mu held; pool != NULL: stream-ordered allocation, owned by no context */
CUresult hc_mem_alloc(struct CUctx_st *c, size_t n, struct CUmemPoolHandle_st *pool, CUdeviceptr *out);
CUresult hc_mem_free(CUdeviceptr p);                                     /* hc_mu held */
struct hc_exec_range;
/* hc_mu held: the live device and host allocations, sorted by address (malloc'ed; count in *n) */
struct hc_exec_range *hc_mem_ranges(int *n);
void hc_mem_free_ctx(struct CUctx_st *c);                                /* hc_mu held */
/* hc_mu held: 1 if v lies in a managed allocation (its base and page-rounded size), else 0 */
int hc_mem_managed_range(uintptr_t v, uintptr_t *base, size_t *size);

/* ---- hc_managed.c ---- */
void hc_managed_forget(uintptr_t base);   /* hc_mu held: a managed allocation is freed, drop its advice */
/* hc_mu held: a graph's memory (alloc nodes): how 1 holds the block for the graph (a free then only
 * marks it freed), 0 makes it live again (an alloc node's replay), -1 lets go (released if freed) */
CUresult hc_mem_graph_hold(CUdeviceptr p, int how);

/* ---- hc_stream.c ---- */
/* Resolve a stream handle for an API call; per_thread: called through a _ptsz/_ptds variant. */
CUresult hc_stream_resolve(CUstream h, int per_thread, struct CUstream_st **out);  /* hc_mu held */
struct CUstream_st *hc_stream_default(struct CUctx_st *c, int per_thread);   /* hc_mu held */
hc_op *hc_op_new(void (*run)(hc_op *), void (*fini)(hc_op *), void *payload);
hc_mark *hc_enqueue(struct CUstream_st *s, hc_op *op);   /* hc_mu held; returns op mark, not ref'd */
void hc_stream_sync(struct CUstream_st *s);              /* hc_mu held */
void hc_ctx_sync(struct CUctx_st *c);                    /* hc_mu held */
void hc_stream_destroy_locked(struct CUstream_st *s);    /* hc_mu held */
void hc_event_destroy_locked(struct CUevent_st *e);      /* hc_mu held */
uint64_t hc_now_ns(void);

/* ---- hc_capture.c (stream capture; graphs are hc_graph.c, hc_gnode.c) ---- */
/* hc_mu held, s->capture set: keep op (unrun, mark set done) in the capture; returns its mark */
hc_mark *hc_graph_capture_op(struct CUstream_st *s, hc_op *op);
/* hc_mu held: event e was recorded in s; in a capture it now names s's capture position */
void hc_graph_event_record(struct CUstream_st *s, struct CUevent_st *e);
/* hc_mu held: if e was recorded in a live capture, join s to it (*rc: the call's result), 1; else 0 */
int hc_graph_event_wait(struct CUstream_st *s, struct CUevent_st *e, CUresult *rc);
/* hc_mu held, s->capture set: a call that conflicts with capture (synchronise, query) invalidates
 * it; returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
CUresult hc_graph_invalidate(struct CUstream_st *s);
/* hc_mu held: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (invalidating the captures concerned) when the
 * calling thread may not make a potentially unsafe call now (capture modes), else CUDA_SUCCESS */
CUresult hc_graph_unsafe_call(void);
/* hc_mu held: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (invalidating them) when streams of c capture */
CUresult hc_graph_ctx_sync(struct CUctx_st *c);
/* hc_mu held: s is destroyed while it captures: it leaves the capture (its work must still be
 * joined into the origin; the origin's own destruction invalidates the capture) */
void hc_graph_stream_gone(struct CUstream_st *s);
/* hc_mu held: cuMemAllocAsync of p on capturing stream s: a memory alloc node */
CUresult hc_graph_capture_alloc(struct CUstream_st *s, CUdeviceptr p, size_t bytes);
/* hc_module.c / hc_copy.c / hc_mem.c, for the graph files */
CUresult hc_launch_on(const void *f, const unsigned int dims[6], unsigned int shmem, CUstream h, void **params,
                      void **extra);                     /* hc_mu not held */
int hc_op_is_launch(const hc_op *op);
/* a kernel's parameter values as given: one malloc'ed block, NULL-terminated pointers then values */
CUresult hc_kernel_params_copy(const void *f, void **params, void **extra, void ***out, size_t *bytes); /* hc_mu held */
int hc_xfer_kind(const hc_op *op);
void hc_xfer_unstage(hc_op *op);
int hc_op_is_free(const hc_op *op);

/* ---- hc_vmm.c: reserved ranges (cuMemAddressReserve / cuMemMap) ---- */
/* 1 if v lies in a reservation: *rw = read-write address of [v, v + n) when all of it is mapped
 * with access, else NULL; *dev = its device. 0 otherwise. Takes its own lock (after hc_mu). */
int hc_vmm_resolve(uintptr_t v, size_t n, void **rw, int *dev);
void *hc_vmm_rw(uintptr_t v);                          /* mapped with access -> rw, else NULL */

/* ---- hc_limit.c: cuCtx{Set,Get}Limit and the device malloc heap ---- */
typedef struct hc_launch_limits {
    size_t stack, printf_fifo;   /* CU_LIMIT_STACK_SIZE, CU_LIMIT_PRINTF_FIFO_SIZE */
    void *heap;                  /* the context's device malloc heap, NULL if the kernel uses none */
} hc_launch_limits;
/* hc_mu held: a launch's limits; marks the heap / printf FIFO used (their sizes are then fixed) and
 * makes the heap at the first launch that calls malloc or free */
CUresult hc_limit_for_launch(struct CUctx_st *c, int uses_malloc, int uses_printf, hc_launch_limits *out);
void hc_limit_teardown(struct CUctx_st *c);                   /* hc_mu held */
uint64_t hc_heap_alloc(void *heap, uint64_t n);               /* any thread: device address or 0 */
int hc_heap_free(void *heap, uint64_t a);                     /* any thread: 0, -1 not a live block */
int hc_device_sms(void);                                      /* HOSTCUDA_SMS */
/* blocks of `block` threads that fit on one SM (hc_occupancy.c's model) */
int hc_occ_blocks_per_sm(int regs, int smem_static, int block, size_t dyn);

/* ---- hc_module.c ---- */
/* a whole file, NUL-terminated (malloc'ed), and its length if len is not NULL; FILE_NOT_FOUND if unreadable */
CUresult hc_read_file(const char *path, char **out, size_t *len);

/* ---- hc_link.c ---- */
/* cuLinkComplete's image: this magic, a u32 unit count, zeros to HC_LINK_HEADER, NUL-terminated texts */
#define HC_LINK_MAGIC "HCLINK1\0"
#define HC_LINK_HEADER 16
/* the texts of a linked image (pointers into it; *texts malloc'ed): their count; 0: not one; -1: bad */
int hc_link_units(const void *image, const char ***texts);

/* ---- hc_fatbin.c ---- */
/* 1: image starts like a fatbin, 2: like a fatbin wrapper (__fatBinC_Wrapper_t), 0: neither. */
int hc_fatbin_kind(const void *image);
/* The PTX text of a fatbin or wrapper's PTX entry, decompressed, malloc'ed and NUL-terminated;
 * an error (one line on stderr saying why) for a bad image, no PTX entry or a missing library. */
CUresult hc_fatbin_ptx(const void *image, char **ptx);

/* ---- hc_array.c / hc_copy3d.c: CUDA arrays in copies ---- */
/* the first byte of rows [y, y + height) x slices [z, z + depth), bytes [x, x + width) of array h,
 * and its pitch and rows per slice; INVALID_HANDLE, or INVALID_VALUE when the region leaves it.
 * Takes hc_mu itself. */
CUresult hc_array_span(CUarray h, size_t x, size_t y, size_t z, size_t width, size_t height, size_t depth,
                       char **out, size_t *pitch, size_t *rows);
CUresult hc_copy_3d(const CUDA_MEMCPY3D *c, CUstream h, int pt, int async);   /* cuMemcpy3D's path */

/* ---- hc_module.c ---- */
void hc_module_unload_locked(struct CUmod_st *m);        /* hc_mu held */
void hc_exec_options_read(hc_options *o);                /* HOSTCUDA_EXEC and friends, at option load */
/* CUDA_SUCCESS, or the error a PTX-executed launch left on the context (sticky, as on a GPU) */
CUresult hc_ctx_sticky(struct CUctx_st *c);
void hc_ctx_flush_printf(struct CUctx_st *c);            /* hc_mu held: write pending device printf */

#endif /* HC_INTERNAL_H */
