# tests/explain — kernel facts from PTX (shim/ptx/ptx_facts.c) and `accelerate-run explain`:
#   ptx_facts_dump       prints the facts of a PTX file (one line per parameter)
#   test_ptx_facts.sh    the facts of the bundled trainers' kernels, of llm.c's fp32 trainer
#                        (compiled with nvcc at test time from ACCELSHIM_THIRDPARTY) and of small
#                        hand-written PTX (index vs pointer, calls, spills); mutated PTX as controls
#   fatbin_dump          what explain mode's image reader makes of a file (test_explain_images.sh)
#   test_explain.sh      `accelerate-run explain` on the bundled trainers: its reading names the
#                        kernels and arguments of examples/mlp.yaml, mlp-clip.yaml, layers.yaml
#   test_suggest.sh      `accelerate-run suggest`: its policies check and pass `accelerate-run test`
#   test_policy_auto.sh  `accelerate-run --policy auto`: suggested once, cached by sha256, printed
#   test_explain_valgrind.sh  explain mode and the reading under valgrind memcheck
#   test_explain_loads.sh  every image load hook (module, fatbinary, library, cudart wrappers)
EXPLAIN_DIR  := $(BUILD)/tests/explain
EXPLAIN_DUMP := $(EXPLAIN_DIR)/ptx_facts_dump
# the PTX reader and its facts: every source of shim/ptx/ (the reader is several files)
EXPLAIN_PTX_SRCS := $(sort $(wildcard shim/ptx/*.c))
EXPLAIN_PTX_HDRS := $(wildcard shim/ptx/*.h)

ALL += $(EXPLAIN_DUMP)
TESTS += tests/explain/test_ptx_facts.sh

$(EXPLAIN_DUMP): tests/explain/ptx_facts_dump.c $(EXPLAIN_PTX_SRCS) $(EXPLAIN_PTX_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Ishim/ptx -o $@ tests/explain/ptx_facts_dump.c $(EXPLAIN_PTX_SRCS)

# explain mode's image reader on its own (fatbins, wrappers, cubins, PTX text)
EXPLAIN_FATBIN_DUMP := $(EXPLAIN_DIR)/fatbin_dump
ALL += $(EXPLAIN_FATBIN_DUMP)
TESTS += tests/explain/test_explain_images.sh tests/explain/test_explain.sh tests/explain/test_suggest.sh tests/explain/test_policy_auto.sh
$(EXPLAIN_FATBIN_DUMP): tests/explain/fatbin_dump.c shim/core/image.c shim/core/ash_image.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Ishim/core -o $@ tests/explain/fatbin_dump.c shim/core/image.c -ldl

# an ELF cubin (SASS only) of the trainer's kernels, for the "no PTX" case
EXPLAIN_CUBIN := $(EXPLAIN_DIR)/mlp_kernels_sm80.cubin
ALL += $(EXPLAIN_CUBIN)
$(EXPLAIN_CUBIN): tests/trainers/mlp_kernels.cu include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -arch=sm_80 -Iinclude -o $@ $<

# the reading on a scripted launch sequence over real PTX (llm.c, which hostcuda cannot run)
EXPLAIN_SCRIPT := $(EXPLAIN_DIR)/reading_script
ALL += $(EXPLAIN_SCRIPT)
TESTS += tests/explain/test_reading_llmc.sh tests/explain/test_explain_valgrind.sh tests/explain/test_explain_loads.sh
$(EXPLAIN_SCRIPT): tests/explain/reading_script.c shim/explain/reading.c shim/explain/explain_int.h \
                   $(EXPLAIN_PTX_SRCS) $(EXPLAIN_PTX_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Ishim/explain -Ishim/ptx -o $@ tests/explain/reading_script.c \
	    shim/explain/reading.c $(EXPLAIN_PTX_SRCS) -lstdc++

# the step read from its forward pass when a run starts repeating at its update (scripted), and
# `accelerate-run suggest --cpu` on the real llm.c fp32 trainer (skips without the corpus)
TESTS += tests/explain/test_step_phase.sh tests/explain/test_suggest_llmc.sh
