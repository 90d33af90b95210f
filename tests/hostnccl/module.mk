# tests/hostnccl/module.mk — build/tests/hostnccl/libnccl.so.2: an NCCL test double on hostcuda
# memory over MPI (tests put build/tests/hostnccl first on LD_LIBRARY_PATH). Test-only.

HOSTNCCL_LIB := $(BUILD)/tests/hostnccl/libnccl.so.2
HOSTNCCL_MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null || pkg-config --cflags ompi-c 2>/dev/null)
HOSTNCCL_MPI_LIBS := $(shell mpicc --showme:link 2>/dev/null || pkg-config --libs ompi-c 2>/dev/null || echo -lmpi)

ALL += $(HOSTNCCL_LIB)

$(HOSTNCCL_LIB): tests/hostnccl/hostnccl.c collectives/ash_coll_cast.h $(HOSTCUDA_DIR)/libcuda.so.1 | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Itests/hostcuda $(HOSTNCCL_MPI_CFLAGS) -shared \
	  -Wl,-soname,libnccl.so.2 -o $@ $< $(HOSTCUDA_DIR)/libcuda.so.1 $(HOSTNCCL_MPI_LIBS)
