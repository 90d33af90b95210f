# tests/unit/alloc.mk — unit tests of the allocation table (cmocka).
#   build/tests/unit/test_alloc       in TESTS: model check, 8-thread use, edge cases, ns/lookup
#   build/tests/unit/test_alloc_tsan  not in TESTS: same test and table built with ThreadSanitizer
#                                      (run by hand after touching shim/alloc.c)

ASH_ALLOC_TEST := $(BUILD)/tests/unit/test_alloc
ASH_ALLOC_TEST_TSAN := $(BUILD)/tests/unit/test_alloc_tsan

$(ASH_ALLOC_TEST): tests/unit/test_alloc.c $(BUILD)/shim/alloc.o shim/ash_alloc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim $(CFLAGS) $(PTHREAD) -o $@ $< $(BUILD)/shim/alloc.o -lcmocka

$(ASH_ALLOC_TEST_TSAN): tests/unit/test_alloc.c shim/alloc.c shim/ash_alloc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim $(CFLAGS) -O1 -fsanitize=thread $(PTHREAD) -o $@ $< shim/alloc.c -lcmocka

TESTS += $(ASH_ALLOC_TEST)
