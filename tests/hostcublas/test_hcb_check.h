/* test_hcb_check.h — the checks of hostcublas's cmocka tests (test_hcb.c, test_hcb_blas.c): a
 * driver call that must succeed (CU_OK) and a cuBLAS status that must be the one expected
 * (ST_EXPECT / ST_OK), each failing the case with the file, line, call and both values.
 * Must not: be used outside a cmocka test (fail_msg ends the case). */
#ifndef TEST_HCB_CHECK_H
#define TEST_HCB_CHECK_H

#define CU_OK(call)                                                                                         \
    do {                                                                                                    \
        CUresult r_ = (call);                                                                               \
        if (r_ != CUDA_SUCCESS)                                                                             \
            fail_msg("%s:%d: %s returned %d", __FILE__, __LINE__, #call, (int)r_);                          \
    } while (0)
#define ST_EXPECT(call, want)                                                                               \
    do {                                                                                                    \
        cublasStatus_t s_ = (call), w_ = (want);                                                            \
        if (s_ != w_)                                                                                       \
            fail_msg("%s:%d: %s returned status %d, expected %d", __FILE__, __LINE__, #call, (int)s_,       \
                     (int)w_);                                                                              \
    } while (0)
#define ST_OK(call) ST_EXPECT(call, CUBLAS_STATUS_SUCCESS)

#endif /* TEST_HCB_CHECK_H */
