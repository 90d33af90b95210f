# tests/intercept/module.mk — tests of the intercept layer and the shim core (all on hostcuda;
# each skips with 77 while hostcuda or the trainer is not built).
ITEST_DIR      := $(BUILD)/tests/intercept
ITEST_CPPFLAGS := $(CPPFLAGS) -Iintercept -Ishim/core -Ishim/sync -Itests/intercept
ITEST_HDRS     := tests/intercept/itest.h tests/intercept/itrain.h intercept/hooks.def
# DT_NEEDED libcuda.so.1 (stubs at link time; hostcuda or the real driver at run time)
ITEST_LIBCUDA  := -Wl,--no-as-needed -L$(CUDA_HOME)/lib64/stubs -lcuda -Wl,--as-needed
ITEST_PROGS    := routing_probe routing_direct threads remap alloc_table dlsym_next missing kernel_handles \
                  devquery vmm_train graph_train route_name hand_graph
ITEST_BINS     := $(addprefix $(ITEST_DIR)/,$(ITEST_PROGS))

ALL += $(ITEST_BINS) $(ITEST_DIR)/kernels.ptx $(ITEST_DIR)/libitest_kernels.so \
       $(ITEST_DIR)/libnext_a.so $(ITEST_DIR)/libnext_b.so $(ITEST_DIR)/libpartial_driver.so
TESTS += tests/intercept/test_exports.sh \
         tests/intercept/test_no_constructor.sh \
         tests/intercept/test_routing.sh \
         tests/intercept/test_route_name.sh \
         tests/intercept/test_routing_jitter.sh \
         tests/intercept/test_pfn_versions.sh \
         tests/intercept/test_missing_symbols.sh \
         tests/intercept/test_dlsym_next.sh \
         tests/intercept/test_threads.sh \
         tests/intercept/test_remap.sh \
         tests/intercept/test_devquery.sh \
         tests/intercept/test_vmm_allocation.sh \
         tests/intercept/test_graph_capture.sh \
         tests/intercept/test_hand_graph.sh \
         tests/intercept/test_hand_graph_rt.sh \
         tests/intercept/test_alloc_table.sh \
         tests/intercept/test_log.sh \
         tests/intercept/test_kernel_handles.sh \
         tests/intercept/test_passthrough_mlp.sh

# rt_hand_graph: graphs built by hand through the CUDA runtime (an nvcc -cudart shared program,
# run on hostcudart; test_hand_graph_rt.sh)
$(ITEST_DIR)/rt_hand_graph: tests/intercept/rt_hand_graph.cu $(HOSTCUDART_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) -o $@ $<
ALL += $(ITEST_DIR)/rt_hand_graph

$(ITEST_DIR)/libitest_kernels.so: $(ITEST_DIR)/kernels.host.o | $(DEPS_STAMP)
	$(CC) -shared -o $@ $<

$(ITEST_DIR)/%.o: tests/intercept/%.c $(ITEST_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ITEST_CPPFLAGS) $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(ITEST_DIR)/dlsym_next: $(ITEST_DIR)/dlsym_next.o $(ITEST_DIR)/libnext_a.so $(ITEST_DIR)/libnext_b.so
	$(CC) $(CFLAGS) -o $@ $< -L$(ITEST_DIR) -Wl,--no-as-needed -lnext_a -lnext_b -Wl,-rpath,'$$ORIGIN' \
	    $(ITEST_LIBCUDA) -ldl

$(ITEST_DIR)/libnext_%.so: tests/intercept/next_%.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=default -shared -o $@ $< -ldl

$(ITEST_DIR)/libpartial_driver.so: tests/intercept/partial_driver.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $<

$(ITEST_DIR)/%: $(ITEST_DIR)/%.o
	$(CC) $(CFLAGS) $(PTHREAD) -o $@ $< $(ITEST_LIBCUDA) -ldl

# ThreadSanitizer build of the shim and of the threads test, when the compiler can do it.
# doors.c stays uninstrumented: a sanitizer runtime calls dlsym (ours, preloaded) before it is
# initialised, and instrumented code would call into it too early.
ITEST_TSAN_OK := $(shell echo 'int main(void){return 0;}' | $(CC) -fsanitize=thread -x c - -o /dev/null 2>/dev/null && echo yes)
ifeq ($(ITEST_TSAN_OK),yes)
ITEST_TSAN_DIR  := $(ITEST_DIR)/tsan
ITEST_TSAN_SRCS := $(filter-out intercept/doors.c,$(ASH_LIB_SRCS))
ITEST_TSAN_OBJS := $(patsubst %.c,$(ITEST_TSAN_DIR)/%.o,$(ITEST_TSAN_SRCS)) $(ITEST_TSAN_DIR)/intercept/doors.o
ITEST_TSAN_FLAGS := $(filter-out -O2,$(CFLAGS)) -O1
ALL += $(ITEST_TSAN_DIR)/libaccelshim.so $(ITEST_TSAN_DIR)/threads

$(ITEST_TSAN_DIR)/intercept/doors.o: intercept/doors.c $(ASH_LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ASH_LIB_CPPFLAGS) $(ITEST_TSAN_FLAGS) $(PTHREAD) -c -o $@ $<

$(ITEST_TSAN_DIR)/%.o: %.c $(ASH_LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ASH_LIB_CPPFLAGS) $(ITEST_TSAN_FLAGS) -fsanitize=thread $(PTHREAD) -c -o $@ $<

# the same parts and link line as libaccelshim.mk, objects built with -fsanitize=thread
$(ITEST_TSAN_DIR)/libaccelshim.so: $(ITEST_TSAN_OBJS) $(ASH_LIB_BLOBS) $(ASH_LIB_ARCHIVES) intercept/exports.map
	$(CC) -shared -fsanitize=thread $(PTHREAD) -o $@ $(ITEST_TSAN_OBJS) $(ASH_LIB_BLOBS) $(ASH_LIB_LDFLAGS) \
	    $(ASH_LIB_ARCHIVES) $(ASH_LIB_LDLIBS)

$(ITEST_TSAN_DIR)/threads: tests/intercept/threads.c $(ITEST_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ITEST_CPPFLAGS) $(ITEST_TSAN_FLAGS) -fsanitize=thread $(PTHREAD) -o $@ $< $(ITEST_LIBCUDA) -ldl
endif
