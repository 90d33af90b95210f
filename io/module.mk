# io/module.mk — build/libaccelshim-io.so, the "one writer per output" preload library (io/io.c:
# opens; io/io_move.c: rename and link): on ranks other than 0, write-opens of
# outputs.main_process_only paths go to /dev/null, and moves onto them go nowhere.
# Separate from libaccelshim.so (whose exports are cu*, dlsym, accelshim_* only); exports exactly
# the libc names in io/exports.map. Links the policy archive (libyaml) and the shim's options table
# (options, log, fatal: compiled again here, hidden, so the environment is read one way).
IO_LIB := $(BUILD)/libaccelshim-io.so
IO_OPT_SRCS := core/options.c core/log.c core/fatal.c
IO_OPT_OBJS := $(IO_OPT_SRCS:core/%.c=$(BUILD)/io/opt_%.o)
ALL += $(IO_LIB)

IO_OBJS := $(BUILD)/io/io.o $(BUILD)/io/io_move.o

$(BUILD)/io/%.o: io/%.c io/io_int.h policy/ash_policy.h core/ash_options.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ipolicy -Icore $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(IO_OPT_OBJS): $(BUILD)/io/opt_%.o: core/%.c core/ash_options.h core/ash_log.h core/ash_fatal.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Icore $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(IO_LIB): $(IO_OBJS) $(IO_OPT_OBJS) io/exports.map $(BUILD)/policy/libash_policy.a | $(DEPS_STAMP)
	$(CC) -shared $(CFLAGS) $(PTHREAD) -o $@ $(IO_OBJS) $(IO_OPT_OBJS) \
	    -Wl,--version-script=io/exports.map -Wl,--no-undefined -Wl,-z,now \
	    $(BUILD)/policy/libash_policy.a -lyaml -ldl
