# scripts/install.mk — `make install [PREFIX=/usr/local] [DESTDIR=]`: the recipe of the top
# Makefile's phony `install` target (builds `all` first). Layout (what accelerate-run expects):
#   PREFIX/bin/accelerate-run, PREFIX/bin/accelshim-policy, PREFIX/bin/accelshim-compare,
#   PREFIX/bin/accelshim-equiv (the equivalence comparison, for accelerate-run test)
#   PREFIX/lib/accelshim/libaccelshim.so            found by the launcher from its own path
#   PREFIX/lib/accelshim/libaccelshim-io.so         (one writer per output), preloaded beside it
#   PREFIX/lib/accelshim/accelerate-run.d/          the launcher's helpers (rank wrapper, subcommands)
#   PREFIX/lib/accelshim/hostcuda/libcuda.so.1      test devices, so `accelerate-run --cpu` and
#   PREFIX/lib/accelshim/hostnccl/libnccl.so.2        `accelerate-run test` work from an install; in a
#   PREFIX/lib/accelshim/hostcudart/libcudart.so.13   (the runtime and cuBLAS for -cudart shared programs)
#   PREFIX/lib/accelshim/hostcublas/libcublas{,Lt}.so.13
#   PREFIX/lib/accelshim/hostcurand/libcurand.so.10
#   PREFIX/lib/accelshim/hostkernels/*.so             private directory, never on the loader's default
#   PREFIX/lib/accelshim/tests/mlp                    path, so they cannot shadow a real driver
#   PREFIX/share/accelshim/examples/*.yaml, PREFIX/share/accelshim/VERSION
#   PREFIX/share/doc/accelshim/{README.md,accelerate-run.md,docs/*.md}   the documentation
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_ROOT := $(DESTDIR)$(PREFIX)
INSTALL_LIBDIR := $(INSTALL_ROOT)/lib/accelshim

install: all
	install -d $(INSTALL_ROOT)/bin $(INSTALL_LIBDIR)/accelerate-run.d $(INSTALL_ROOT)/share/accelshim/examples
	install -m 0755 scripts/accelerate-run $(INSTALL_ROOT)/bin/accelerate-run
	install -m 0755 scripts/accelerate-run.d/rank-wrapper $(INSTALL_LIBDIR)/accelerate-run.d/rank-wrapper
	install -m 0755 scripts/accelerate-run.d/trace-merge $(INSTALL_LIBDIR)/accelerate-run.d/trace-merge
	install -m 0755 scripts/accelerate-run.d/output-collector scripts/accelerate-run.d/engine-filter scripts/accelerate-run.d/job-watch \
	  scripts/accelerate-run.d/config-read scripts/accelerate-run.d/test-evidence $(INSTALL_LIBDIR)/accelerate-run.d/
	install -m 0644 scripts/accelerate-run.d/*.bash $(INSTALL_LIBDIR)/accelerate-run.d/
	install -m 0755 $(BUILD)/libaccelshim.so $(INSTALL_LIBDIR)/libaccelshim.so
	install -m 0755 $(BUILD)/libaccelshim-io.so $(INSTALL_LIBDIR)/libaccelshim-io.so
	install -m 0755 $(BUILD)/bin/accelshim-policy $(INSTALL_ROOT)/bin/accelshim-policy
	install -m 0755 $(BUILD)/bin/accelshim-compare $(INSTALL_ROOT)/bin/accelshim-compare
	install -m 0755 $(BUILD)/bin/accelshim-equiv $(INSTALL_ROOT)/bin/accelshim-equiv
	@set -e; \
	inst() { if [ -f "$$1" ]; then install -d "$$(dirname "$$2")"; install -m "$$3" "$$1" "$$2"; \
	         else echo "install: $$1 not built; skipped"; fi; }; \
	inst $(HOSTCUDA_DIR)/libcuda.so.1 $(INSTALL_LIBDIR)/hostcuda/libcuda.so.1 0755; \
	inst $(BUILD)/tests/hostnccl/libnccl.so.2 $(INSTALL_LIBDIR)/hostnccl/libnccl.so.2 0755; \
	inst $(BUILD)/tests/hostcudart/libcudart.so.13 $(INSTALL_LIBDIR)/hostcudart/libcudart.so.13 0755; \
	for f in libcublas.so.13 libcublasLt.so.13; do \
	  inst $(BUILD)/tests/hostcublas/$$f $(INSTALL_LIBDIR)/hostcublas/$$f 0755; done; \
	inst $(BUILD)/tests/hostcurand/libcurand.so.10 $(INSTALL_LIBDIR)/hostcurand/libcurand.so.10 0755; \
	inst $(BUILD)/tests/trainers/libmlp_kernels_host.so $(INSTALL_LIBDIR)/hostkernels/libmlp_kernels_host.so 0755; \
	inst $(BUILD)/collectives/libash_cast_kernels_host.so $(INSTALL_LIBDIR)/hostkernels/libash_cast_kernels_host.so 0755; \
	inst $(BUILD)/shim/libash_inspect_kernels_host.so $(INSTALL_LIBDIR)/hostkernels/libash_inspect_kernels_host.so 0755; \
	inst $(BUILD)/tests/trainers/mlp $(INSTALL_LIBDIR)/tests/mlp 0755; \
	for f in examples/*; do [ -f "$$f" ] && install -m 0644 "$$f" $(INSTALL_ROOT)/share/accelshim/examples/; done; \
	install -d $(INSTALL_ROOT)/share/doc/accelshim/docs; \
	install -m 0644 README.md $(INSTALL_ROOT)/share/doc/accelshim/README.md; \
	install -m 0644 scripts/accelerate-run.d/README.md $(INSTALL_ROOT)/share/doc/accelshim/accelerate-run.md; \
	for f in docs/*.md; do install -m 0644 "$$f" $(INSTALL_ROOT)/share/doc/accelshim/docs/; done; \
	v=$$(scripts/accelerate-run --version 2>/dev/null || echo unknown); \
	echo "$$v" >$(INSTALL_ROOT)/share/accelshim/VERSION
	@echo "installed accelshim into $(INSTALL_ROOT): launcher $(INSTALL_ROOT)/bin/accelerate-run, example policies $(INSTALL_ROOT)/share/accelshim/examples, docs $(INSTALL_ROOT)/share/doc/accelshim, test trainer $(INSTALL_LIBDIR)/tests/mlp"
