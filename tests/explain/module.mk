# tests/explain — kernel facts from PTX (shim/ptx/ptx_facts.c) and `accelerate-run explain`:
#   ptx_facts_dump       prints the facts of a PTX file (one line per parameter)
#   test_ptx_facts.sh    the facts of the bundled trainers' kernels, of llm.c's fp32 trainer
#                        (compiled with nvcc at test time from ACCELSHIM_THIRDPARTY) and of small
#                        hand-written PTX (index vs pointer, calls, spills); mutated PTX as controls
EXPLAIN_DIR  := $(BUILD)/tests/explain
EXPLAIN_DUMP := $(EXPLAIN_DIR)/ptx_facts_dump

ALL += $(EXPLAIN_DUMP)
TESTS += tests/explain/test_ptx_facts.sh

$(EXPLAIN_DUMP): tests/explain/ptx_facts_dump.c shim/ptx/ptx_facts.c shim/ptx/ash_ptx.c \
                 shim/ptx/ash_ptx.h shim/ptx/ash_ptx_facts.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Ishim/ptx -o $@ tests/explain/ptx_facts_dump.c \
	    shim/ptx/ptx_facts.c shim/ptx/ash_ptx.c
