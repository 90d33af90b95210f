/* hooks_device.c — device remap: the program sees ONE device, ordinal 0, which is this rank's
 * physical device (shim/core/world.c: ACCELSHIM_DEVICES list[local_rank % len], default all visible;
 * the identity when the driver sees one device, e.g. CUDA_VISIBLE_DEVICES set per rank).
 *
 * cuDeviceGetCount -> 1 (0 if the driver sees none; the driver's error unchanged);
 * cuDeviceGet(0) -> the physical device's handle; cuDeviceGet(n > 0) -> CUDA_ERROR_INVALID_DEVICE.
 * Every hooked call that takes a device (context creation, primary-context Retain / Release /
 * Reset / SetFlags / GetState, GetAttribute, GetName, TotalMem, GetUuid, GetPCIBusId, the memory
 * pool getters) takes the handle the program holds, which already is the physical one, or the
 * literal ordinal 0, mapped to the physical device; another device's handle is passed through
 * with a (capped) warning, a handle of no device silently (the driver's error follows). Handles handed back (cuCtxGetDevice, unhooked: the driver's own answer;
 * cuDeviceGetByPCIBusId) are the one cuDeviceGet(0) gives, so cudart's handle table agrees.
 * Threading: the physical handle is computed once (world.c's mutex) and cached in an atomic.
 * Must not: show the program any device but ordinal 0; hand back a handle other than the one
 * cuDeviceGet(0) gives; talk to other ranks (the rank's device comes from shim/core/world.c).
 */
#include "ash_crash.h"
#include "ash_hook.h"
#include "ash_sync.h"
#include "ash_log.h"
#include "ash_world.h"

static _Atomic int ash_dev_visible = -1; /* the driver's count, once it answered */
static _Atomic int ash_dev_handle = -1;  /* the physical device's CUdevice */

/* The real visible count (cached after the first success). */
static CUresult ash_dev_count(int *n)
{
    int c = atomic_load_explicit(&ash_dev_visible, memory_order_acquire);
    if (c >= 0) {
        *n = c;
        return CUDA_SUCCESS;
    }
    if (ASH_UNLIKELY(ash_real.cuDeviceGetCount == NULL))
        return ash_hook_missing("cuDeviceGetCount");
    CUresult r = ash_real.cuDeviceGetCount(&c);
    if (r != CUDA_SUCCESS)
        return r;
    atomic_store_explicit(&ash_dev_visible, c, memory_order_release);
    *n = c;
    return CUDA_SUCCESS;
}

/* This rank's physical ordinal (world.c chooses it once, from the real visible count). */
static CUresult ash_dev_ordinal(int *ordinal)
{
    int o = ash_world_device_ordinal(0); /* the cached choice, or -1 */
    if (o >= 0) {
        *ordinal = o;
        return CUDA_SUCCESS;
    }
    int n = 0;
    CUresult r = ash_dev_count(&n);
    if (r != CUDA_SUCCESS)
        return r;
    *ordinal = n > 0 ? ash_world_device_ordinal(n) : 0; /* no device: the driver's own error follows */
    return CUDA_SUCCESS;
}

/* This rank's physical CUdevice (cached: for mapping handles the program passes). */
static CUresult ash_dev_physical(CUdevice *out)
{
    int h = atomic_load_explicit(&ash_dev_handle, memory_order_acquire);
    if (h >= 0) {
        *out = h;
        return CUDA_SUCCESS;
    }
    int ordinal = 0;
    CUresult r = ash_dev_ordinal(&ordinal);
    if (r != CUDA_SUCCESS)
        return r;
    if (ASH_UNLIKELY(ash_real.cuDeviceGet == NULL))
        return ash_hook_missing("cuDeviceGet");
    CUdevice d;
    r = ash_real.cuDeviceGet(&d, ordinal);
    if (r != CUDA_SUCCESS)
        return r;
    atomic_store_explicit(&ash_dev_handle, (int)d, memory_order_release);
    *out = d;
    return CUDA_SUCCESS;
}

/* Each call of these two hooks reaches its own real symbol once (the first call may also ask
 * the real cuDeviceGetCount, to choose the device). */
ASH_EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    ash_hook_init();
    if (ASH_UNLIKELY(ash_real.cuDeviceGetCount == NULL))
        return ash_hook_missing("cuDeviceGetCount");
    int n = 0;
    CUresult r = ash_real.cuDeviceGetCount(count ? &n : NULL); /* NULL: the driver's own error */
    if (r != CUDA_SUCCESS || count == NULL)
        return r;
    atomic_store_explicit(&ash_dev_visible, n, memory_order_release);
    *count = n > 0 ? 1 : 0;
    return CUDA_SUCCESS;
}

ASH_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    ash_hook_init();
    if (ASH_UNLIKELY(ash_real.cuDeviceGet == NULL))
        return ash_hook_missing("cuDeviceGet");
    if (device == NULL)
        return ash_real.cuDeviceGet(device, 0); /* the driver's own INVALID_VALUE */
    if (ordinal != 0) {
        int n = 0;
        CUresult r = ash_dev_count(&n); /* before cuInit: NOT_INITIALIZED, as the driver says */
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_DEVICE;
    }
    int phys = 0;
    CUresult r = ash_dev_ordinal(&phys);
    if (r != CUDA_SUCCESS)
        return r;
    return ash_real.cuDeviceGet(device, phys);
}

/* The handle to give the driver for a handle the program passed. */
CUdevice ash_hook_device_map(CUdevice dev)
{
    CUdevice phys = dev;
    if (ash_dev_physical(&phys) != CUDA_SUCCESS || dev == phys)
        return dev;
    if (dev == 0)
        return phys; /* the literal ordinal 0, without cuDeviceGet */
    int n = 0;
    if (dev < 0 || ash_dev_count(&n) != CUDA_SUCCESS || dev >= n)
        return dev; /* no device at all: the driver's own error, as without the shim */
    ASH_WARN_CAPPED("device", "the program passed device %d, which it did not get from cuDeviceGet (its only "
                    "device is %d); passed through", (int)dev, (int)phys);
    return dev;
}

ASH_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    ash_hook_init();
    ash_crash_thread(); /* this thread works with CUDA: its own alternate stack */
    ASH_CALL_REAL(cuDevicePrimaryCtxRetain, (pctx, ash_hook_device_map(dev)));
}

ASH_EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    ash_hook_init();
    ash_crash_thread(); /* this thread works with CUDA: its own alternate stack */
    ASH_CALL_REAL(cuCtxCreate_v2, (pctx, flags, ash_hook_device_map(dev)));
}

ASH_EXPORT CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                           unsigned int flags, CUdevice dev)
{
    ash_hook_init();
    ash_crash_thread(); /* this thread works with CUDA: its own alternate stack */
    ASH_CALL_REAL(cuCtxCreate_v3, (pctx, paramsArray, numParams, flags, ash_hook_device_map(dev)));
}

ASH_EXPORT CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                                           CUdevice dev)
{
    ash_hook_init();
    ash_crash_thread(); /* this thread works with CUDA: its own alternate stack */
    ASH_CALL_REAL(cuCtxCreate_v4, (pctx, ctxCreateParams, flags, ash_hook_device_map(dev)));
}

/* ---- queries and primary-context calls: the literal 0 is the rank's device ---- */

#define ASH_DEV_HOOK(name, params, args)                                                   \
    ASH_EXPORT CUresult CUDAAPI name params                                                \
    {                                                                                      \
        ash_hook_init();                                                                   \
        ASH_CALL_REAL(name, args);                                                         \
    }

ASH_DEV_HOOK(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev), (pi, attrib, ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDeviceGetName, (char *name, int len, CUdevice dev), (name, len, ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev), (bytes, ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev), (uuid, ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDeviceGetUuid_v2, (CUuuid *uuid, CUdevice dev), (uuid, ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDeviceGetPCIBusId, (char *pciBusId, int len, CUdevice dev), (pciBusId, len, ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDeviceGetDefaultMemPool, (CUmemoryPool *pool, CUdevice dev), (pool, ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDeviceGetMemPool, (CUmemoryPool *pool, CUdevice dev), (pool, ash_hook_device_map(dev)))
/* Release/reset may end the context the overlap's communication stream lives in: its work first. */
#define ASH_DEV_HOOK_END(name, params, args)                                               \
    ASH_EXPORT CUresult CUDAAPI name params                                                \
    {                                                                                      \
        ash_hook_init();                                                                   \
        ash_sync_context_ending();                                                         \
        ASH_CALL_REAL(name, args);                                                         \
    }

ASH_DEV_HOOK_END(cuDevicePrimaryCtxRelease, (CUdevice dev), (ash_hook_device_map(dev)))
ASH_DEV_HOOK_END(cuDevicePrimaryCtxReset, (CUdevice dev), (ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDevicePrimaryCtxSetFlags, (CUdevice dev, unsigned int flags), (ash_hook_device_map(dev), flags))
ASH_DEV_HOOK_END(cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (ash_hook_device_map(dev)))
ASH_DEV_HOOK_END(cuDevicePrimaryCtxReset_v2, (CUdevice dev), (ash_hook_device_map(dev)))
ASH_DEV_HOOK(cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags), (ash_hook_device_map(dev), flags))
ASH_DEV_HOOK(cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int *flags, int *active),
             (ash_hook_device_map(dev), flags, active))

/* The program sees one device: a bus id of any other answers CUDA_ERROR_INVALID_DEVICE, as the
 * driver does for a device CUDA_VISIBLE_DEVICES hides. */
ASH_EXPORT CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    ash_hook_init();
    if (ASH_UNLIKELY(ash_real.cuDeviceGetByPCIBusId == NULL))
        return ash_hook_missing("cuDeviceGetByPCIBusId");
    CUdevice d = -1;
    CUresult r = ash_real.cuDeviceGetByPCIBusId(dev ? &d : NULL, pciBusId); /* NULL: the driver's own error */
    if (r != CUDA_SUCCESS || dev == NULL)
        return r;
    CUdevice phys = d;
    if (ash_dev_physical(&phys) == CUDA_SUCCESS && d != phys)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = d;
    return CUDA_SUCCESS;
}
