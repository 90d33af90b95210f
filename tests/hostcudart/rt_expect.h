/* rt_expect.h — the checks of hostcudart's test programs (rt_api.cu, rt_calls.cu, rt_graph.cu):
 * each prints "ok CASE: WHAT" or "FAIL CASE: WHAT: expected E, got G" (both sides) and counts the
 * failures in rt_fails; rt_cur names the case running. Single-threaded use: the counters are plain.
 * Must not: stop at a failure (every check of a case runs and prints). */
#ifndef RT_EXPECT_H
#define RT_EXPECT_H

#include <cuda_runtime.h>
#include <stdio.h>

static int rt_fails;
static const char *rt_cur = "";

#define EXPECT_EQ(what, expected, got)                                                                   \
    do {                                                                                                 \
        long long e_ = (long long)(expected), g_ = (long long)(got);                                     \
        if (e_ != g_) {                                                                                  \
            printf("FAIL %s: %s: expected %lld, got %lld\n", rt_cur, what, e_, g_);                      \
            rt_fails++;                                                                                  \
        } else                                                                                           \
            printf("ok %s: %s\n", rt_cur, what);                                                         \
    } while (0)
#define EXPECT_RT(what, expected, call)                                                                  \
    do {                                                                                                 \
        cudaError_t g_ = (call), e_ = (expected);                                                        \
        if (e_ != g_) {                                                                                  \
            printf("FAIL %s: %s: expected %s, got %s\n", rt_cur, what, cudaGetErrorName(e_),             \
                   cudaGetErrorName(g_));                                                                \
            rt_fails++;                                                                                  \
        } else                                                                                           \
            printf("ok %s: %s\n", rt_cur, what);                                                         \
    } while (0)

#endif /* RT_EXPECT_H */
