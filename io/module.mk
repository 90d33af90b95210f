# io/module.mk — build/libaccelshim-io.so, the "one writer per output" preload library (io/io.c):
# on ranks other than 0, write-opens of outputs.main_process_only paths go to /dev/null.
# Separate from libaccelshim.so (whose exports are cu*, dlsym, accelshim_* only); exports exactly
# the libc names in io/exports.map. Links the policy archive (libyaml).
IO_LIB := $(BUILD)/libaccelshim-io.so
ALL += $(IO_LIB)

$(BUILD)/io/io.o: io/io.c policy/ash_policy.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ipolicy $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(IO_LIB): $(BUILD)/io/io.o io/exports.map $(BUILD)/policy/libash_policy.a | $(DEPS_STAMP)
	$(CC) -shared $(CFLAGS) $(PTHREAD) -o $@ $(BUILD)/io/io.o \
	    -Wl,--version-script=io/exports.map -Wl,--no-undefined -Wl,-z,now \
	    $(BUILD)/policy/libash_policy.a -lyaml -ldl
