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
