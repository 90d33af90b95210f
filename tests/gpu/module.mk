# tests/gpu/module.mk — helpers of scripts/gpu-check.sh (the checks on a real driver) and its tests.
#   build/tests/gpu/gpu_probe     driver/device facts, PTX loads (dlopen only: runs without a driver)
#   build/tests/gpu/gpu_routing   routing probe for a real driver (no call counters): every door,
#                                 every variant; and --remap (what the program sees of devices)
#   build/tests/gpu/trace/libcuda.so.1  tracing driver: logs every cuGetProcAddress query, forwards
#                                 to TRACE_GPA_DRIVER (default hostcuda)
#   build/tests/gpu/rt_mlp_hostcheck  rt_mlp.cu built with `-cudart shared`, to run on hostcudart
# Tests: test_gpu_check_nogpu.sh (no GPU here: gpu-check exits 77 with one line -> skip),
#        test_gpu_check_fake.sh  (GPU_CHECK_FAKE=hostcuda: the script's checks run on hostcuda; the
#                                 output folder is what the device returns: <= 8 files, <= 2 down),
#        test_gpu_check_budget.sh (a hung step is killed at its cap/the hard stop; "not run: time"),
#        test_gpu_rt_libs.sh     (NCCL/cuBLAS found through Python wheels; routing-recorder summary),
#        test_rt_mlp_host.sh     (rt_mlp's host logic == mlp's, bit for bit, on host kernels),
#        test_cudart_queries.sh  (cudart13_queries.txt is what this toolkit's static cudart asks),
#        test_gpu_bundle.sh      (the runtime bundle stands in for a machine's missing Open MPI/libs;
#                                 no ssh: mpirun needs the isolated launcher),
#        test_world1_collectives.sh (ACCELSHIM_DEBUG_WORLD1_COLLECTIVES runs collectives at world 1).
# make gpu-bundle: build/gpu-rt, the runtime libraries to carry to a GPU machine (scripts/gpu-bundle.sh).
GPUT_DIR := $(BUILD)/tests/gpu
ALL += $(GPUT_DIR)/gpu_probe $(GPUT_DIR)/gpu_routing $(GPUT_DIR)/trace/libcuda.so.1
TESTS += tests/gpu/test_gpu_check_nogpu.sh tests/gpu/test_gpu_check_fake.sh tests/gpu/test_gpu_bundle.sh \
         tests/gpu/test_world1_collectives.sh tests/gpu/test_gpu_check_budget.sh tests/gpu/test_gpu_rt_libs.sh

.PHONY: gpu-bundle
gpu-bundle: all
	bash scripts/gpu-bundle.sh $(BUILD)/gpu-rt

$(GPUT_DIR)/gpu_probe: tests/gpu/gpu_probe.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -ldl

$(GPUT_DIR)/trace/libcuda.so.1: tests/gpu/trace_gpa.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -Wl,-soname,libcuda.so.1 -o $@ $< -ldl

# DT_NEEDED libcuda.so.1 (stub at link time); hooked names are weak references, so an older driver
# that lacks one (cuCtxCreate_v4 ...) still loads the program.
$(GPUT_DIR)/gpu_routing: tests/gpu/gpu_routing.c tests/intercept/itest.h intercept/hooks.def | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iintercept -Ishim/core -Ishim/sync -Itests/intercept $(CFLAGS) $(PTHREAD) -o $@ $< \
	    -Wl,--no-as-needed -L$(CUDA_HOME)/lib64/stubs -lcuda -Wl,--as-needed -ldl

# rt_mlp's host logic on hostcudart (tests/hostcudart): built when nvcc can build rt_mlp
GPUT_RT_CAN := $(if $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a),yes,)
ifeq ($(GPUT_RT_CAN),yes)
ALL += $(GPUT_DIR)/rt_mlp_hostcheck
TESTS += tests/gpu/test_rt_mlp_host.sh tests/gpu/test_cudart_queries.sh

$(GPUT_DIR)/rt_mlp_hostcheck: tests/trainers/rt_mlp.cu tests/trainers/mlp_kernels.cu tests/trainers/mlp_data.h \
                              include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -gencode arch=compute_80,code=compute_80 -Iinclude -Itests/trainers -o $@ $<
endif
