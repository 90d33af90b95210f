/* test_hc_util.h — helpers shared by hostcuda's cmocka tests (not part of hostcuda).
 * CU_EXPECT prints the call, the result's name and the expected name when they differ. */
#ifndef TEST_HC_UTIL_H
#define TEST_HC_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostcuda.h"

static inline const char *hc_t_name(CUresult r)
{
    const char *n = NULL;
    if (cuGetErrorName(r, &n) != CUDA_SUCCESS || !n)
        return "(unknown CUresult)";
    return n;
}

#define CU_EXPECT(call, want)                                                                    \
    do {                                                                                        \
        CUresult got_ = (call), want_ = (want);                                                 \
        if (got_ != want_)                                                                      \
            fail_msg("%s:%d: %s returned %s (%d), expected %s (%d)", __FILE__, __LINE__, #call,  \
                     hc_t_name(got_), (int)got_, hc_t_name(want_), (int)want_);                  \
    } while (0)
#define CU_OK(call) CU_EXPECT(call, CUDA_SUCCESS)

/* this test binary's path, from argv[0] (not /proc/self/exe, which is valgrind under valgrind);
 * main() must call hc_t_init(argv[0]) first */
static char hc_t_self[PATH_MAX];

static inline void hc_t_init(const char *argv0)
{
    if (!realpath(argv0, hc_t_self))
        snprintf(hc_t_self, sizeof hc_t_self, "%s", argv0);
}

/* directory of this test binary (for files built next to it) */
static inline void hc_t_self_dir(char *buf, size_t len)
{
    snprintf(buf, len, "%s", hc_t_self);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(buf, len, ".");
}

/* run this binary again as `self MODE` with extra environment; returns the wait status */
static inline int hc_t_rerun(const char *mode, const char *env1, const char *env2)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (env1)
            putenv((char *)env1);
        if (env2)
            putenv((char *)env2);
        execl(hc_t_self, hc_t_self, mode, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

/* retain device 0's primary context and make it current */
static inline int hc_t_setup_primary(void **state)
{
    CUcontext c;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(c) != CUDA_SUCCESS)
        return -1;
    *state = c;
    return 0;
}

static inline int hc_t_teardown_primary(void **state)
{
    (void)state;
    cuCtxSynchronize();
    return cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS ? 0 : -1;
}

static inline void hc_t_sleep_ms(int ms)
{
    usleep((useconds_t)ms * 1000);
}

#endif /* TEST_HC_UTIL_H */
