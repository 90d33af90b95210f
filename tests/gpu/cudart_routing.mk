# tests/gpu/cudart_routing.mk — NVIDIA's static cudart through the shim on hostcuda (issue: the
# runtime's own cuGetProcAddress requests as a regression test; docs/hostcuda.md).
#   build/tests/gpu/rt_min   the smallest runtime-API program, nvcc defaults (cudart static)
# Test: test_cudart_routing.sh (rt_min and rt_mlp: every request recorded, hooked names handed out
# as hooks, the rest untouched, initialisation stops the documented way; golden cudart13_routing.tsv).
CUDART_RT_CAN := $(if $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a),yes,)
ifeq ($(CUDART_RT_CAN),yes)
ALL += $(BUILD)/tests/gpu/rt_min
TESTS += tests/gpu/test_cudart_routing.sh

$(BUILD)/tests/gpu/rt_min: tests/gpu/rt_min.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart static -gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=sm_90 \
	    -o $@ $<
endif
