# collectives/module.mk — libash_coll.a (ops table, mpi + nccl backends, embedded cast-kernel PTX)
# and libash_cast_kernels_host.so (the same kernels built for hostcuda: HOSTCUDA_KERNEL_LIBS).
# The shim links $(COLL_LIB) $(COLL_MPI_LIBS) -ldl; the archive's objects are -fPIC.

COLL_BUILD := $(BUILD)/collectives
COLL_MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null || pkg-config --cflags ompi-c 2>/dev/null)
COLL_MPI_LIBS := $(shell mpicc --showme:link 2>/dev/null || pkg-config --libs ompi-c 2>/dev/null || echo -lmpi)
COLL_HDRS := collectives/ash_coll.h collectives/ash_coll_int.h collectives/ash_coll_cast.h
COLL_SRCS := collectives/coll.c collectives/coll_mpi.c collectives/coll_nccl.c
COLL_PTX := $(COLL_BUILD)/cast_kernels.ptx
COLL_OBJS := $(patsubst collectives/%.c,$(COLL_BUILD)/%.o,$(COLL_SRCS)) $(COLL_BUILD)/ptx_blob.o
COLL_LIB := $(COLL_BUILD)/libash_coll.a
COLL_HOST_KERNELS := $(COLL_BUILD)/libash_cast_kernels_host.so

ALL += $(COLL_LIB) $(COLL_HOST_KERNELS)

$(COLL_BUILD)/%.o: collectives/%.c $(COLL_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) $(COLL_MPI_CFLAGS) -c -o $@ $<

# the PTX goes into .rodata through .incbin; rebuilt whenever the PTX changes
$(COLL_BUILD)/ptx_blob.o: collectives/ptx_blob.S $(COLL_PTX) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -c -DASH_COLL_PTX_FILE='"$(COLL_PTX)"' -o $@ $<

$(COLL_LIB): $(COLL_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(COLL_BUILD)/cast_kernels.host.o $(COLL_PTX): collectives/ash_coll_cast.h

$(COLL_HOST_KERNELS): $(COLL_BUILD)/cast_kernels.host.o
	$(CC) -shared -o $@ $^
