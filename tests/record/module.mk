# tests/record — recording, accelshim-compare and the NaN sentinel (issue 9) on the bundled
# trainer under hostcuda, and the scan kernels themselves (see each file's header for the
# properties it proves).
RECORD_TEST_KERNELS := $(BUILD)/tests/record/test_inspect_kernels
ALL += $(RECORD_TEST_KERNELS)

$(RECORD_TEST_KERNELS): tests/record/test_inspect_kernels.c $(BUILD)/shim/sync/inspect_kernels.host.o | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iinclude -o $@ $^

# exit_app: a Driver-API program that exits without freeing (toolkit stub; hostcuda at run time)
RECORD_EXIT_APP := $(BUILD)/tests/record/exit_app
ALL += $(RECORD_EXIT_APP)

$(RECORD_EXIT_APP): tests/record/exit_app.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

TESTS += $(RECORD_TEST_KERNELS) $(sort $(wildcard tests/record/test_*.sh))
