# tests/report — the exit report (ACCELSHIM_REPORT JSON, info lines, job summary) and the
# timeline (ACCELSHIM_TRACE / accelerate-run --trace, merged per rank): shim/observe/report.c, trace.c.
TESTS += $(sort $(wildcard tests/report/test_*.sh))

# the fusion state machine alone: shim/sync/fuse.c, the test playing the engine (collectives stubbed)
REPORT_FUSE_UNIT := $(BUILD)/tests/report/test_fuse_unit
$(REPORT_FUSE_UNIT): tests/report/test_fuse_unit.c shim/sync/fuse.c shim/sync/ash_fuse.h shim/core/ash_driver.h \
                     policy/ash_policy.h collectives/ash_coll.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim/core -Ishim/sync -Ipolicy -Icollectives $(CFLAGS) -o $@ tests/report/test_fuse_unit.c shim/sync/fuse.c
ALL += $(REPORT_FUSE_UNIT)
TESTS += $(REPORT_FUSE_UNIT)
