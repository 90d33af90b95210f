# tests/fuzz/module.mk — libFuzzer target for the policy parser (hostile input).
#   build/tests/fuzz/fuzz_policy   clang -fsanitize=fuzzer,address,undefined, policy sources built in
#   make fuzz FUZZ_SECONDS=600     a bounded campaign (default 600 s) from the seed corpus
#   tests/fuzz/test_fuzz_policy.sh a 60 s run in make test (skips 77 without clang/libFuzzer)
# clang's libFuzzer runtime comes with libclang-rt-14-dev (scripts/install-deps.sh).
FUZZ_CC      ?= clang
FUZZ_DIR     := $(BUILD)/tests/fuzz
FUZZ_POLICY  := $(FUZZ_DIR)/fuzz_policy
FUZZ_SECONDS ?= 600
# Whether clang can build a fuzzer is asked when the recipe runs (install-deps installs clang
# first), never at parse time; FUZZ_OK=no (make check-san) leaves the target out.
FUZZ_PROBE = printf 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){(void)d;(void)n;return 0;}' \
             | $(FUZZ_CC) -fsanitize=fuzzer,address -x c - -o /dev/null 2>/dev/null

ifneq ($(FUZZ_OK),no)
ALL += $(FUZZ_POLICY)
endif
$(FUZZ_POLICY): tests/fuzz/fuzz_policy.c $(POLICY_SRCS) $(POLICY_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@if ! $(FUZZ_PROBE); then \
	    echo "fuzz: $(FUZZ_CC) cannot build -fsanitize=fuzzer (clang, libclang-rt-14-dev): $@ not built"; \
	    exit 0; fi; \
	echo "$(FUZZ_CC) ... -fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz_policy.c $(POLICY_SRCS)"; \
	$(FUZZ_CC) -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -Ipolicy $(CPPFLAGS) -o $@ tests/fuzz/fuzz_policy.c \
	    $(POLICY_SRCS) -lyaml
TESTS += tests/fuzz/test_fuzz_policy.sh

.PHONY: fuzz
fuzz: $(FUZZ_POLICY)
	@[ -x $(FUZZ_POLICY) ] || { echo "make fuzz: $(FUZZ_CC) cannot build -fsanitize=fuzzer (install clang and libclang-rt-14-dev)"; exit 1; }
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/test_fuzz_policy.sh
