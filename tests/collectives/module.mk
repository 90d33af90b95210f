# tests/collectives/module.mk — tests of the collectives module:
#   test_cast    (cmocka) host casts vs the host build of the cast kernels, exhaustive over 16 bits
#   test_coll.sh (bash)   test_coll under mpirun: mpi and nccl (hostnccl) backends, N = 1, 2, 4,
#                         auto selection and its fallback warning, on hostcuda.
#   test_mpi_dl.sh        Open MPI opened only by a job that uses it: the shim's NEEDED list, no
#                         libmpi mapped at world 1 or through NCCL, the clear error when missing.
# test_coll links the CUDA stub (the contract's rule for binaries); at run time the script puts
# build/tests/hostcuda (and build/tests/hostnccl) first on LD_LIBRARY_PATH.

COLLT_BUILD := $(BUILD)/tests/collectives
COLLT_BINS := $(COLLT_BUILD)/test_coll $(COLLT_BUILD)/test_cast

ALL += $(COLLT_BINS)
TESTS += $(COLLT_BUILD)/test_cast tests/collectives/test_coll.sh tests/collectives/test_mpi_dl.sh

$(COLLT_BUILD)/test_coll: tests/collectives/test_coll.c $(BUILD)/collectives/libash_coll.a \
                          collectives/ash_coll.h collectives/ash_coll_cast.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Icollectives $(MPI_CFLAGS) -o $@ $< \
	  $(BUILD)/collectives/libash_coll.a -L$(CUDA_HOME)/lib64/stubs -lcuda $(MPI_LIBS) -ldl -lm

$(COLLT_BUILD)/test_cast: tests/collectives/test_cast.c collectives/ash_coll_cast.h \
                          $(BUILD)/collectives/libash_cast_kernels_host.so | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -Icollectives -o $@ $< -L$(BUILD)/collectives \
	  -l:libash_cast_kernels_host.so -Wl,-rpath,'$$ORIGIN/../../collectives' -lcmocka -lm
