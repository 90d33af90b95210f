# tools/module.mk — command-line tools that work on what the shim writes (no CUDA):
#   build/bin/accelshim-compare   compare two records (ACCELSHIM_RECORD / accelerate-run --record)
# Parses JSON with jansson (libjansson-dev, scripts/install-deps.sh).
TOOLS_COMPARE := $(BUILD)/bin/accelshim-compare
ALL += $(TOOLS_COMPARE)

$(TOOLS_COMPARE): tools/accelshim-compare.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -ljansson -lm
