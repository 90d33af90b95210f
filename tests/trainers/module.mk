# tests/trainers — legacy-style test trainers (Driver API only) and their tests.
#   build/tests/trainers/mlp                     the MLP trainer (PTX embedded; DT_NEEDED libcuda.so.1)
#   build/tests/trainers/mlp_kernels.ptx         its kernels, nvcc (top-level pattern rule)
#   build/tests/trainers/libmlp_kernels_host.so  the same kernels for hostcuda (HOSTCUDA_KERNEL_LIBS)
#   build/tests/trainers/layers                  the synthetic multi-layer trainer (overlap tests, bench)
#   build/tests/trainers/layers_kernels.ptx, liblayers_kernels_host.so   its kernels, built like mlp's
TRAINERS_DIR     := $(BUILD)/tests/trainers
TRAINERS_MLP     := $(TRAINERS_DIR)/mlp
TRAINERS_MLP_PTX := $(TRAINERS_DIR)/mlp_kernels.ptx
TRAINERS_MLP_SO  := $(TRAINERS_DIR)/libmlp_kernels_host.so

TRAINERS_LAYERS     := $(TRAINERS_DIR)/layers
TRAINERS_LAYERS_PTX := $(TRAINERS_DIR)/layers_kernels.ptx
TRAINERS_LAYERS_SO  := $(TRAINERS_DIR)/liblayers_kernels_host.so

ALL += $(TRAINERS_MLP_PTX) $(TRAINERS_MLP_SO) $(TRAINERS_MLP)
ALL += $(TRAINERS_LAYERS_PTX) $(TRAINERS_LAYERS_SO) $(TRAINERS_LAYERS)
TESTS += tests/trainers/test_mlp_build.sh \
         tests/trainers/test_mlp_bad_options.sh \
         tests/trainers/test_mlp_loss_falls.sh \
         tests/trainers/test_mlp_determinism.sh \
         tests/trainers/test_mlp_update_modes.sh \
         tests/trainers/test_mlp_sharding.sh \
         tests/trainers/test_mlp_clip.sh \
         tests/trainers/test_mlp_lazy_cublas.sh \
         tests/trainers/test_layers_build.sh

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

$(TRAINERS_LAYERS_SO): $(TRAINERS_DIR)/layers_kernels.host.o | $(DEPS_STAMP)
	$(CC) -shared -o $@ $<

$(TRAINERS_DIR)/layers_ptx.o: tests/trainers/layers_ptx.S $(TRAINERS_LAYERS_PTX) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -c -Wa,-I$(TRAINERS_DIR) -o $@ $<

$(TRAINERS_DIR)/layers.o: tests/trainers/layers.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -c -o $@ $<

$(TRAINERS_LAYERS): $(TRAINERS_DIR)/layers.o $(TRAINERS_DIR)/layers_ptx.o | $(DEPS_STAMP)
	$(CC) $(CFLAGS) -o $@ $^ -L$(CUDA_HOME)/lib64/stubs -lcuda -lm
