# tests/mixed/module.mk — issue 10, mixed precision for unmodified binaries: fp32 cuBLAS GEMMs
# downcast by policy. build/tests/mixed/gemm_probe calls every hooked GEMM entry point (linked
# against the real -lcublas -lcublasLt: DT_NEEDED libcublas.so.13 / libcublasLt.so.13; the tests
# run it on build/tests/hostcublas + hostcuda). The tests are the scripts below.
MIXED_DIR   := $(BUILD)/tests/mixed
MIXED_PROBE := $(MIXED_DIR)/gemm_probe
MIXED_BLAS_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath-link,$(CUDA_HOME)/lib64 -lcublas -lcublasLt \
                   -L$(CUDA_HOME)/lib64/stubs -lcuda -lm

ALL   += $(MIXED_PROBE)
TESTS += tests/mixed/test_mixed_probe.sh tests/mixed/test_mixed_trainer.sh

$(MIXED_PROBE): tests/mixed/gemm_probe.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -fno-optimize-sibling-calls -o $@ $< $(MIXED_BLAS_LIBS)
