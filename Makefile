# accelshim — top-level build. What build/libaccelshim.so is made of is said in one file,
# libaccelshim.mk (included first); every other folder adds its rules in its own module.mk
# (tests/hostcuda/module.mk, policy/module.mk, ...), which append test programs to TESTS (run by
# scripts/run-tests.sh, each in its own process with a timeout) and benchmarks to BENCHES.
# Outputs go under build/ only.
# Invariant: nothing is read at parse time from a package scripts/install-deps.sh installs: flags
# of such packages (Open MPI: MPI_CFLAGS, MPI_LIBS) are recursively expanded and used only in
# recipes, which run after the deps stamp; `make clean` and `make help` need no CUDA toolkit.

CUDA_HOME ?= $(if $(wildcard /usr/local/cuda/include/cuda.h),/usr/local/cuda,)
NVCC ?= $(CUDA_HOME)/bin/nvcc
# goals that build something need the CUDA toolkit; clean and help do not
ASH_NEEDS_CUDA := $(filter-out clean help,$(or $(MAKECMDGOALS),all))
ifneq ($(ASH_NEEDS_CUDA),)
  ifeq ($(CUDA_HOME),)
    $(error CUDA toolkit not found: install the CUDA toolkit (cuda.h, cudaTypedefs.h, nvcc) under /usr/local/cuda or set CUDA_HOME)
  endif
  ifeq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
    $(error $(CUDA_HOME)/include/cuda.h not found: install the CUDA toolkit or set CUDA_HOME to it)
  endif
  ifeq ($(wildcard $(NVCC)),)
    $(error nvcc not found at $(NVCC): install the CUDA toolkit's compiler or set NVCC)
  endif
endif

BUILD    := build
CC       ?= gcc
CFLAGS   := -std=c11 -Wall -Wextra -Werror -O2 -g -fPIC -fvisibility=hidden -D_GNU_SOURCE
CPPFLAGS := -Iinclude -I$(CUDA_HOME)/include
NVCCFLAGS := -ptx -arch=compute_80 -O2
DEPS_STAMP := $(BUILD)/.deps-installed
PTHREAD  := -pthread
# Open MPI's compile and link flags: '=' (recursive), so they are computed when a recipe uses
# them, after $(DEPS_STAMP) installed Open MPI; never use them in a prerequisite or with ':='.
MPI_CFLAGS = $(shell mpicc --showme:compile 2>/dev/null || pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS   = $(shell mpicc --showme:link 2>/dev/null || pkg-config --libs ompi-c 2>/dev/null || echo -lmpi)
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

.PHONY: all deps test demo bench install clean help
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

include libaccelshim.mk
-include $(sort $(wildcard */*.mk shim/*/*.mk tests/*/*.mk))

all: $(ALL)

test: all $(TESTS)
	@bash scripts/run-tests.sh $(TESTS)

bench: all $(BENCHES)
	@bash scripts/run-bench.sh $(BENCHES)

demo: all
	@bash scripts/demo.sh

clean:
	rm -rf $(BUILD)

help:
	@echo 'accelshim: make TARGET [CUDA_HOME=dir] [SAN=address,undefined]'
	@echo '  all        install missing packages (scripts/install-deps.sh), build everything under build/'
	@echo '  demo       all, then 2 ranks of the bundled trainer vs 1 rank with a 2x batch (scripts/demo.sh)'
	@echo '  test       all, then every test; last line "N passed, N failed, N skipped"'
	@echo '  check-san  the unit, routing and equivalence tests under ASan + UBSan (a copy of the tree)'
	@echo '  bench      the benchmarks, printed side by side (build/bench/results.json)'
	@echo '  thirdparty llm.c and cuda-samples from ACCELSHIM_THIRDPARTY into build/thirdparty (part of all)'
	@echo '  fuzz       a bounded libFuzzer campaign on the policy parser (FUZZ_SECONDS=600)'
	@echo '  install    PREFIX=/usr/local DESTDIR=: the launcher, the libraries, the tools'
	@echo '  gpu-bundle the runtime libraries to carry to a GPU machine (build/gpu-rt)'
	@echo '  deps       only scripts/install-deps.sh'
	@echo '  clean      remove build/'
