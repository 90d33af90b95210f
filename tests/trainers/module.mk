# tests/trainers — legacy-style test trainers (Driver API only) and their tests.
#   build/tests/trainers/mlp                     the MLP trainer (PTX embedded; DT_NEEDED libcuda.so.1)
#   build/tests/trainers/mlp_kernels.ptx         its kernels, nvcc (top-level pattern rule)
#   build/tests/trainers/libmlp_kernels_host.so  the same kernels for hostcuda (HOSTCUDA_KERNEL_LIBS)
TRAINERS_DIR     := $(BUILD)/tests/trainers
TRAINERS_MLP     := $(TRAINERS_DIR)/mlp
TRAINERS_MLP_PTX := $(TRAINERS_DIR)/mlp_kernels.ptx
TRAINERS_MLP_SO  := $(TRAINERS_DIR)/libmlp_kernels_host.so

ALL += $(TRAINERS_MLP_PTX) $(TRAINERS_MLP_SO) $(TRAINERS_MLP)
TESTS += tests/trainers/test_mlp_build.sh \
         tests/trainers/test_mlp_bad_options.sh \
         tests/trainers/test_mlp_loss_falls.sh \
         tests/trainers/test_mlp_determinism.sh \
         tests/trainers/test_mlp_update_modes.sh \
         tests/trainers/test_mlp_sharding.sh \
         tests/trainers/test_mlp_clip.sh \
         tests/trainers/test_mlp_lazy_cublas.sh

$(TRAINERS_MLP_SO): $(TRAINERS_DIR)/mlp_kernels.host.o | $(DEPS_STAMP)
	$(CC) -shared -o $@ $< -lm

$(TRAINERS_DIR)/mlp_ptx.o: tests/trainers/mlp_ptx.S $(TRAINERS_MLP_PTX) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -c -Wa,-I$(TRAINERS_DIR) -o $@ $<

$(TRAINERS_DIR)/mlp.o: tests/trainers/mlp.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -c -o $@ $<

# -lcuda from the toolkit's stubs: DT_NEEDED libcuda.so.1, no rpath; the loader finds the real
# driver on a GPU machine, or hostcuda via LD_LIBRARY_PATH=$(HOSTCUDA_DIR).
# cuBLAS (--gemm cublas) is dlopen'ed at first use, no DT_NEEDED: libcublas.so.13 is found then as
# the real library (ld.so cache / LD_LIBRARY_PATH, e.g. a Python wheel's lib/) or, on hostcuda,
# build/tests/hostcublas.
$(TRAINERS_MLP): $(TRAINERS_DIR)/mlp.o $(TRAINERS_DIR)/mlp_ptx.o | $(DEPS_STAMP)
	$(CC) $(CFLAGS) -o $@ $^ -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl -lm
