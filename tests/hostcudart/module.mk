# tests/hostcudart/module.mk — hostcudart: the CUDA 13 runtime on the Driver API (tests/hostcudart/README.md).
# Builds $(HOSTCUDART_DIR)/libcudart.so.13 (soname libcudart.so.13, every export at NVIDIA's version
# node `libcudart.so.13`) + a libcudart.so link, linked -lcuda against hostcuda's driver (any
# libcuda.so.1 on the library path serves at run time), and the test programs.

HOSTCUDART_SRC_DIR := tests/hostcudart
HOSTCUDART_DIR := $(BUILD)/tests/hostcudart
HOSTCUDART_LIB := $(HOSTCUDART_DIR)/libcudart.so.13
HOSTCUDART_HDRS := $(addprefix $(HOSTCUDART_SRC_DIR)/,hcrt_internal.h hcrt_api.def hcrt_errors.def)
HOSTCUDART_OBJS := $(addprefix $(HOSTCUDART_DIR)/,hcrt_core.o hcrt_register.o hcrt_mem.o hcrt_stream.o \
                     hcrt_stream_pt.o hcrt_graph.o hcrt_unimpl.o hcrt_pool.o \
                     hcrt_pitched.o hcrt_pitched_pt.o hcrt_device.o hcrt_tex.o hcrt_arraycopy.o \
                     hcrt_arraycopy_pt.o)

$(HOSTCUDART_DIR)/%.o: $(HOSTCUDART_SRC_DIR)/%.c $(HOSTCUDART_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -I$(HOSTCUDART_SRC_DIR) -c -o $@ $<
# the same source again: the headers rename each function and driver call to its per-thread twin
$(HOSTCUDART_DIR)/hcrt_stream_pt.o: $(HOSTCUDART_SRC_DIR)/hcrt_stream.c $(HOSTCUDART_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -DCUDA_API_PER_THREAD_DEFAULT_STREAM -I$(HOSTCUDART_SRC_DIR) -c -o $@ $<
$(HOSTCUDART_DIR)/hcrt_pitched_pt.o: $(HOSTCUDART_SRC_DIR)/hcrt_pitched.c $(HOSTCUDART_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -DCUDA_API_PER_THREAD_DEFAULT_STREAM -I$(HOSTCUDART_SRC_DIR) -c -o $@ $<

$(HOSTCUDART_DIR)/hcrt_arraycopy_pt.o: $(HOSTCUDART_SRC_DIR)/hcrt_arraycopy.c $(HOSTCUDART_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -DCUDA_API_PER_THREAD_DEFAULT_STREAM -I$(HOSTCUDART_SRC_DIR) -c -o $@ $<

$(HOSTCUDART_LIB): $(HOSTCUDART_OBJS) $(HOSTCUDART_SRC_DIR)/libcudart.map $(HOSTCUDA_LIB)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script=$(HOSTCUDART_SRC_DIR)/libcudart.map \
	    -Wl,--no-undefined -o $@ $(HOSTCUDART_OBJS) -L$(HOSTCUDA_DIR) -lcuda $(PTHREAD)
	ln -sf libcudart.so.13 $(HOSTCUDART_DIR)/libcudart.so

ALL += $(HOSTCUDART_LIB)

# rt_calls: the runtime calls beyond malloc/copy/launch (pools, stream attach, peers, 2D/3D, ...), no kernels
$(HOSTCUDART_DIR)/rt_calls: $(HOSTCUDART_SRC_DIR)/rt_calls.cu $(HOSTCUDART_SRC_DIR)/rt_expect.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) -o $@ $< -L$(HOSTCUDA_DIR) -lcuda
$(HOSTCUDART_DIR)/rt_calls_ptsz: $(HOSTCUDART_SRC_DIR)/rt_calls.cu $(HOSTCUDART_SRC_DIR)/rt_expect.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) --default-stream per-thread -DRT_CALLS_PTSZ -o $@ $< -L$(HOSTCUDA_DIR) -lcuda
ALL += $(HOSTCUDART_DIR)/rt_calls $(HOSTCUDART_DIR)/rt_calls_ptsz
TESTS += $(HOSTCUDART_SRC_DIR)/test_hcrt_calls.sh

# test programs: rt_api (two fatbins: rt_api.cu + rt_kernels_b.cu), its per-thread-stream build,
# their kernels' host twins, and the fault injector the sticky-error case preloads
HOSTCUDART_RT_SRCS := $(addprefix $(HOSTCUDART_SRC_DIR)/,rt_api.cu rt_kernels_a.cu rt_kernels_b.cu rt_expect.h)
HOSTCUDART_NVCC := $(NVCC) -O2 -cudart shared -gencode arch=compute_80,code=compute_80 -Iinclude -I$(HOSTCUDART_SRC_DIR)
$(HOSTCUDART_DIR)/rt_api: $(HOSTCUDART_RT_SRCS) include/ash_kernel.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) -o $@ $(HOSTCUDART_SRC_DIR)/rt_api.cu $(HOSTCUDART_SRC_DIR)/rt_kernels_b.cu -L$(HOSTCUDA_DIR) -lcuda
$(HOSTCUDART_DIR)/rt_api_ptsz: $(HOSTCUDART_RT_SRCS) include/ash_kernel.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) --default-stream per-thread -DRT_API_PTSZ -o $@ $(HOSTCUDART_SRC_DIR)/rt_api.cu \
	    $(HOSTCUDART_SRC_DIR)/rt_kernels_b.cu -L$(HOSTCUDA_DIR) -lcuda
# the same with relocatable device code: its registered fatbin needs a device link (cuLink*)
$(HOSTCUDART_DIR)/rt_api_rdc: $(HOSTCUDART_RT_SRCS) include/ash_kernel.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) -rdc=true -o $@ $(HOSTCUDART_SRC_DIR)/rt_api.cu $(HOSTCUDART_SRC_DIR)/rt_kernels_b.cu \
	    -L$(HOSTCUDA_DIR) -lcuda
$(HOSTCUDART_DIR)/librt_kernels_host.so: $(HOSTCUDART_DIR)/rt_kernels_a.host.o $(HOSTCUDART_DIR)/rt_kernels_b.host.o
	$(CC) -shared -o $@ $^
$(HOSTCUDART_DIR)/fault_inject.so: $(HOSTCUDART_SRC_DIR)/fault_inject.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -shared -o $@ $< -ldl
$(HOSTCUDART_DIR)/rt_badfat: $(HOSTCUDART_SRC_DIR)/rt_badfat.c $(HOSTCUDART_LIB) | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< -L$(HOSTCUDART_DIR) -lcudart -Wl,-rpath-link,$(HOSTCUDA_DIR)

# CUDA graphs: capture, hand-built graphs, updates, memory nodes (test_hcrt_graph.sh)
$(HOSTCUDART_DIR)/rt_graph: $(HOSTCUDART_SRC_DIR)/rt_graph.cu $(HOSTCUDART_SRC_DIR)/rt_expect.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) -o $@ $< -L$(HOSTCUDA_DIR) -lcuda
# an ordinary Thrust program, built as a user builds one (nvcc's default code, -cudart shared)
$(HOSTCUDART_DIR)/rt_thrust: $(HOSTCUDART_SRC_DIR)/rt_thrust.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -cudart shared -Wno-deprecated-gpu-targets -o $@ $<
# rt_coop: cooperative launches and limits through the runtime (test_hcrt_coop.sh)
$(HOSTCUDART_DIR)/rt_coop: $(HOSTCUDART_SRC_DIR)/rt_coop.cu $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) -o $@ $< -L$(HOSTCUDA_DIR) -lcuda

# rt_rdc: two translation units that need each other, built as CMake's separable compilation
# builds them (nvcc -rdc=true, nvcc's default code): test_hcrt_rdc.sh
$(HOSTCUDART_DIR)/rt_rdc: $(HOSTCUDART_SRC_DIR)/rt_rdc_main.cu $(HOSTCUDART_SRC_DIR)/rt_rdc_dev.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -rdc=true -cudart shared -Wno-deprecated-gpu-targets -o $@ $^

HOSTCUDART_PROGS := $(addprefix $(HOSTCUDART_DIR)/,rt_api rt_api_ptsz rt_api_rdc librt_kernels_host.so fault_inject.so \
                      rt_badfat rt_thrust rt_coop rt_graph rt_rdc)
ALL += $(HOSTCUDART_PROGS)
TESTS += $(HOSTCUDART_SRC_DIR)/test_hcrt_exports.sh $(HOSTCUDART_SRC_DIR)/test_hcrt_api.sh \
         $(HOSTCUDART_SRC_DIR)/test_hcrt_shim.sh $(HOSTCUDART_SRC_DIR)/test_hcrt_valgrind.sh \
         $(HOSTCUDART_SRC_DIR)/test_hcrt_thrust.sh $(HOSTCUDART_SRC_DIR)/test_hcrt_coop.sh \
         $(HOSTCUDART_SRC_DIR)/test_hcrt_graph.sh $(HOSTCUDART_SRC_DIR)/test_hcrt_rdc.sh

# rt_tex: CUDA arrays, texture and surface objects, runtime and Driver API (test_hcrt_tex.sh)
$(HOSTCUDART_DIR)/rt_tex: $(HOSTCUDART_SRC_DIR)/rt_tex.cu $(HOSTCUDART_SRC_DIR)/rt_expect.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) -o $@ $< -L$(HOSTCUDA_DIR) -lcuda
ALL += $(HOSTCUDART_DIR)/rt_tex
TESTS += $(HOSTCUDART_SRC_DIR)/test_hcrt_tex.sh
