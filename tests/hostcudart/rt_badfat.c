/* rt_badfat.c — the registration ABI with bad input, as a broken or foreign stub would call it:
 * a wrapper with the wrong magic, then a kernel of it launched. Property (test_hcrt_api.sh):
 * registration names the wrapper on stderr and does not crash; the launch answers
 * cudaErrorInvalidKernelImage; an unregistered host function cudaErrorInvalidDeviceFunction;
 * a pop without a push cudaErrorMissingConfiguration. Prints `ok`/`FAIL` lines; exit 1 on a FAIL.
 * Must not: link anything but the runtime under test (no driver calls of its own). */
#include <cuda_runtime_api.h>
#include <fatbinary_section.h>
#include <stdio.h>

void **__cudaRegisterFatBinary(void *fat_cubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize);
cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *host_fun);
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t s);
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream);

static int fails;
static void expect(const char *what, cudaError_t want, cudaError_t got)
{
    if (want == got) {
        printf("ok badfat: %s\n", what);
    } else {
        printf("FAIL badfat: %s: expected %s, got %s\n", what, cudaGetErrorName(want), cudaGetErrorName(got));
        fails++;
    }
}

static void host_stub(void) {}
static void not_a_kernel(void) {}

int main(void)
{
    static const unsigned long long junk[4] = {1, 2, 3, 4};
    static __fatBinC_Wrapper_t bad = {0x12345678, 1, junk, NULL};
    void **h = __cudaRegisterFatBinary(&bad);
    static char name[] = "bad_kernel";
    __cudaRegisterFunction(h, (const char *)host_stub, name, name, -1, NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(h);
    cudaKernel_t k = NULL;
    expect("__cudaGetKernel of a registered stub", cudaSuccess, __cudaGetKernel(&k, (const void *)host_stub));
    dim3 one = {1, 1, 1};
    expect("a launch from the bad wrapper", cudaErrorInvalidKernelImage, __cudaLaunchKernel(k, one, one, NULL, 0, 0));
    expect("__cudaGetKernel of no kernel", cudaErrorInvalidDeviceFunction, __cudaGetKernel(&k, (const void *)not_a_kernel));
    size_t shared;
    cudaStream_t s;
    expect("a pop without a push", cudaErrorMissingConfiguration, __cudaPopCallConfiguration(&one, &one, &shared, &s));
    void *d = NULL;
    expect("the runtime still works", cudaSuccess, cudaMalloc(&d, 16));
    return fails ? 1 : 0;
}
