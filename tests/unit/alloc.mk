# tests/unit/alloc.mk — unit tests of the allocation table (cmocka).
#   build/tests/unit/test_alloc       in TESTS: model check, 8-thread use, edge cases, ns/lookup
#   build/tests/unit/test_alloc_tsan  not in TESTS: same test and table built with ThreadSanitizer
#                                      (run by hand after touching shim/core/alloc.c)

ASH_ALLOC_TEST := $(BUILD)/tests/unit/test_alloc
ASH_ALLOC_TEST_TSAN := $(BUILD)/tests/unit/test_alloc_tsan

$(ASH_ALLOC_TEST): tests/unit/test_alloc.c $(BUILD)/shim/core/alloc.o shim/core/ash_alloc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim/core $(CFLAGS) $(PTHREAD) -o $@ $< $(BUILD)/shim/core/alloc.o -lcmocka

$(ASH_ALLOC_TEST_TSAN): tests/unit/test_alloc.c shim/core/alloc.c shim/core/ash_alloc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ishim/core $(CFLAGS) -O1 -fsanitize=thread $(PTHREAD) -o $@ $< shim/core/alloc.c -lcmocka

TESTS += $(ASH_ALLOC_TEST)
