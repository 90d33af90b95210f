/* fault_kernels.cu — faulty kernels for tests/ptx/test_ptx_faults.sh (run by ptx_fault_run): each
 * does one thing a GPU or compute-sanitizer reports. Thread 5 alone makes the bad access, so the
 * report can be checked for the thread and the exact address. PTX only (nvcc -ptx).
 */
#include <assert.h>
#include <stdio.h>

/* reads p[t], thread 5 reads p[n + bad] */
extern "C" __global__ void f_read(const int *p, int *out, int n, int bad)
{
    int t = threadIdx.x;
    out[t] = p[t == 5 ? n + bad : t];
}

/* writes p[t], thread 5 writes p[n + bad] */
extern "C" __global__ void f_write(int *p, int n, int bad)
{
    int t = threadIdx.x;
    p[t == 5 ? n + bad : t] = t;
}

/* thread 5 loads a 32-bit word from an address 2 bytes past a word boundary */
extern "C" __global__ void f_misaligned(const char *p, int *out)
{
    int t = threadIdx.x;
    out[t] = *(const int *)(p + 4 * t + (t == 5 ? 2 : 0));
}

/* spins until *flag changes, which nothing does */
extern "C" __global__ void f_hang(volatile int *flag, int *out)
{
    while (flag[0] == 0)
        ;
    out[0] = 1;
}

/* warp 0 waits at barrier 0 (the whole CTA of 64), warp 1 at barrier 1 (64): neither completes */
extern "C" __global__ void f_barrier(int *out)
{
    if (threadIdx.x < 32)
        asm volatile("bar.sync 0;" ::: "memory");
    else
        asm volatile("bar.sync 1, 64;" ::: "memory");
    out[threadIdx.x] = 1;
}

/* assert(p[t] < 5): thread 5 holds 7 */
extern "C" __global__ void f_assert(const int *p, int *out)
{
    int t = threadIdx.x;
    assert(p[t] < 5);
    out[t] = p[t];
}

/* device printf from every thread */
extern "C" __global__ void f_printf(const int *p)
{
    int t = threadIdx.x;
    printf("device printf: thread %d of block %d value %d half %.2f\n", t, blockIdx.x, p[t], p[t] * 0.5);
}

/* thread 5 reads shared memory far past the array's end (index from the host, so it is not folded) */
extern "C" __global__ void f_shared(const int *p, int *out, int far)
{
    __shared__ int s[32];
    int t = threadIdx.x;
    s[t] = p[t];
    __syncthreads();
    out[t] = s[t == 5 ? far : t];
}
