# tests/hostcuda/module.mk — hostcuda: the CUDA 13 Driver API on host memory (docs/design.md §6).
# Builds $(HOSTCUDA_DIR)/libcuda.so.1 (soname libcuda.so.1) + libcuda.so symlink, the test kernels
# (PTX via nvcc, host implementations via cc) and the cmocka tests test_hc_*.

HOSTCUDA_SRC_DIR := tests/hostcuda
HOSTCUDA_SRCS := $(addprefix $(HOSTCUDA_SRC_DIR)/,hc_core.c hc_mem.c hc_copy.c hc_stream.c hc_ptx.c \
                   hc_module.c hc_errors.c hc_procaddr.c hc_fatbin.c \
                   hc_vmm.c hc_graph.c hc_gnode.c hc_capture.c hc_exec.c hc_exec_call.c hc_exec_ops.c hc_exec_num.c hc_exec_async.c hc_exec_mma.c \
                   hc_occupancy.c hc_limit.c hc_pool.c hc_copy3d.c hc_managed.c hc_ctxcfg.c hc_link.c \
                   hc_array.c hc_exec_tex.c)
HOSTCUDA_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(HOSTCUDA_SRCS)) $(BUILD)/shim/ptx/ash_ptx.o $(BUILD)/shim/ptx/ash_ptx_lex.o
HOSTCUDA_HDRS := $(addprefix $(HOSTCUDA_SRC_DIR)/,hc_internal.h hc_graph.h hc_ptx.h hc_api.def hostcuda.h hc_exec.h \
                   hc_exec_ops.h hc_exec_num.h hc_exec_int.h hc_tex.h hc_exec_mma.h) shim/ptx/ash_ptx.h shim/ptx/ash_ptx_int.h
# -Bsymbolic (link): hostcuda's references to its own functions (the cuGetProcAddress table, the
# thunks) bind inside it, as a real driver's do; a preloaded interposer cannot redirect them.
# __CUDA_API_VERSION_INTERNAL: cuda.h then declares every variant (legacy, _v2, _ptds, _ptsz) under
# its own name, as NVIDIA's own driver build sees it. -fno-ipa-icf: twins must stay distinct functions.
HOSTCUDA_CFLAGS := -D__CUDA_API_VERSION_INTERNAL -D__CUDA_API_PUSH_VISIBILITY_DEFAULT -fno-ipa-icf \
                   -I$(HOSTCUDA_SRC_DIR)
HOSTCUDA_LIB := $(HOSTCUDA_DIR)/libcuda.so.1

$(BUILD)/$(HOSTCUDA_SRC_DIR)/%.o: $(HOSTCUDA_SRC_DIR)/%.c $(HOSTCUDA_HDRS) include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) $(HOSTCUDA_CFLAGS) -c -o $@ $<

# the PTX reader (shim/ptx: pure C11, no hostcuda dependency); built here unless the library
# (libaccelshim.mk, included first) already builds shim/ptx
ifeq ($(filter shim/ptx,$(ASH_LIB_DIRS)),)
$(BUILD)/shim/ptx/%.o: shim/ptx/%.c shim/ptx/ash_ptx.h shim/ptx/ash_ptx_int.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -c -o $@ $<
endif
# the interpreter's floating point honours PTX rounding modes through fesetround
$(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec_ops.o $(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec_num.o: HOSTCUDA_CFLAGS += -frounding-math

$(HOSTCUDA_LIB): $(HOSTCUDA_OBJS) $(HOSTCUDA_SRC_DIR)/libcuda.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=$(HOSTCUDA_SRC_DIR)/libcuda.map \
	    -Wl,-Bsymbolic -Wl,--no-undefined -o $@ $(HOSTCUDA_OBJS) $(PTHREAD) -ldl -lm
	ln -sf libcuda.so.1 $(HOSTCUDA_DIR)/libcuda.so

# test kernels: written once (ASH_KERNEL), PTX for the module loader, host .so for the launches
HOSTCUDA_TKERN_PTX := $(HOSTCUDA_DIR)/test_kernels.ptx
HOSTCUDA_TKERN_SO := $(HOSTCUDA_DIR)/libtest_kernels_host.so
$(HOSTCUDA_TKERN_SO): $(HOSTCUDA_DIR)/test_kernels.host.o
	$(CC) -shared -o $@ $<

HOSTCUDA_TESTS := $(addprefix $(HOSTCUDA_DIR)/,test_hc_basic test_hc_memory test_hc_streams test_hc_kernels \
                    test_hc_vmm_graph test_hc_graph)
HOSTCUDA_TEST_LDFLAGS := -L$(HOSTCUDA_DIR) -Wl,-rpath,$(abspath $(HOSTCUDA_DIR))
$(HOSTCUDA_DIR)/test_hc_%: $(HOSTCUDA_SRC_DIR)/test_hc_%.c $(HOSTCUDA_SRC_DIR)/test_hc_util.h \
                           $(HOSTCUDA_SRC_DIR)/hostcuda.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -I$(HOSTCUDA_SRC_DIR) -rdynamic -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) \
	    -lcuda -lcmocka $(PTHREAD) -ldl

# the kernel test reads the PTX and opens the host .so at run time
$(HOSTCUDA_DIR)/test_hc_kernels: $(HOSTCUDA_TKERN_PTX) $(HOSTCUDA_TKERN_SO)

# hc_race: a deliberately racy program (test_hc_race.sh: jitter makes it fail every run)
$(HOSTCUDA_DIR)/hc_race: $(HOSTCUDA_SRC_DIR)/hc_race.c $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda

# fatbins of the test kernels, made by nvcc: default compression (zstd in CUDA 13), none, and a
# multi-entry one (an sm_80 cubin, compute_80 and compute_90 PTX); plus a cubin-only one
HOSTCUDA_FATBINS := $(addprefix $(HOSTCUDA_DIR)/test_kernels,.fatbin _nc.fatbin _multi.fatbin _sm80.fatbin)
$(HOSTCUDA_DIR)/test_kernels.fatbin: $(HOSTCUDA_SRC_DIR)/test_kernels.cu include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -gencode arch=compute_80,code=compute_80 -Iinclude -o $@ $<
$(HOSTCUDA_DIR)/test_kernels_nc.fatbin: $(HOSTCUDA_SRC_DIR)/test_kernels.cu include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin --no-compress -gencode arch=compute_80,code=compute_80 -Iinclude -o $@ $<
$(HOSTCUDA_DIR)/test_kernels_multi.fatbin: $(HOSTCUDA_SRC_DIR)/test_kernels.cu include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=compute_90 \
	    -Iinclude -o $@ $<
$(HOSTCUDA_DIR)/test_kernels_sm80.fatbin: $(HOSTCUDA_SRC_DIR)/test_kernels.cu include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -gencode arch=compute_80,code=sm_80 -Iinclude -o $@ $<
$(HOSTCUDA_DIR)/hc_fatbin_run: $(HOSTCUDA_SRC_DIR)/hc_fatbin_run.c $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda -ldl

# hc_ptx_check: the interpreter's load-time check on PTX files (tests/hostcuda/test_hc_ptx_corpus.sh)
$(HOSTCUDA_DIR)/hc_ptx_check: $(HOSTCUDA_SRC_DIR)/hc_ptx_check.c $(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec.o \
                              $(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec_call.o \
                              $(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec_ops.o $(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec_num.o \
                              $(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec_async.o \
                              $(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec_tex.o \
                              $(BUILD)/$(HOSTCUDA_SRC_DIR)/hc_exec_mma.o \
                              $(BUILD)/shim/ptx/ash_ptx.o $(BUILD)/shim/ptx/ash_ptx_lex.o | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -I/usr/local/cuda/include $(HOSTCUDA_CFLAGS) -o $@ $^ $(PTHREAD) -lm

# the interpreter's own tests: kernels with no host twin (exec_kernels.cu -> PTX)
$(HOSTCUDA_DIR)/exec_kernels.ptx: $(HOSTCUDA_SRC_DIR)/exec_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ $<
$(HOSTCUDA_DIR)/test_hc_exec: $(HOSTCUDA_SRC_DIR)/test_hc_exec.c $(HOSTCUDA_SRC_DIR)/test_hc_check.h $(HOSTCUDA_LIB) $(HOSTCUDA_DIR)/exec_kernels.ptx \
                              | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda

# cooperative launches, device malloc/free and the limits (coop_kernels.cu -> PTX)
$(HOSTCUDA_DIR)/coop_kernels.ptx: $(HOSTCUDA_SRC_DIR)/coop_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ $<
$(HOSTCUDA_DIR)/test_hc_coop: $(HOSTCUDA_SRC_DIR)/test_hc_coop.c $(HOSTCUDA_SRC_DIR)/test_hc_check.h $(HOSTCUDA_LIB) $(HOSTCUDA_DIR)/coop_kernels.ptx \
                              | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda
ALL += $(HOSTCUDA_DIR)/coop_kernels.ptx $(HOSTCUDA_DIR)/test_hc_coop
TESTS += $(HOSTCUDA_SRC_DIR)/test_hc_coop.sh

# the JIT linker (cuLink*) on hand-written PTX units (test_hc_link.sh)
$(HOSTCUDA_DIR)/test_hc_link: $(HOSTCUDA_SRC_DIR)/test_hc_link.c $(HOSTCUDA_SRC_DIR)/test_hc_check.h $(HOSTCUDA_LIB) \
                              | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda
ALL += $(HOSTCUDA_DIR)/test_hc_link
TESTS += $(HOSTCUDA_SRC_DIR)/test_hc_link.sh

$(HOSTCUDA_DIR)/hc_exec_matmul: $(HOSTCUDA_SRC_DIR)/hc_exec_matmul.c $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda -lm

ALL += $(HOSTCUDA_DIR)/hc_ptx_check $(HOSTCUDA_DIR)/exec_kernels.ptx $(HOSTCUDA_DIR)/test_hc_exec \
       $(HOSTCUDA_DIR)/hc_exec_matmul
TESTS += $(HOSTCUDA_SRC_DIR)/test_hc_exec.sh $(HOSTCUDA_SRC_DIR)/test_hc_exec_llmc.sh \
         $(HOSTCUDA_SRC_DIR)/test_hc_ptx_corpus.sh
ALL += $(HOSTCUDA_LIB) $(HOSTCUDA_TKERN_PTX) $(HOSTCUDA_TKERN_SO) $(HOSTCUDA_TESTS) $(HOSTCUDA_DIR)/hc_race \
       $(HOSTCUDA_FATBINS) $(HOSTCUDA_DIR)/hc_fatbin_run
TESTS += $(HOSTCUDA_TESTS) $(HOSTCUDA_SRC_DIR)/test_hc_exports.sh $(HOSTCUDA_SRC_DIR)/test_hc_valgrind.sh \
         $(HOSTCUDA_SRC_DIR)/test_hc_race.sh $(HOSTCUDA_SRC_DIR)/test_hc_fatbin.sh

# asynchronous copies, mbarriers, brx.idx, a device function's shared array (async_kernels.cu -> PTX)
$(HOSTCUDA_DIR)/async_kernels.ptx: $(HOSTCUDA_SRC_DIR)/async_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ $<
# the same for compute_90: cuda::barrier waits with mbarrier.try_wait there
$(HOSTCUDA_DIR)/async_kernels_90.ptx: $(HOSTCUDA_SRC_DIR)/async_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -arch=compute_90 -O2 -o $@ $<
$(HOSTCUDA_DIR)/test_hc_async: $(HOSTCUDA_SRC_DIR)/test_hc_async.c $(HOSTCUDA_SRC_DIR)/test_hc_check.h $(HOSTCUDA_LIB) \
                               $(HOSTCUDA_DIR)/async_kernels.ptx $(HOSTCUDA_DIR)/async_kernels_90.ptx | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda
ALL += $(HOSTCUDA_DIR)/async_kernels.ptx $(HOSTCUDA_DIR)/async_kernels_90.ptx $(HOSTCUDA_DIR)/test_hc_async
TESTS += $(HOSTCUDA_SRC_DIR)/test_hc_async.sh
# arrays, texture and surface objects through the Driver API alone (tex_kernels.cu -> PTX)
$(HOSTCUDA_DIR)/tex_kernels.ptx: $(HOSTCUDA_SRC_DIR)/tex_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ $<
$(HOSTCUDA_DIR)/test_hc_tex: $(HOSTCUDA_SRC_DIR)/test_hc_tex.c $(HOSTCUDA_SRC_DIR)/test_hc_check.h $(HOSTCUDA_LIB) \
                             $(HOSTCUDA_DIR)/tex_kernels.ptx | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda -lm
ALL += $(HOSTCUDA_DIR)/tex_kernels.ptx $(HOSTCUDA_DIR)/test_hc_tex
TESTS += $(HOSTCUDA_SRC_DIR)/test_hc_tex.sh
# tensor-core instructions (wmma, mma.sync, ldmatrix, stmatrix): mma_kernels.cu -> PTX
$(HOSTCUDA_DIR)/mma_kernels.ptx: $(HOSTCUDA_SRC_DIR)/mma_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ $<
$(HOSTCUDA_DIR)/test_hc_mma: $(HOSTCUDA_SRC_DIR)/test_hc_mma.c $(HOSTCUDA_SRC_DIR)/test_hc_check.h $(HOSTCUDA_LIB) \
                             $(HOSTCUDA_DIR)/mma_kernels.ptx | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(HOSTCUDA_TEST_LDFLAGS) -lcuda -lm
ALL += $(HOSTCUDA_DIR)/mma_kernels.ptx $(HOSTCUDA_DIR)/test_hc_mma
TESTS += $(HOSTCUDA_SRC_DIR)/test_hc_mma.sh
