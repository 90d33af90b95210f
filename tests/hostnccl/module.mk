# tests/hostnccl/module.mk — build/tests/hostnccl/libnccl.so.2: an NCCL test double on hostcuda
# memory over MPI (tests put build/tests/hostnccl first on LD_LIBRARY_PATH). Test-only. Like the
# shim, it reaches Open MPI through collectives/mpi_dl.c (dlopen at first use, never NEEDED), so
# ranks meeting through NCCL_COMM_ID map no libmpi.

HOSTNCCL_LIB := $(BUILD)/tests/hostnccl/libnccl.so.2

ALL += $(HOSTNCCL_LIB)

$(HOSTNCCL_LIB): tests/hostnccl/hostnccl.c collectives/mpi_dl.c collectives/ash_coll_mpi.h \
                 collectives/ash_coll_cast.h $(HOSTCUDA_DIR)/libcuda.so.1 | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Itests/hostcuda -Icollectives $(MPI_CFLAGS) -shared \
	  -Wl,-soname,libnccl.so.2 -o $@ $< collectives/mpi_dl.c $(HOSTCUDA_DIR)/libcuda.so.1 -ldl

# test_strict.sh: collectives that differ across ranks (count, type) are refused, as NCCL does
HOSTNCCL_STRICT := $(BUILD)/tests/hostnccl/test_strict
ALL += $(HOSTNCCL_STRICT)
TESTS += tests/hostnccl/test_strict.sh

$(HOSTNCCL_STRICT): tests/hostnccl/test_strict.c $(HOSTNCCL_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda -L$(BUILD)/tests/hostnccl -l:libnccl.so.2 \
	  -Wl,--allow-shlib-undefined   # libnccl.so.2 needs hostcuda_host_view, from hostcuda at run time
