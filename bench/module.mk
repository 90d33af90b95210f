# bench/module.mk — benchmarks (printed side by side, never asserted):
#   bench/launch_overhead.sh   the shim's added cost per cuLaunchKernel that matches no rule
#                              (ns on the bench's fake driver and on hostcuda; instructions with callgrind)
BENCH_DIR := $(BUILD)/bench
ALL += $(BENCH_DIR)/launch_overhead $(BENCH_DIR)/fakecuda/libcuda.so.1
BENCHES += bench/launch_overhead.sh

$(BENCH_DIR)/fakecuda/libcuda.so.1: bench/fakecuda.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -Wl,-soname,libcuda.so.1 -o $@ $<

$(BENCH_DIR)/launch_overhead: bench/launch_overhead.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -Wl,--no-as-needed -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl
