# tests/equivalence — N ranks under accelshim vs one big-batch rank (docs/design.md, "the
# equivalence property"). The comparison is tools/accelshim-equiv.c (build/bin/accelshim-equiv);
# build/tests/equivalence/fcompare is the same program under the name older scripts call.
EQUIV_TOOL := $(BUILD)/tests/equivalence/fcompare
ALL += $(EQUIV_TOOL)
$(EQUIV_TOOL): $(BUILD)/bin/accelshim-equiv
	@mkdir -p $(dir $@)
	ln -sf ../../bin/accelshim-equiv $@
TESTS += $(sort $(wildcard tests/equivalence/test_*.sh))
