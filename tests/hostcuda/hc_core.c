/* hc_core.c — hostcuda: cuInit, options, the handle registry, devices, primary and regular contexts.
 *
 * Invariant: a handle is valid iff it is in the registry with its kind; handles are removed from
 * the registry before their memory is freed, so a stale handle answers INVALID_HANDLE/CONTEXT
 * instead of being dereferenced. Each host thread has its own context stack (TLS); entries may go
 * stale when another thread destroys the context, so every use re-validates them.
 * Threading: all state under hc_mu (hc_internal.h); the TLS stack needs no lock.
 * Must not: dereference a handle that is not in the registry with its kind; free a handle's memory
 * before it left the registry; trust a TLS context-stack entry without re-validating it; touch
 * shared state without hc_mu.
 */
#include "hc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

hc_options hc_opt;
atomic_int hc_initialized;
pthread_mutex_t hc_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t hc_cv = PTHREAD_COND_INITIALIZER;
hc_dev hc_devs[HC_MAX_DEVICES];
int hc_ndev;
/* visible ordinal -> the "physical" device whose name, UUID and PCI bus id it reports; the
 * identity unless CUDA_VISIBLE_DEVICES picks and orders devices (read at cuInit) */
static int hc_phys[HC_MAX_DEVICES];
_Atomic unsigned long long hc_calls[HC_API_COUNT];

static unsigned long long hc_next_ctx_id = 1;

/* ---------------------------------------------------------------- registry (open addressing) */
typedef struct { const void *key; enum hc_kind kind; } hc_slot;
static hc_slot *reg_tab;
static size_t reg_cap, reg_used;   /* used counts tombstones too */
#define HC_TOMB ((const void *)1)

static size_t reg_hash(const void *p, size_t cap)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return x & (cap - 1);
}

static void reg_grow(void)
{
    size_t ncap = reg_cap ? reg_cap * 2 : 256;
    hc_slot *nt = calloc(ncap, sizeof *nt);
    if (!nt)
        return;   /* keep the old table; insertion below still finds a free slot or fails */
    for (size_t i = 0; i < reg_cap; i++) {
        if (reg_tab[i].key && reg_tab[i].key != HC_TOMB) {
            size_t j = reg_hash(reg_tab[i].key, ncap);
            while (nt[j].key)
                j = (j + 1) & (ncap - 1);
            nt[j] = reg_tab[i];
        }
    }
    size_t live = 0;
    for (size_t i = 0; i < ncap; i++)
        live += nt[i].key != NULL;
    free(reg_tab);
    reg_tab = nt; reg_cap = ncap; reg_used = live;
}

void hc_reg_add(const void *h, enum hc_kind k)
{
    if ((reg_used + 1) * 2 > reg_cap)
        reg_grow();
    size_t j = reg_hash(h, reg_cap);
    while (reg_tab[j].key && reg_tab[j].key != HC_TOMB)
        j = (j + 1) & (reg_cap - 1);
    if (!reg_tab[j].key)
        reg_used++;
    reg_tab[j].key = h; reg_tab[j].kind = k;
}

static hc_slot *reg_find(const void *h)
{
    if (!reg_cap || !h || h == HC_TOMB)
        return NULL;
    size_t j = reg_hash(h, reg_cap);
    while (reg_tab[j].key) {
        if (reg_tab[j].key == h)
            return &reg_tab[j];
        j = (j + 1) & (reg_cap - 1);
    }
    return NULL;
}

void hc_reg_del(const void *h)
{
    hc_slot *s = reg_find(h);
    if (s) { s->key = HC_TOMB; s->kind = HC_K_NONE; }
}

enum hc_kind hc_reg_kind(const void *h)
{
    hc_slot *s = reg_find(h);
    return s ? s->kind : HC_K_NONE;
}

/* ---------------------------------------------------------------- init and options */
static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (errno || end == v)
        return dflt;
    switch (*end) {
    case 'k': case 'K': x <<= 10; break;
    case 'm': case 'M': x <<= 20; break;
    case 'g': case 'G': x <<= 30; break;
    default: break;
    }
    return (size_t)x;
}

static CUresult hc_init_result = CUDA_ERROR_NOT_INITIALIZED;
static pthread_once_t hc_once = PTHREAD_ONCE_INIT;

static pthread_once_t hc_opt_once = PTHREAD_ONCE_INIT;
static int hc_sms = 132; /* HOSTCUDA_SMS: the SM count every device reports (1..1024) */

static void options_read(void)
{
    hc_opt.devices = (int)env_size("HOSTCUDA_DEVICES", 8);
    if (hc_opt.devices > HC_MAX_DEVICES)
        hc_opt.devices = HC_MAX_DEVICES;
    hc_opt.mem_bytes = env_size("HOSTCUDA_MEM_BYTES", (size_t)1 << 30);
    hc_opt.mem_bytes = (hc_opt.mem_bytes + 4095) & ~(size_t)4095;
    if (hc_opt.mem_bytes < 1 << 20)
        hc_opt.mem_bytes = 1 << 20;
    hc_opt.strict = (int)env_size("HOSTCUDA_STRICT", 1) != 0;
    const char *p = getenv("CUDA_API_PER_THREAD_DEFAULT_STREAM");
    hc_opt.ptds_default = p && atoi(p) == 1;
    hc_opt.kernel_libs = getenv("HOSTCUDA_KERNEL_LIBS");
    hc_opt.poison = (int)env_size("HOSTCUDA_POISON", 1) != 0;
    hc_opt.jitter_seed = env_size("HOSTCUDA_JITTER", 0);
    hc_opt.jitter = hc_opt.jitter_seed != 0;
    hc_opt.unexported_procs = (int)env_size("HOSTCUDA_UNEXPORTED_PROCS", 0) != 0;
    hc_exec_options_read(&hc_opt);
    const char *sv = getenv("HOSTCUDA_SMS");
    if (sv != NULL && *sv) {
        char *end;
        errno = 0;
        long sms = strtol(sv, &end, 10);
        if (errno || *end || sms < 1 || sms > 1024)
            fprintf(stderr, "hostcuda: HOSTCUDA_SMS=%s: not a count from 1 to 1024; using 132\n", sv);
        else
            hc_sms = (int)sms;
    }
}

void hc_options_load(void)
{
    pthread_once(&hc_opt_once, options_read);
}

/* A forked child inherits hostcuda's state but none of its stream workers (nor, possibly, a
 * consistent hc_mu): like the real driver, CUDA is unusable there rather than hanging. */
static atomic_int hc_forked;

static void hc_atfork_child(void)
{
    atomic_store(&hc_forked, 1);
    atomic_store(&hc_initialized, 0);
}

/* CUDA_VISIBLE_DEVICES as the driver reads it: a comma list of ordinals of the machine's
 * HOSTCUDA_DEVICES devices; the list ends at the first entry that is not one (malformed, out of
 * range, or repeated), so "" or "-1" hides every device. Unset: all devices, in order. */
static int visible_devices(int machine)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (v == NULL) {
        for (int i = 0; i < machine; i++)
            hc_phys[i] = i;
        return machine;
    }
    int n = 0;
    while (*v != '\0' && n < machine) {
        char *end;
        errno = 0;
        long x = strtol(v, &end, 10);
        if (errno || end == v || x < 0 || x >= machine || (*end != ',' && *end != '\0'))
            break;
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= hc_phys[i] == (int)x;
        if (dup)
            break;
        hc_phys[n++] = (int)x;
        v = *end == ',' ? end + 1 : end;
    }
    return n;
}

static void hc_do_init(void)
{
    hc_options_load();
    if (hc_opt.opt_error) {
        fprintf(stderr, "hostcuda: %s\n", hc_opt.opt_error);
        hc_init_result = CUDA_ERROR_INVALID_VALUE;
        return;
    }
    hc_ndev = hc_opt.devices > 0 ? visible_devices(hc_opt.devices) : 0;
    if (hc_ndev <= 0) {
        hc_init_result = CUDA_ERROR_NO_DEVICE;
        return;
    }
    hc_init_result = hc_mem_init();
    if (hc_init_result == CUDA_SUCCESS) {
        pthread_atfork(NULL, NULL, hc_atfork_child);
        atomic_store_explicit(&hc_initialized, 1, memory_order_release);
    }
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    HC_COUNT(cuInit);
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (atomic_load(&hc_forked))
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_once(&hc_once, hc_do_init);
    return hc_init_result;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    HC_COUNT(cuDriverGetVersion);
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CUDA_VERSION;
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- devices */
#define HC_CHECK_DEV(d)                                                                         \
    do {                                                                                       \
        if ((d) < 0 || (d) >= hc_ndev)                                                         \
            return CUDA_ERROR_INVALID_DEVICE;                                                  \
    } while (0)

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    HC_COUNT(cuDeviceGet);
    HC_CHECK_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(ordinal);
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    HC_COUNT(cuDeviceGetCount);
    HC_CHECK_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = hc_ndev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    HC_COUNT(cuDeviceGetName);
    HC_CHECK_INIT();
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    snprintf(name, (size_t)len, "NVIDIA H100 80GB HBM3 (hostcuda %d)", hc_phys[dev]);
    return CUDA_SUCCESS;
}

static CUresult uuid_of(CUuuid *uuid, CUdevice dev)
{
    HC_CHECK_INIT();
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    static const char tag[16] = "hostcuda-dev-000";
    memcpy(uuid->bytes, tag, 16);
    uuid->bytes[14] = (char)('0' + hc_phys[dev] / 10);
    uuid->bytes[15] = (char)('0' + hc_phys[dev] % 10);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    HC_COUNT(cuDeviceGetUuid);
    return uuid_of(uuid, dev);
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    HC_COUNT(cuDeviceGetUuid_v2);
    return uuid_of(uuid, dev);
}

CUresult CUDAAPI cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    HC_COUNT(cuDeviceTotalMem);
    HC_CHECK_INIT();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    *bytes = hc_opt.mem_bytes > 0xffffffffu ? 0xffffffffu : (unsigned int)hc_opt.mem_bytes;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    HC_COUNT(cuDeviceTotalMem_v2);
    HC_CHECK_INIT();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    *bytes = hc_opt.mem_bytes;
    return CUDA_SUCCESS;
}

/* H100 SXM-like values; attributes not listed are 0 (feature absent). The PCI bus id and the
 * board group id are the physical device's, so each device answers differently. */
static int attr_value(CUdevice_attribute a, int vis)
{
    int dev = hc_phys[vis];
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return hc_sms;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: return 0;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return 0x18 + dev;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: return 0;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    /* the array and texture limits hc_array.c enforces */
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH: case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH:
        return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT:
        return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH: case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT: case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH:
        return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH: case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH: case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH:
        return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS: case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS:
        return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH: return 1 << 28;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH: return 2097120;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return dev;
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return 0;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 32505856;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return 0;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: return 0;
    default: return 0;
    }
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    HC_COUNT(cuDeviceGetAttribute);
    HC_CHECK_INIT();
    if (!pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    *pi = attr_value(attrib, dev);
    return CUDA_SUCCESS;
}

/* "0000:BB:00.0", BB = 0x18 + the physical ordinal (CU_DEVICE_ATTRIBUTE_PCI_BUS_ID). */
CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    HC_COUNT(cuDeviceGetPCIBusId);
    HC_CHECK_INIT();
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    snprintf(pciBusId, (size_t)len, "%04X:%02X:%02X.0", 0, attr_value(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev), 0);
    return CUDA_SUCCESS;
}

/* Accepts "domain:bus:device.function", "domain:bus:device" and "bus:device.function" (hex). */
CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    HC_COUNT(cuDeviceGetByPCIBusId);
    HC_CHECK_INIT();
    if (!dev || !pciBusId)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned dom = 0, bus = 0, slot = 0, fn = 0;
    char tail;
    if (sscanf(pciBusId, "%x:%x:%x.%x%c", &dom, &bus, &slot, &fn, &tail) != 4 &&
        sscanf(pciBusId, "%x:%x:%x%c", &dom, &bus, &slot, &tail) != 3) {
        dom = 0;
        if (sscanf(pciBusId, "%x:%x.%x%c", &bus, &slot, &fn, &tail) != 3)
            return CUDA_ERROR_INVALID_VALUE;
    }
    for (int i = 0; i < hc_ndev; i++)
        if (dom == 0 && slot == 0 && fn == 0 && bus == (unsigned)attr_value(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, i)) {
            *dev = i;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    HC_COUNT(cuDeviceComputeCapability);
    HC_CHECK_INIT();
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    *major = 9; *minor = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    HC_COUNT(cuDeviceCanAccessPeer);
    HC_CHECK_INIT();
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    HC_CHECK_DEV(peerDev);
    *canAccessPeer = dev != peerDev;
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- memory pools (device side) */
CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    HC_COUNT(cuDeviceGetDefaultMemPool);
    HC_CHECK_INIT();
    if (!pool_out)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    *pool_out = &hc_devs[dev].default_pool;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    HC_COUNT(cuDeviceGetMemPool);
    HC_CHECK_INIT();
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    pthread_mutex_lock(&hc_mu);
    *pool = hc_devs[dev].cur_pool;
    pthread_mutex_unlock(&hc_mu);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    HC_COUNT(cuDeviceSetMemPool);
    HC_CHECK_INIT();
    HC_CHECK_DEV(dev);
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(pool) != HC_K_POOL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (pool->dev != dev)
        rc = CUDA_ERROR_INVALID_DEVICE;
    else
        hc_devs[dev].cur_pool = pool;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* ---------------------------------------------------------------- context stack (per thread) */
#define HC_STACK_MAX 64
static __thread struct CUctx_st *tls_stack[HC_STACK_MAX];
static __thread int tls_depth;

int hc_ctx_valid(struct CUctx_st *c)
{
    return c && hc_reg_kind(c) == HC_K_CTX && c->active;
}

int hc_device_sms(void)
{
    return hc_sms;
}

CUresult hc_current_ctx(struct CUctx_st **out)
{
    if (tls_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *c = tls_stack[tls_depth - 1];
    if (hc_reg_kind(c) == HC_K_DEAD_CTX)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (!hc_ctx_valid(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    /* after a fault in an interpreted kernel the context is unusable, as on a GPU: every call
     * that needs it answers that error (cuCtxDestroy / primary-context reset recover) */
    return hc_ctx_sticky(c);
}

static struct CUctx_st *ctx_new(int dev, unsigned int flags, int primary)
{
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->magic = HC_K_CTX;
    c->dev = dev;
    c->flags = flags;
    c->is_primary = primary;
    c->active = !primary;
    c->id = hc_next_ctx_id++;
    hc_reg_add(c, HC_K_CTX);
    return c;
}

void hc_ctx_teardown(struct CUctx_st *c)
{
    hc_ctx_sync(c);
    free(c->printf_buf);   /* unsynchronised device printf output is lost, as on a GPU */
    c->printf_buf = NULL;
    c->printf_len = 0;
    atomic_store(&c->sticky, 0);   /* a reset primary context is usable again */
    while (c->modules)
        hc_module_unload_locked(c->modules);
    while (c->streams)
        hc_stream_destroy_locked(c->streams);
    if (c->legacy) {
        hc_stream_destroy_locked(c->legacy);
        c->legacy = NULL;
    }
    while (c->events)
        hc_event_destroy_locked(c->events);
    hc_limit_teardown(c);
    hc_mem_free_ctx(c);
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    HC_CHECK_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)(CU_CTX_FLAGS_MASK | CU_CTX_SYNC_MEMOPS))
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    if (tls_depth >= HC_STACK_MAX)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c = ctx_new(dev, flags, 0);
    pthread_mutex_unlock(&hc_mu);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    tls_stack[tls_depth++] = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    HC_COUNT(cuCtxCreate);
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    HC_COUNT(cuCtxCreate_v2);
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev)
{
    HC_COUNT(cuCtxCreate_v3);
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                                CUdevice dev)
{
    HC_COUNT(cuCtxCreate_v4);
    if (ctxCreateParams && ctxCreateParams->numExecAffinityParams < 0)
        return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, flags, dev);
}

static CUresult ctx_destroy(CUcontext ctx)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(ctx) != HC_K_CTX || ctx->is_primary) {
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    hc_ctx_teardown(ctx);
    /* The struct is never freed: its address cannot come back as a new context, so threads that
     * still have it on their stack get CUDA_ERROR_CONTEXT_IS_DESTROYED (documented) from it. */
    hc_reg_del(ctx);
    hc_reg_add(ctx, HC_K_DEAD_CTX);
    ctx->active = 0;
    pthread_mutex_unlock(&hc_mu);
    if (tls_depth > 0 && tls_stack[tls_depth - 1] == ctx)
        tls_depth--;   /* current to the calling thread: popped */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
    HC_COUNT(cuCtxDestroy);
    return ctx_destroy(ctx);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    HC_COUNT(cuCtxDestroy_v2);
    return ctx_destroy(ctx);
}

static CUresult ctx_push(CUcontext ctx)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    int ok = hc_ctx_valid(ctx);
    pthread_mutex_unlock(&hc_mu);
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth >= HC_STACK_MAX)
        return CUDA_ERROR_OUT_OF_MEMORY;
    tls_stack[tls_depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    HC_COUNT(cuCtxPushCurrent);
    return ctx_push(ctx);
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    HC_COUNT(cuCtxPushCurrent_v2);
    return ctx_push(ctx);
}

static CUresult ctx_pop(CUcontext *pctx)
{
    HC_CHECK_INIT();
    if (tls_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *c = tls_stack[--tls_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    HC_COUNT(cuCtxPopCurrent);
    return ctx_pop(pctx);
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
    HC_COUNT(cuCtxPopCurrent_v2);
    return ctx_pop(pctx);
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    HC_COUNT(cuCtxSetCurrent);
    HC_CHECK_INIT();
    if (!ctx) {   /* unbind: pop the top, if any */
        if (tls_depth > 0)
            tls_depth--;
        return CUDA_SUCCESS;
    }
    pthread_mutex_lock(&hc_mu);
    int ok = hc_ctx_valid(ctx);
    pthread_mutex_unlock(&hc_mu);
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth == 0)
        tls_depth = 1;
    tls_stack[tls_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    HC_COUNT(cuCtxGetCurrent);
    HC_CHECK_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = tls_depth ? tls_stack[tls_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

/* Run `body` with the current context `c` under hc_mu and return the result (errors included). */
#define WITH_CTX(c, body)                                                                       \
    do {                                                                                       \
        HC_CHECK_INIT();                                                                       \
        pthread_mutex_lock(&hc_mu);                                                            \
        struct CUctx_st *c;                                                                    \
        CUresult with_rc_ = hc_current_ctx(&c);                                                \
        if (with_rc_ == CUDA_SUCCESS) { body }                                                 \
        pthread_mutex_unlock(&hc_mu);                                                          \
        return with_rc_;                                                                       \
    } while (0)

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    HC_COUNT(cuCtxGetDevice);
    if (!device && atomic_load(&hc_initialized))
        return CUDA_ERROR_INVALID_VALUE;
    WITH_CTX(c, *device = c->dev;);
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
    HC_COUNT(cuCtxGetFlags);
    if (!flags && atomic_load(&hc_initialized))
        return CUDA_ERROR_INVALID_VALUE;
    WITH_CTX(c, *flags = c->flags;);
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    HC_COUNT(cuCtxGetApiVersion);
    HC_CHECK_INIT();
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    if (!ctx)
        rc = hc_current_ctx(&ctx);
    else if (!hc_ctx_valid(ctx))
        rc = CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&hc_mu);
    if (rc == CUDA_SUCCESS)
        *version = 3020;   /* the API version the real driver reports for every current context */
    return rc;
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    HC_COUNT(cuCtxGetStreamPriorityRange);
    WITH_CTX(c, (void)c; if (leastPriority) *leastPriority = 0;
             if (greatestPriority) *greatestPriority = -5;);
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    HC_COUNT(cuCtxSynchronize);
    WITH_CTX(c, {
        with_rc_ = hc_graph_ctx_sync(c);   /* invalid while a stream of c captures */
        if (with_rc_ == CUDA_SUCCESS) {
            hc_ctx_sync(c);
            hc_ctx_flush_printf(c);
            with_rc_ = hc_ctx_sticky(c);
        }
    });
}

/* ---------------------------------------------------------------- primary contexts */
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    HC_COUNT(cuDevicePrimaryCtxRetain);
    HC_CHECK_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    hc_dev *d = &hc_devs[dev];
    if (!d->primary)
        d->primary = ctx_new(dev, 0, 1);
    if (!d->primary) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        d->primary->prim_refs++;
        d->primary->active = 1;
        *pctx = d->primary;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

static CUresult prim_release(CUdevice dev)
{
    HC_CHECK_INIT();
    HC_CHECK_DEV(dev);
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c = hc_devs[dev].primary;
    if (!c || c->prim_refs == 0) {
        rc = CUDA_ERROR_INVALID_CONTEXT;
    } else if (--c->prim_refs == 0) {
        hc_ctx_teardown(c);
        c->active = 0;
        c->flags = 0;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    HC_COUNT(cuDevicePrimaryCtxRelease);
    return prim_release(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    HC_COUNT(cuDevicePrimaryCtxRelease_v2);
    return prim_release(dev);
}

static CUresult prim_set_flags(CUdevice dev, unsigned int flags, int legacy)
{
    HC_CHECK_INIT();
    HC_CHECK_DEV(dev);
    if (flags & ~(unsigned)(CU_CTX_FLAGS_MASK | CU_CTX_SYNC_MEMOPS))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    hc_dev *d = &hc_devs[dev];
    if (!d->primary)
        d->primary = ctx_new(dev, 0, 1);
    if (!d->primary)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if (legacy && d->primary->active)
        rc = CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE;   /* only the pre-11.0 variant refuses */
    else
        d->primary->flags = flags;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    HC_COUNT(cuDevicePrimaryCtxSetFlags);
    return prim_set_flags(dev, flags, 1);
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    HC_COUNT(cuDevicePrimaryCtxSetFlags_v2);
    return prim_set_flags(dev, flags, 0);
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    HC_COUNT(cuDevicePrimaryCtxGetState);
    HC_CHECK_INIT();
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    HC_CHECK_DEV(dev);
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c = hc_devs[dev].primary;
    *flags = c ? c->flags : 0;
    *active = c ? c->active : 0;
    pthread_mutex_unlock(&hc_mu);
    return CUDA_SUCCESS;
}

static CUresult prim_reset(CUdevice dev)
{
    HC_CHECK_INIT();
    HC_CHECK_DEV(dev);
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c = hc_devs[dev].primary;
    /* Destroys every allocation, stream, event and module and resets the flags; retains held by
     * other code stay valid, so the context is usable again right away (streams come back lazily). */
    if (c && c->active)
        hc_ctx_teardown(c);
    if (c)
        c->flags = 0;
    pthread_mutex_unlock(&hc_mu);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
    HC_COUNT(cuDevicePrimaryCtxReset);
    return prim_reset(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    HC_COUNT(cuDevicePrimaryCtxReset_v2);
    return prim_reset(dev);
}

uint64_t hc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
