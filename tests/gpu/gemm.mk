# tests/gpu/gemm.mk — build/tests/gpu/gemm_bench: the GEMM-bound program of scripts/gpu-check.sh's
# `matmul` checks (cublasSgemm_v2 in a loop; ms per GEMM and a checksum of C). Links the real
# -lcublas from the toolkit (DT_NEEDED libcublas.so.13, no rpath) and the driver stub (DT_NEEDED
# libcuda.so.1): on a GPU it runs on the real libraries, on hostcuda with build/tests/hostcublas
# and build/tests/hostcuda first on LD_LIBRARY_PATH (gpu-check's GPU_CHECK_FAKE=hostcuda).
GPUT_GEMM_BENCH := $(BUILD)/tests/gpu/gemm_bench
ALL += $(GPUT_GEMM_BENCH)

$(GPUT_GEMM_BENCH): tests/gpu/gemm_bench.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -Wl,-rpath-link,$(CUDA_HOME)/lib64 -lcublas \
	    -L$(CUDA_HOME)/lib64/stubs -lcuda
