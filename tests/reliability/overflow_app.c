/* overflow_app.c — a stack overflow in a thread other than the one that initialised the shim,
 * for tests/reliability/test_crash.sh. main calls cuInit (the shim initialises on this thread and
 * gets its alternate stack), then starts one worker that, with --cuda-in-thread, first retains
 * device 0's primary context (what a thread that works with CUDA does; the shim then gives it an
 * alternate stack of its own), and then recurses without end in ash_overflow_deep. Without an
 * alternate stack no handler can run on an overflowed stack, so the report depends on the
 * thread's own one. Exit: killed by SIGSEGV; 2 if CUDA fails.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int touch_cuda;
static volatile int never = -1; /* the recursion's end, never reached (keeps -Winfinite-recursion quiet) */
static volatile char sink;

static __attribute__((noinline)) int ash_overflow_deep(int n)
{
    volatile char pad[1024];
    memset((char *)pad, n & 0x7f, sizeof pad);
    sink = pad[n % 1024];
    if (n == never)
        return 0;
    return ash_overflow_deep(n + 1) + pad[0]; /* not a tail call: every frame stays */
}

static void *worker(void *arg)
{
    (void)arg;
    if (touch_cuda) {
        CUdevice d;
        CUcontext c;
        if (cuDeviceGet(&d, 0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c, d) != CUDA_SUCCESS) {
            fprintf(stderr, "overflow_app: CUDA failed in the worker\n");
            return (void *)2;
        }
        fprintf(stderr, "overflow_app: worker retained a context\n");
    }
    return (void *)(long)ash_overflow_deep(0);
}

int main(int argc, char **argv)
{
    touch_cuda = argc > 1 && strcmp(argv[1], "--cuda-in-thread") == 0;
    if (cuInit(0) != CUDA_SUCCESS) {
        fprintf(stderr, "overflow_app: cuInit failed\n");
        return 2;
    }
    pthread_t t;
    void *rc = NULL;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    pthread_join(t, &rc);
    return (int)(long)rc;
}
