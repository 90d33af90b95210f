# tests/policy/module.mk — tests of the policy module:
#   build/tests/policy/test_policy   cmocka unit + robustness tests (links libash_policy.a)
#   tests/policy/policy_cli.bats     the CLI against tests/policy/bad/*.yaml and examples/

POLICY_TEST := $(BUILD)/tests/policy/test_policy

$(POLICY_TEST): tests/policy/test_policy.c $(POLICY_LIB) policy/ash_policy.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Ipolicy -o $@ $< $(POLICY_LIB) -lcmocka $(POLICY_LDLIBS)

ALL   += $(POLICY_TEST)
TESTS += $(POLICY_TEST) tests/policy/policy_cli.bats
