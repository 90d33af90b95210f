# bench/module.mk — benchmarks (printed side by side, never asserted; `make bench` runs them through
# scripts/run-bench.sh, which also writes build/bench/results.json):
#   bench/launch_overhead.sh   the shim's added cost per cuLaunchKernel that matches no rule
#                              (ns on the bench's fake driver and on hostcuda; instructions with callgrind)
#   bench/allreduce.sh         a 64 MiB f32 gradient all-reduced at a sync point on 2 ranks (allreduce_app
#                              under the shim, mpi and nccl backends, wires same/bf16/f16) vs plain
#                              MPI_Allreduce on a host buffer (allreduce_mpi), same run
#   bench/scaling.sh           weak scaling of the bundled trainer on hostcuda: samples/s at 1, 2, 4 ranks
#   bench/overlap.sh           gradient all-reduce overlapped with the backward pass (tests/trainers/layers,
#                              2 ranks, mpi and nccl): step time with no communication, without and with
#                              overlap (ready points), same run
#   bench/ptx_interp.sh        hostcuda's PTX interpreter: lane-instructions/s per core on a tiled GEMM, a
#                              shuffle reduction and an axpby, and one launch's speed-up from 1 to all cores
#   bench/llmc_step.sh         seconds per llm.c training step (tiny GPT-2): train_gpt2_fp32.cu on hostcuda
#                              vs llm.c's CPU trainer train_gpt2.c, same files, same run
BENCH_DIR := $(BUILD)/bench
ALL += $(BENCH_DIR)/launch_overhead $(BENCH_DIR)/fakecuda/libcuda.so.1 \
       $(BENCH_DIR)/allreduce_app $(BENCH_DIR)/allreduce_mpi $(BENCH_DIR)/allreduce_kernels.ptx \
       $(BENCH_DIR)/liballreduce_kernels_host.so
BENCHES += bench/launch_overhead.sh bench/allreduce.sh bench/scaling.sh bench/overlap.sh bench/ptx_interp.sh bench/llmc_step.sh
ALL += $(BENCH_DIR)/ptx_interp $(BENCH_DIR)/ptx_interp_kernels.ptx
$(BENCH_DIR)/ptx_interp: bench/ptx_interp.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda -lm
# run-bench.sh's results.json, and the allreduce bench's sync point reducing correctly (small, ~10 s)
TESTS += bench/test_bench.sh

$(BENCH_DIR)/fakecuda/libcuda.so.1: bench/fakecuda.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -Wl,-soname,libcuda.so.1 -o $@ $<

$(BENCH_DIR)/launch_overhead: bench/launch_overhead.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -Wl,--no-as-needed -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl

# the sync-point program: Driver API only (toolkit stub: hostcuda or the real driver at run time)
$(BENCH_DIR)/allreduce_app: bench/allreduce_app.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

$(BENCH_DIR)/allreduce_mpi: bench/allreduce_mpi.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(MPI_CFLAGS) -o $@ $< $(MPI_LIBS)

$(BENCH_DIR)/liballreduce_kernels_host.so: $(BENCH_DIR)/allreduce_kernels.host.o | $(DEPS_STAMP)
	$(CC) -shared -o $@ $<
