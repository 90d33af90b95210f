# shim/io/module.mk — build/libaccelshim-io.so, the "one writer per output" preload library (shim/io/io.c:
# opens; shim/io/io_move.c: rename and link): on ranks other than 0, write-opens of
# outputs.main_process_only paths go to /dev/null, and moves onto them go nowhere.
# Separate from libaccelshim.so (whose exports are cu*, dlsym, accelshim_* only); exports exactly
# the libc names in shim/io/exports.map. Links the policy archive (libyaml) and the shim's options table
# (options, log, fatal: compiled again here, hidden, so the environment is read one way).
IO_LIB := $(BUILD)/libaccelshim-io.so
IO_OPT_SRCS := shim/core/options.c shim/core/log.c shim/core/fatal.c
IO_OPT_OBJS := $(IO_OPT_SRCS:shim/core/%.c=$(BUILD)/shim/io/opt_%.o)
ALL += $(IO_LIB)

IO_OBJS := $(BUILD)/shim/io/io.o $(BUILD)/shim/io/io_move.o

$(BUILD)/shim/io/%.o: shim/io/%.c shim/io/io_int.h policy/ash_policy.h shim/core/ash_options.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ipolicy -Ishim/core $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(IO_OPT_OBJS): $(BUILD)/shim/io/opt_%.o: shim/core/%.c shim/core/ash_options.h shim/core/ash_log.h shim/core/ash_fatal.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim/core $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(IO_LIB): $(IO_OBJS) $(IO_OPT_OBJS) shim/io/exports.map $(BUILD)/policy/libash_policy.a | $(DEPS_STAMP)
	$(CC) -shared $(CFLAGS) $(PTHREAD) -o $@ $(IO_OBJS) $(IO_OPT_OBJS) \
	    -Wl,--version-script=shim/io/exports.map -Wl,--no-undefined -Wl,-z,now \
	    $(BUILD)/policy/libash_policy.a -lyaml -ldl
