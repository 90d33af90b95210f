# tools/module.mk — command-line tools that work on what the shim writes (no CUDA):
#   build/bin/accelshim-compare   compare two records (ACCELSHIM_RECORD / accelerate-run --record)
#   build/bin/accelshim-equiv     the equivalence comparison: N ranks' saved parameters vs one
#                                 process with an N-times batch (libc + libm only)
# Parses JSON with jansson (libjansson-dev, scripts/install-deps.sh).
TOOLS_COMPARE := $(BUILD)/bin/accelshim-compare
ALL += $(TOOLS_COMPARE)

$(TOOLS_COMPARE): tools/accelshim-compare.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -ljansson -lm

TOOLS_EQUIV := $(BUILD)/bin/accelshim-equiv
ALL += $(TOOLS_EQUIV)
$(TOOLS_EQUIV): tools/accelshim-equiv.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lm

# build/bin/llmc-tiny: a tiny synthetic GPT-2 in llm.c's checkpoint, tokenizer and token formats,
# and the per-rank split of its data (docs/llmc.md); libc + libm only
TOOLS_LLMC_TINY := $(BUILD)/bin/llmc-tiny
ALL += $(TOOLS_LLMC_TINY)
$(TOOLS_LLMC_TINY): tools/llmc-tiny.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lm
