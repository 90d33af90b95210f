/* hc_ctxcfg.c — per-context settings and peers: cuCtxSet/GetCacheConfig, cuCtxSet/GetSharedMemConfig,
 * cuFuncSetSharedMemConfig, cuCtxResetPersistingL2Cache, cuCtxEnable/DisablePeerAccess and
 * cuDeviceGetP2PAttribute.
 * Host memory has no L1/shared split, no banks, no L2 and one address space for every device: the
 * settings are checked, kept on the context and read back; peer access is kept so the documented
 * errors answer as on a GPU, while copies and kernels reach every device's memory either way.
 * Threading: the context fields under hc_mu.
 * Must not: change what a copy or a kernel can reach (peer access is bookkeeping only).
 */
#include "hc_internal.h"

#define HC_CHECK_DEV(d)                                                                         \
    do {                                                                                       \
        if ((d) < 0 || (d) >= hc_ndev)                                                         \
            return CUDA_ERROR_INVALID_DEVICE;                                                  \
    } while (0)

/* the current context as c for body; with_rc_ is the call's result */
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

/* every pair of distinct devices shares the host's memory: access and atomics (host atomics) work,
 * every link ranks the same (0), and no CUDA arrays exist to reach */
CUresult CUDAAPI cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                         CUdevice dstDevice)
{
    HC_COUNT(cuDeviceGetP2PAttribute);
    HC_CHECK_INIT();
    HC_CHECK_DEV(srcDevice);
    HC_CHECK_DEV(dstDevice);
    if (srcDevice == dstDevice)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED: *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: *value = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- cache configuration, peers */
/* the preferred cache split and shared-memory bank size of the current context: checked, kept,
 * read back; host memory has neither, so nothing else changes */
CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config)
{
    HC_COUNT(cuCtxSetCacheConfig);
    if ((int)config < 0 || config > CU_FUNC_CACHE_PREFER_EQUAL)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_CTX(c, c->cache_config = config;);
}

CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
    HC_COUNT(cuCtxGetCacheConfig);
    if (!pconfig)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_CTX(c, *pconfig = c->cache_config;);
}

CUresult CUDAAPI cuCtxSetSharedMemConfig(CUsharedconfig config)
{
    HC_COUNT(cuCtxSetSharedMemConfig);
    if ((int)config < 0 || config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_CTX(c, c->shmem_config = config;);
}

CUresult CUDAAPI cuCtxGetSharedMemConfig(CUsharedconfig *pConfig)
{
    HC_COUNT(cuCtxGetSharedMemConfig);
    if (!pConfig)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    /* a bank size never set reads as the default, four bytes */
    WITH_CTX(c, *pConfig = c->shmem_config ? c->shmem_config : CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;);
}

/* no persisting L2 lines exist to reset */
CUresult CUDAAPI cuCtxResetPersistingL2Cache(void)
{
    HC_COUNT(cuCtxResetPersistingL2Cache);
    WITH_CTX(c, (void)c;);
}

/* peer access of the current context to another device's context: host memory is shared by every
 * device, so enabling changes nothing that copies or kernels see; it is kept so the documented
 * errors (already enabled, not enabled, the same device) answer as on a GPU */
CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
    HC_COUNT(cuCtxEnablePeerAccess);
    if (Flags != 0)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_CTX(c, if (!hc_ctx_valid(peerContext)) with_rc_ = CUDA_ERROR_INVALID_CONTEXT;
             else if (peerContext->dev == c->dev) with_rc_ = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
             else if (c->peers[peerContext->dev] == peerContext) with_rc_ = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
             else c->peers[peerContext->dev] = peerContext;);
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext)
{
    HC_COUNT(cuCtxDisablePeerAccess);
    WITH_CTX(c, if (!hc_ctx_valid(peerContext)) with_rc_ = CUDA_ERROR_INVALID_CONTEXT;
             else if (c->peers[peerContext->dev] != peerContext) with_rc_ = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
             else c->peers[peerContext->dev] = NULL;);
}

/* a function's shared-memory bank size: checked (a live function, a known size) and, as the
 * context's, without effect on host memory */
CUresult CUDAAPI cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
    HC_COUNT(cuFuncSetSharedMemConfig);
    HC_CHECK_INIT();
    if ((int)config < 0 || config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hfunc) == HC_K_FUNC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}
