/* threads.c — N threads (default 8) start together, before anything has initialised the shim,
 * and each resolves driver entry points through every door (dlsym on the driver handle,
 * dlsym(RTLD_DEFAULT), cuGetProcAddress_v2 with legacy and per-thread flags, legacy
 * cuGetProcAddress), sets up its own context, stream and buffer, and launches / copies / sets
 * through what it resolved, checking the data each round. Finishing at all proves no deadlock
 * in the lazy init or the doors; test_threads.sh runs it under ThreadSanitizer (a TSan build of
 * the shim) or helgrind for races. Usage: threads [NTHREADS [ROUNDS]].
 */
#include "itest.h"

#include <pthread.h>

static int rounds = 20;
static pthread_barrier_t start;
static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

#define TFAIL(...)                                                                         \
    do {                                                                                   \
        pthread_mutex_lock(&fail_lock);                                                    \
        printf(__VA_ARGS__);                                                               \
        printf("\n");                                                                      \
        failures++;                                                                        \
        pthread_mutex_unlock(&fail_lock);                                                  \
        return NULL;                                                                       \
    } while (0)

static void *worker(void *arg)
{
    long id = (long)arg;
    pthread_barrier_wait(&start);
    /* doors first, all threads at once: this is where the lazy init races */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    PFN_cuGetProcAddress_v12000 gpa2 = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
    PFN_cuGetProcAddress_v11030 gpa1 = (PFN_cuGetProcAddress_v11030)dlsym(RTLD_DEFAULT, "cuGetProcAddress");
    if (gpa2 == NULL || gpa1 == NULL)
        TFAIL("thread %ld: no cuGetProcAddress", id);
    void *launch = NULL, *launch_ptsz = NULL, *memset32 = NULL, *dtoh = NULL;
    CUdriverProcAddressQueryResult st;
    if (gpa2("cuLaunchKernel", &launch, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st) != CUDA_SUCCESS ||
        gpa2("cuLaunchKernel", &launch_ptsz, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) != CUDA_SUCCESS ||
        gpa1("cuMemsetD32", &memset32, 13000, CU_GET_PROC_ADDRESS_DEFAULT) != CUDA_SUCCESS)
        TFAIL("thread %ld: cuGetProcAddress failed", id);
    dtoh = dlsym(RTLD_DEFAULT, "cuMemcpyDtoH_v2");
    if (launch == launch_ptsz || dtoh == NULL || memset32 == NULL)
        TFAIL("thread %ld: bad resolution (legacy %p ptsz %p)", id, launch, launch_ptsz);
    itest_fix_t *fx = calloc(1, sizeof *fx);
    if (itest_setup(fx) != 0)
        TFAIL("thread %ld: not hostcuda", id);
    int host[ITEST_N];
    for (int r = 0; r < rounds; r++) {
        int v = (int)(id * 1000 + r);
        int n = ITEST_N;
        void *params[] = {&fx->dbuf, &v, &n};
        if (((PFN_cuMemsetD32_v3020)memset32)(fx->dbuf, 0, ITEST_N) != CUDA_SUCCESS)
            TFAIL("thread %ld: memset failed", id);
        void *l = (r & 1) ? launch_ptsz : launch;
        if (((PFN_cuLaunchKernel_v4000)l)(fx->fn, 1, 1, 1, ITEST_N, 1, 1, 0, fx->stream, params, NULL) != CUDA_SUCCESS)
            TFAIL("thread %ld: launch failed", id);
        fx->stream_sync(fx->stream);
        if (((PFN_cuMemcpyDtoH_v3020)dtoh)(host, fx->dbuf, sizeof host) != CUDA_SUCCESS)
            TFAIL("thread %ld: copy failed", id);
        for (int i = 0; i < ITEST_N; i++)
            if (host[i] != v)
                TFAIL("thread %ld round %d: element %d is %d, want %d", id, r, i, host[i], v);
        /* keep resolving while others launch */
        if (dlsym(lib, "cuLaunchKernel_ptsz") != launch_ptsz)
            TFAIL("thread %ld: dlsym(cuLaunchKernel_ptsz) differs from cuGetProcAddress's per-thread answer", id);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    if (argc > 2)
        rounds = atoi(argv[2]);
    if (getenv("ITEST_PTX") == NULL) {
        fprintf(stderr, "SKIP: ITEST_PTX not set\n");
        return 77;
    }
    pthread_t t[64];
    if (n < 1 || n > 64)
        n = 8;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("%d threads x %d rounds: %d failures\n", n, rounds, failures);
    return failures ? 1 : 0;
}
