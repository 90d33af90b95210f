# tests/equivalence — N ranks under accelshim vs one big-batch rank (DESIGN.md §7).
EQUIV_TOOL := $(BUILD)/tests/equivalence/fcompare
ALL += $(EQUIV_TOOL)
$(EQUIV_TOOL): tests/equivalence/fcompare.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lm
TESTS += $(sort $(wildcard tests/equivalence/test_*.sh))
