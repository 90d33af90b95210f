/* hc_occupancy.c — cuOccupancy*: how many blocks of a kernel fit on one SM of the H100-like device.
 * The model (per SM): 2048 threads, 32 blocks, 65536 registers allocated per warp in units of 256,
 * 233472 bytes of shared memory with 1024 reserved per block; a block may use at most 232448
 * bytes (the opt-in maximum; 49152 unless cuFuncSetAttribute raised MAX_DYNAMIC_SHARED_SIZE_BYTES).
 * A kernel's registers and static shared memory are what cuFuncGetAttribute reports (NUM_REGS,
 * SHARED_SIZE_BYTES; hostcuda's default is 32 registers and none). The SM count is the device's
 * (HOSTCUDA_SMS). Called from any thread; reads only the function's attributes.
 * Must not: launch or change a function's attributes; guess a register count the function does not
 * report (the stated default is used). */
#include "hc_internal.h"

enum {
    HC_OCC_THREADS_PER_SM = 2048, HC_OCC_BLOCKS_PER_SM = 32, HC_OCC_REGS_PER_SM = 65536,
    HC_OCC_REG_UNIT = 256, HC_OCC_SMEM_PER_SM = 233472, HC_OCC_SMEM_RESERVED = 1024,
    HC_OCC_SMEM_OPTIN = 232448, HC_OCC_MAX_THREADS = 1024,
};

static CUresult occ_func(CUfunction f, int *regs, int *smem, int *max_dyn, int *max_threads)
{
    CUresult r = cuFuncGetAttribute(regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    if (r == CUDA_SUCCESS)
        r = cuFuncGetAttribute(smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    if (r == CUDA_SUCCESS)
        r = cuFuncGetAttribute(max_dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
    if (r == CUDA_SUCCESS)
        r = cuFuncGetAttribute(max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
    if (r == CUDA_SUCCESS && *regs <= 0)
        *regs = 32;
    return r;
}

static int occ_blocks(int regs, int smem_static, int max_dyn, int max_threads, int block, size_t dyn)
{
    if (block <= 0 || block > max_threads || block > HC_OCC_MAX_THREADS || dyn > (size_t)max_dyn)
        return 0;
    int warps = (block + 31) / 32;
    int by_threads = HC_OCC_THREADS_PER_SM / (warps * 32);
    int regs_per_warp = (regs * 32 + HC_OCC_REG_UNIT - 1) / HC_OCC_REG_UNIT * HC_OCC_REG_UNIT;
    int by_regs = HC_OCC_REGS_PER_SM / regs_per_warp / warps;
    size_t smem = (size_t)smem_static + dyn + HC_OCC_SMEM_RESERVED;
    int by_smem = (int)(HC_OCC_SMEM_PER_SM / smem);
    int n = HC_OCC_BLOCKS_PER_SM;
    n = by_threads < n ? by_threads : n;
    n = by_regs < n ? by_regs : n;
    return by_smem < n ? by_smem : n;
}

int hc_occ_blocks_per_sm(int regs, int smem_static, int block, size_t dyn)
{
    return occ_blocks(regs > 0 ? regs : 32, smem_static, HC_OCC_SMEM_OPTIN, HC_OCC_MAX_THREADS, block, dyn);
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *num, CUfunction f, int block,
                                                                      size_t dyn, unsigned flags)
{
    HC_COUNT(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags);
    HC_CHECK_INIT();
    if (!num || flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
        return CUDA_ERROR_INVALID_VALUE;
    int regs, smem, max_dyn, max_threads;
    CUresult r = occ_func(f, &regs, &smem, &max_dyn, &max_threads);
    if (r != CUDA_SUCCESS)
        return r;
    *num = occ_blocks(regs, smem, max_dyn, max_threads, block, dyn);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *num, CUfunction f, int block, size_t dyn)
{
    HC_COUNT(cuOccupancyMaxActiveBlocksPerMultiprocessor);
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num, f, block, dyn, CU_OCCUPANCY_DEFAULT);
}

/* the block size with the most resident threads per SM (ties: the larger block), the grid that fills
 * the device with it; blockSizeToDynamicSMemSize, when given, says the dynamic memory of each size */
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block_out, CUfunction f,
                                                           CUoccupancyB2DSize b2d, size_t dyn, int limit,
                                                           unsigned flags)
{
    HC_COUNT(cuOccupancyMaxPotentialBlockSizeWithFlags);
    HC_CHECK_INIT();
    if (!min_grid || !block_out || limit < 0 || flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
        return CUDA_ERROR_INVALID_VALUE;
    int regs, smem, max_dyn, max_threads, sms = 0;
    CUdevice dev;
    CUresult r = occ_func(f, &regs, &smem, &max_dyn, &max_threads);
    if (r == CUDA_SUCCESS)
        r = cuCtxGetDevice(&dev);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    if (r != CUDA_SUCCESS)
        return r;
    int top = max_threads < HC_OCC_MAX_THREADS ? max_threads : HC_OCC_MAX_THREADS;
    if (limit > 0 && limit < top)
        top = limit;
    int best = 0, best_blocks = 0, best_threads = 0;
    for (int b = (top + 31) / 32 * 32; b > 0; b -= 32) {
        int bs = b > top ? top : b;
        int n = occ_blocks(regs, smem, max_dyn, max_threads, bs, b2d ? b2d(bs) : dyn);
        if (n * bs > best_threads) {
            best = bs, best_blocks = n, best_threads = n * bs;
        }
    }
    *block_out = best;
    *min_grid = best_blocks * sms;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block_out, CUfunction f,
                                                  CUoccupancyB2DSize b2d, size_t dyn, int limit)
{
    HC_COUNT(cuOccupancyMaxPotentialBlockSize);
    return cuOccupancyMaxPotentialBlockSizeWithFlags(min_grid, block_out, f, b2d, dyn, limit, CU_OCCUPANCY_DEFAULT);
}

/* the dynamic shared memory each of num_blocks blocks of `block` threads can have on one SM */
CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t *out, CUfunction f, int num_blocks, int block)
{
    HC_COUNT(cuOccupancyAvailableDynamicSMemPerBlock);
    HC_CHECK_INIT();
    if (!out || num_blocks <= 0 || block <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    int regs, smem, max_dyn, max_threads;
    CUresult r = occ_func(f, &regs, &smem, &max_dyn, &max_threads);
    if (r != CUDA_SUCCESS)
        return r;
    *out = 0;
    if (occ_blocks(regs, smem, HC_OCC_SMEM_OPTIN, max_threads, block, 0) < num_blocks)
        return CUDA_SUCCESS; /* that many blocks do not fit even without dynamic memory */
    long long per = HC_OCC_SMEM_PER_SM / num_blocks - HC_OCC_SMEM_RESERVED - smem;
    long long cap = (long long)HC_OCC_SMEM_OPTIN - smem;
    per = per < cap ? per : cap;
    *out = per > 0 ? (size_t)per : 0;
    return CUDA_SUCCESS;
}
