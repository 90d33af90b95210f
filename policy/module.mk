# policy/module.mk — the policy module: build/policy/libash_policy.a (-fPIC, linked into the
# shim and the CLI; users of it link -lyaml) and build/bin/accelshim-policy.
# Tests live in tests/policy/module.mk.

POLICY_SRCS := policy/ash_policy.c policy/ash_policy_yaml.c policy/ash_policy_match.c
POLICY_HDRS := policy/ash_policy.h policy/ash_policy_int.h
POLICY_OBJS := $(POLICY_SRCS:%.c=$(BUILD)/%.o)
POLICY_LIB  := $(BUILD)/policy/libash_policy.a
POLICY_CLI  := $(BUILD)/bin/accelshim-policy
POLICY_LDLIBS := -lyaml

$(POLICY_OBJS): $(BUILD)/policy/%.o: policy/%.c $(POLICY_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Ipolicy -c -o $@ $<

$(POLICY_LIB): $(POLICY_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/policy/accelshim_policy_main.o: policy/accelshim_policy_main.c policy/ash_policy.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Ipolicy -c -o $@ $<

$(POLICY_CLI): $(BUILD)/policy/accelshim_policy_main.o $(POLICY_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(POLICY_LDLIBS)

ALL += $(POLICY_LIB) $(POLICY_CLI)
