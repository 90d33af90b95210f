# collectives/module.mk — libash_coll.a (ops table, mpi + nccl backends, embedded cast-kernel PTX)
# and libash_cast_kernels_host.so (the same kernels built for hostcuda: HOSTCUDA_KERNEL_LIBS).
# The shim links $(COLL_LIB) -ldl; the archive's objects are -fPIC. Open MPI is compiled against
# (mpi.h: MPI_CFLAGS, computed at recipe time) but never linked: mpi_dl.c dlopens libmpi.so.40.

COLL_BUILD := $(BUILD)/collectives
COLL_HDRS := collectives/ash_coll.h collectives/ash_coll_int.h collectives/ash_coll_cast.h \
             collectives/ash_coll_mpi.h
COLL_SRCS := collectives/coll.c collectives/coll_deadline.c collectives/coll_meet.c collectives/coll_mpi.c collectives/coll_nccl.c \
             collectives/mpi_dl.c
COLL_PTX := $(COLL_BUILD)/cast_kernels.ptx
COLL_OBJS := $(patsubst collectives/%.c,$(COLL_BUILD)/%.o,$(COLL_SRCS)) $(COLL_BUILD)/ptx_blob.o
COLL_LIB := $(COLL_BUILD)/libash_coll.a
COLL_HOST_KERNELS := $(COLL_BUILD)/libash_cast_kernels_host.so

ALL += $(COLL_LIB) $(COLL_HOST_KERNELS)

$(COLL_BUILD)/%.o: collectives/%.c $(COLL_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) $(MPI_CFLAGS) -c -o $@ $<

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
