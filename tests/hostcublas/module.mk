# tests/hostcublas/module.mk — cuBLAS and cuBLASLt test doubles on hostcuda memory, with the
# real libraries' sonames and symbol versions (tests put build/tests/hostcublas first on
# LD_LIBRARY_PATH; a binary linked against the real -lcublas then runs on them):
#   build/tests/hostcublas/libcublas.so.13     hostcublas.c hcb_blas.c (hcb_internal.h)
#   build/tests/hostcublas/libcublasLt.so.13   hostcublaslt.c
HOSTCUBLAS_DIR  := $(BUILD)/tests/hostcublas
HOSTCUBLAS_LIB  := $(HOSTCUBLAS_DIR)/libcublas.so.13
HOSTCUBLASLT_LIB := $(HOSTCUBLAS_DIR)/libcublasLt.so.13
HOSTCUBLAS_DEPS := tests/hostcublas/hostcublas.h tests/hostcublas/hcb_unimpl.c collectives/ash_coll_cast.h \
                   $(HOSTCUDA_DIR)/libcuda.so.1
# every other export of NVIDIA's libraries: a weak not-implemented body (hcb_unimpl.c over the rows
# gen_blas_api.py derived from NVIDIA's libraries into hcb_api.def / hcblt_api.def and the maps)

ALL += $(HOSTCUBLAS_LIB) $(HOSTCUBLASLT_LIB) $(HOSTCUBLAS_DIR)/test_hcb

$(HOSTCUBLAS_LIB): tests/hostcublas/hostcublas.c tests/hostcublas/hcb_blas.c tests/hostcublas/hcb_internal.h \
                   tests/hostcublas/hostcublas.map tests/hostcublas/hcb_api.def $(HOSTCUBLAS_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Itests/hostcuda -shared -Wl,-soname,libcublas.so.13 \
	  -Wl,--version-script=tests/hostcublas/hostcublas.map -Wl,-Bsymbolic -o $@ $< tests/hostcublas/hcb_blas.c \
	  tests/hostcublas/hcb_unimpl.c $(HOSTCUDA_DIR)/libcuda.so.1 -lm

$(HOSTCUBLASLT_LIB): tests/hostcublas/hostcublaslt.c tests/hostcublas/hostcublaslt.map tests/hostcublas/hcblt_api.def \
                     $(HOSTCUBLAS_DEPS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Itests/hostcuda -shared -Wl,-soname,libcublasLt.so.13 \
	  -Wl,--version-script=tests/hostcublas/hostcublaslt.map -Wl,-Bsymbolic -o $@ $< \
	  -DHCB_LT tests/hostcublas/hcb_unimpl.c $(HOSTCUDA_DIR)/libcuda.so.1 -lm

# test_hcb: both doubles against a double-precision reference (linked to them directly)
HOSTCUBLAS_TEST := $(HOSTCUBLAS_DIR)/test_hcb
TESTS += $(HOSTCUBLAS_TEST)
$(HOSTCUBLAS_TEST): tests/hostcublas/test_hcb.c tests/hostcublas/test_hcb_check.h $(HOSTCUBLAS_LIB) $(HOSTCUBLASLT_LIB) | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< -Wl,-rpath,$(abspath $(HOSTCUBLAS_DIR)):$(abspath $(HOSTCUDA_DIR)) \
	  $(HOSTCUBLAS_LIB) $(HOSTCUBLASLT_LIB) $(HOSTCUDA_DIR)/libcuda.so.1 -lcmocka -lm

# test_hcb_blas: the ordinary cuBLAS routines against a naive double reference; test_hcb_exports.sh:
# every export of NVIDIA's libraries at its version node
HOSTCUBLAS_BLAS_TEST := $(HOSTCUBLAS_DIR)/test_hcb_blas
ALL += $(HOSTCUBLAS_BLAS_TEST)
TESTS += $(HOSTCUBLAS_BLAS_TEST) tests/hostcublas/test_hcb_exports.sh tests/hostcublas/test_hcb_valgrind.sh
$(HOSTCUBLAS_BLAS_TEST): tests/hostcublas/test_hcb_blas.c tests/hostcublas/test_hcb_check.h $(HOSTCUBLAS_LIB) | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< -Wl,-rpath,$(abspath $(HOSTCUBLAS_DIR)):$(abspath $(HOSTCUDA_DIR)) \
	  $(HOSTCUBLAS_LIB) $(HOSTCUDA_DIR)/libcuda.so.1 -lcmocka -lm
