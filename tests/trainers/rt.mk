# tests/trainers/rt.mk — rt_mlp, the runtime-API twin of the mlp trainer (tests/trainers/rt_mlp.cu).
#   build/tests/trainers/rt_mlp   nvcc the ordinary way: runtime API, <<<>>> launches, cudart linked
#                                 STATICALLY (nvcc's default), so the only way to the driver is
#                                 dlopen("libcuda.so.1") + cuGetProcAddress, as in most trainers.
# Built only when nvcc can link it (libcudart_static.a present; no GPU needed to build). It cannot
# run on hostcuda (cudart needs the driver's private tables): scripts/gpu-check.sh runs it.
# SASS for sm_90 (H100/H200) plus compute_80 PTX that any newer GPU JIT-compiles.
RT_MLP         := $(TRAINERS_DIR)/rt_mlp
RT_MLP_ARCH    ?= -gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=sm_90
RT_MLP_CAN     := $(if $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a),yes,)

# mlp.o also includes the shared host-side header
$(TRAINERS_DIR)/mlp.o: tests/trainers/mlp_data.h

ifeq ($(RT_MLP_CAN),yes)
ALL += $(RT_MLP)
TESTS += tests/trainers/test_rt_mlp_build.sh

$(RT_MLP): tests/trainers/rt_mlp.cu tests/trainers/mlp_kernels.cu tests/trainers/mlp_data.h \
           include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart static $(RT_MLP_ARCH) -Iinclude -Itests/trainers \
	    -Xcompiler -Wall,-Wextra -o $@ $<
endif
