# tests/reliability — what happens when a rank misbehaves or the input is hostile (issue 6):
#   test_fingerprint.sh  check_collectives catches a rank reducing a different count (exit 3)
#   test_watchdog.sh     a stalled rank is reported by the ranks waiting for it (exit 4), mpi+nccl
#   test_crash.sh        a segfault's backtrace reaches accelerate-run's root-cause block
#   test_checkpoint.sh   libaccelshim-io.so: one writer per main_process_only output
#   test_env_garbage.sh  one clear line per bad ACCELSHIM_* value; fatal vs warning as documented
#   test_unsynced.sh     rules that never fired are named with the nearest kernel; 2 ranks that
#                        synchronised nothing exit 7 unless sync is optional
#   test_param_digest.sh ranks that end with different parameters: rank 1 named, exit 8
#   test_torchrun_env.sh torchrun's variables by hand on 2 processes = 1 rank; conflicts refused
#   build/tests/reliability/test_file_create  ash_file_create (O_NOFOLLOW|O_EXCL) and secure_getenv
REL_DIR := $(BUILD)/tests/reliability
TESTS += tests/reliability/test_fingerprint.sh \
         tests/reliability/test_watchdog.sh \
         tests/reliability/test_crash.sh \
         tests/reliability/test_checkpoint.sh \
         tests/reliability/test_env_garbage.sh \
         tests/reliability/test_unsynced.sh \
         tests/reliability/test_param_digest.sh \
         tests/reliability/test_torchrun_env.sh
TESTS += $(REL_DIR)/test_file_create tests/reliability/test_secure_env.sh
ALL += $(REL_DIR)/test_file_create $(REL_DIR)/fortify_open $(REL_DIR)/overflow_app

# a stack overflow in a second thread (test_crash.sh); links the driver stub, runs on hostcuda
$(REL_DIR)/overflow_app: tests/reliability/overflow_app.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PTHREAD) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

# a writer built with _FORTIFY_SOURCE (its opens are glibc's __open_2 family): test_checkpoint.sh
$(REL_DIR)/fortify_open: tests/reliability/fortify_open.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -o $@ $<

# links the shim's own objects (file, options, log) directly: their symbols are hidden in the .so
$(REL_DIR)/test_file_create: tests/reliability/test_file_create.c shim/file.c shim/options.c \
    shim/log.c shim/ash_file.h shim/ash_options.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim $(CFLAGS) $(PTHREAD) -o $@ tests/reliability/test_file_create.c \
	    shim/file.c shim/options.c shim/log.c -lcmocka

# ASan/UBSan: never instrument the dlsym door (a sanitizer runtime resolves through it first)
ifneq ($(SAN),)
$(BUILD)/intercept/doors.o: CC := $(filter-out -fsanitize=% -fno-omit-frame-pointer,$(CC))
endif
.PHONY: check-san
check-san:
	bash tests/reliability/check-san.sh
