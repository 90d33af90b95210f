# tests/unit/alloc.mk — unit tests of the allocation table (cmocka).
#   build/tests/unit/test_alloc       in TESTS: model check, 8-thread use, edge cases, ns/lookup
#   build/tests/unit/test_alloc_tsan  not in TESTS: same test and table built with ThreadSanitizer
#                                      (run by hand after touching core/alloc.c)

ASH_ALLOC_TEST := $(BUILD)/tests/unit/test_alloc
ASH_ALLOC_TEST_TSAN := $(BUILD)/tests/unit/test_alloc_tsan

$(ASH_ALLOC_TEST): tests/unit/test_alloc.c $(BUILD)/core/alloc.o core/ash_alloc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Icore $(CFLAGS) $(PTHREAD) -o $@ $< $(BUILD)/core/alloc.o -lcmocka

$(ASH_ALLOC_TEST_TSAN): tests/unit/test_alloc.c core/alloc.c core/ash_alloc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Icore $(CFLAGS) -O1 -fsanitize=thread $(PTHREAD) -o $@ $< core/alloc.c -lcmocka

TESTS += $(ASH_ALLOC_TEST)
