# accelshim — top-level build. Each folder adds its rules in its own module.mk:
#   tests/hostcuda/module.mk, tests/trainers/module.mk, policy/module.mk, ...
# A module.mk appends test programs to TESTS (run by scripts/run-tests.sh, each in its own
# process with a timeout) and benchmarks to BENCHES. Outputs go under build/ only.

CUDA_HOME ?= $(if $(wildcard /usr/local/cuda/include/cuda.h),/usr/local/cuda,)
ifeq ($(CUDA_HOME),)
  $(error CUDA toolkit not found: install the CUDA toolkit (cuda.h, cudaTypedefs.h, nvcc) under /usr/local/cuda or set CUDA_HOME)
endif
ifeq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
  $(error $(CUDA_HOME)/include/cuda.h not found: install the CUDA toolkit or set CUDA_HOME to it)
endif
NVCC ?= $(CUDA_HOME)/bin/nvcc
ifeq ($(wildcard $(NVCC)),)
  $(error nvcc not found at $(NVCC): install the CUDA toolkit's compiler or set NVCC)
endif

BUILD    := build
CC       ?= gcc
CFLAGS   := -std=c11 -Wall -Wextra -Werror -O2 -g -fPIC -fvisibility=hidden -D_GNU_SOURCE
CPPFLAGS := -Iinclude -I$(CUDA_HOME)/include
NVCCFLAGS := -ptx -arch=compute_80 -O2
DEPS_STAMP := $(BUILD)/.deps-installed
PTHREAD  := -pthread
# make ... SAN=address,undefined: every C compile and link instrumented (via CC; make check-san
# builds such a tree apart and runs the unit, routing and equivalence tests in it).
SAN      ?=
ifneq ($(SAN),)
  CC      += -fsanitize=$(SAN) -fno-omit-frame-pointer
endif

# Where hostcuda lives: tests and the demo put it on LD_LIBRARY_PATH; the library never links it.
HOSTCUDA_DIR := $(BUILD)/tests/hostcuda

TESTS   :=
BENCHES :=
ALL     :=

.PHONY: all deps test demo bench install clean
all: $(DEPS_STAMP)

$(DEPS_STAMP): scripts/install-deps.sh
	@mkdir -p $(BUILD)
	@bash scripts/install-deps.sh
	@touch $@

deps: $(DEPS_STAMP)

# nvcc -> PTX, for kernels written once with include/ash_kernel.h
$(BUILD)/%.ptx: %.cu include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -Iinclude -o $@ $<

# cc -> host implementation of the same kernels (for hostcuda)
$(BUILD)/%.host.o: %.cu include/ash_kernel.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -x c $(CFLAGS) -fvisibility=default -Iinclude -c -o $@ $<

-include $(sort $(wildcard */*.mk tests/*/*.mk))

all: $(ALL)

test: all $(TESTS)
	@bash scripts/run-tests.sh $(TESTS)

bench: all $(BENCHES)
	@bash scripts/run-bench.sh $(BENCHES)

demo: all
	@bash scripts/demo.sh

clean:
	rm -rf $(BUILD)
