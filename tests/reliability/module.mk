# tests/reliability — what happens when a rank misbehaves or the input is hostile (issue 6):
#   test_fingerprint.sh  check_collectives catches a rank reducing a different count (exit 3)
#   test_watchdog.sh     a stalled rank is reported by the ranks waiting for it (exit 4), mpi+nccl
#   test_watchdog_late.sh  ... also after a thousand fast collectives, and with uneven step counts
#   test_exit_deadline.sh  a rank at exit whose peer never comes names it and exits 4 (no hang)
#   test_exit_meeting.sh   ... also for ranks without MPI (TCP meeting at rank 0), 3 machines
#   test_stress.sh       4 ranks, tens of thousands of collectives, fused and not, --debug, jitter:
#                        no hang, no VmRSS growth, ranks bit-identical
#   test_crash.sh        a segfault's backtrace reaches accelerate-run's root-cause block
#   test_crash_recover.sh a program that fixes its own SIGSEGV goes on (exit 0, no report)
#   test_checkpoint.sh   libaccelshim-io.so: one writer per main_process_only output
#   test_save_rename.sh  ... also through save-to-temporary-then-rename/link; policy read once
#   test_policy_fifo.sh  a FIFO or device as the policy path is refused (exit 2), never read
#   test_two_programs.sh a rank command running two CUDA programs: the 2nd runs alone (mpirun)
#   test_rendezvous_timeout.sh a per-machine peer that never arrives, or a rank 0 that never comes:
#                        exit 4 within the timeout, not 2; machine 0 says it waits for the others
#   test_env_garbage.sh  one clear line per bad ACCELSHIM_* value, exit 2 (hand-picked cases)
#   test_options_garbage.sh  every option of the table fed garbage -> exit 2 naming it; valid -> 0
#   test_unsynced.sh     rules that never fired are named with the nearest kernel; 2 ranks that
#                        synchronised nothing exit 7 unless sync is optional
#   test_unsynced_early.sh  ... and with sync required stops at the repeated step (exit 7 on
#                        every rank, the rules and nearest kernels named), not at exit
#   test_unsynced_eval.sh  ... but not at evaluation batches before training or accumulation
#                        micro-steps (they change no persistent state); a typo'd rule still
#                        stops at the 2nd training step; kernels without facts: the old rule
#   test_param_digest.sh ranks that end with different parameters: rank 1 named, exit 8
#   test_exit_exchange.sh  ... also for ranks without MPI (over the TCP exit meeting), and rank 0's
#                        job summary line; ranks in different exchanges at exit are let go at once
#   test_torchrun_env.sh torchrun's variables by hand on 2 processes = 1 rank; conflicts refused
#   test_job_identity.sh two jobs on one port, a stranger at rank 1: refused (exit 2), both named
#   test_meet_flood.sh   900 strangers on the exit meeting's port: the job still ends with exit 0
#   test_count_bounds.sh a count past its buffer's allocation (or count_arg on a float/pointer): exit 2
#   test_world_agree.sh  world variables that contradict each other (stale ACCELSHIM_RANK/_WORLD_SIZE
#                        under mpirun, a rank past the size) refused, exit 2; agreeing ones accepted
#   test_peer_killed.sh  a peer killed mid-training: the survivor exits 4 (transport), not 2 (config)
#   test_full_disk.sh    record, report and trace merge on a full disk: complete or absent, one line
#   build/tests/reliability/test_file_create  ash_file_create (O_NOFOLLOW|O_EXCL) and secure_getenv
#   build/tests/reliability/test_untracked_write  the kernel facts flag writes through a pointer
#                        loaded from memory (the step watch then has no evidence for that kernel)
REL_DIR := $(BUILD)/tests/reliability
TESTS += tests/reliability/test_fingerprint.sh \
         tests/reliability/test_watchdog.sh \
         tests/reliability/test_unsynced_early.sh \
         tests/reliability/test_unsynced_eval.sh \
         tests/reliability/test_watchdog_late.sh \
         tests/reliability/test_exit_deadline.sh \
         tests/reliability/test_exit_meeting.sh \
         tests/reliability/test_stress.sh \
         tests/reliability/test_crash.sh \
         tests/reliability/test_crash_recover.sh \
         tests/reliability/test_checkpoint.sh \
         tests/reliability/test_save_rename.sh \
         tests/reliability/test_policy_fifo.sh \
         tests/reliability/test_two_programs.sh \
         tests/reliability/test_rendezvous_timeout.sh \
         tests/reliability/test_env_garbage.sh \
         tests/reliability/test_options_garbage.sh \
         tests/reliability/test_unsynced.sh \
         tests/reliability/test_param_digest.sh \
         tests/reliability/test_exit_exchange.sh \
         tests/reliability/test_torchrun_env.sh \
         tests/reliability/test_job_identity.sh \
         tests/reliability/test_meet_flood.sh \
         tests/reliability/test_count_bounds.sh \
         tests/reliability/test_world_agree.sh \
         tests/reliability/test_peer_killed.sh \
         tests/reliability/test_full_disk.sh
TESTS += $(REL_DIR)/test_file_create tests/reliability/test_secure_env.sh $(REL_DIR)/test_untracked_write
ALL += $(REL_DIR)/test_file_create $(REL_DIR)/test_untracked_write $(REL_DIR)/fortify_open $(REL_DIR)/overflow_app \
       $(REL_DIR)/options_table $(REL_DIR)/save_app $(REL_DIR)/recover_app

# the options table, printed for test_options_garbage.sh (links the table itself)
$(REL_DIR)/options_table: tests/reliability/options_table.c shim/core/options.c shim/core/log.c shim/core/fatal.c \
    shim/core/ash_options.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim/core $(CFLAGS) $(PTHREAD) -o $@ tests/reliability/options_table.c \
	    shim/core/options.c shim/core/log.c shim/core/fatal.c

# a stack overflow in a second thread (test_crash.sh); links the driver stub, runs on hostcuda
$(REL_DIR)/overflow_app: tests/reliability/overflow_app.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PTHREAD) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

# a SIGSEGV handler installed before cuInit (test_crash_recover.sh); driver stub, runs on hostcuda
$(REL_DIR)/recover_app: tests/reliability/recover_app.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

# save to a temporary file, then rename/link it over the final name (test_save_rename.sh)
$(REL_DIR)/save_app: tests/reliability/save_app.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $<

# a writer built with _FORTIFY_SOURCE (its opens are glibc's __open_2 family): test_checkpoint.sh
$(REL_DIR)/fortify_open: tests/reliability/fortify_open.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2 -o $@ $<

# links the shim's own objects (file, options, log, fatal) directly: their symbols are hidden in the .so
$(REL_DIR)/test_file_create: tests/reliability/test_file_create.c shim/core/file.c shim/core/options.c \
    shim/core/log.c shim/core/fatal.c shim/core/ash_file.h shim/core/ash_options.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim/core $(CFLAGS) $(PTHREAD) -o $@ tests/reliability/test_file_create.c \
	    shim/core/file.c shim/core/options.c shim/core/log.c shim/core/fatal.c -lcmocka

# the PTX reader and its facts alone (pure C11): untracked writes
$(REL_DIR)/test_untracked_write: tests/reliability/test_untracked_write.c $(wildcard shim/ptx/*.c shim/ptx/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim/ptx $(CFLAGS) -o $@ tests/reliability/test_untracked_write.c $(sort $(wildcard shim/ptx/*.c))

# ASan/UBSan: never instrument the dlsym door (a sanitizer runtime resolves through it first)
ifneq ($(SAN),)
$(BUILD)/intercept/doors.o: CC := $(filter-out -fsanitize=% -fno-omit-frame-pointer,$(CC))
endif
.PHONY: check-san
check-san:
	bash tests/reliability/check-san.sh
