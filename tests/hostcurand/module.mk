# tests/hostcurand/module.mk — cuRAND's host API on hostcuda, with NVIDIA's soname and symbol
# version (tests put build/tests/hostcurand first on LD_LIBRARY_PATH; a program linked against
# the real -lcurand then runs on it):
#   build/tests/hostcurand/libcurand.so.10   hostcurand.c (README.md "hostcurand" section)
HOSTCURAND_DIR := $(BUILD)/tests/hostcurand
HOSTCURAND_LIB := $(HOSTCURAND_DIR)/libcurand.so.10

ALL += $(HOSTCURAND_LIB)

$(HOSTCURAND_LIB): tests/hostcurand/hostcurand.c tests/hostcurand/hostcurand.map $(HOSTCUDA_DIR)/libcuda.so.1 | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -shared -Wl,-soname,libcurand.so.10 \
	  -Wl,--version-script=tests/hostcurand/hostcurand.map -Wl,-Bsymbolic -Wl,--no-undefined -o $@ $< \
	  $(HOSTCUDA_DIR)/libcuda.so.1 -lm

# cr_equiv: the host API on hostcurand against NVIDIA's device API (curand_kernel.h) run on
# hostcuda's PTX interpreter; linked against NVIDIA's -lcurand like any user program (against
# hostcurand itself, same soname and version node, where the toolkit has no libcurand.so)
HOSTCURAND_EQUIV := $(HOSTCURAND_DIR)/cr_equiv
HOSTCURAND_LINK := $(if $(wildcard $(CUDA_HOME)/lib64/libcurand.so),-lcurand,$(HOSTCURAND_LIB))
ALL += $(HOSTCURAND_EQUIV)
$(HOSTCURAND_EQUIV): tests/hostcurand/cr_equiv.cu $(HOSTCUDA_LIB) $(HOSTCURAND_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCUDART_NVCC) -o $@ $< $(HOSTCURAND_LINK)
TESTS += tests/hostcurand/test_hcr_equiv.sh tests/hostcurand/test_hcr_exports.sh tests/hostcurand/test_hcr_launcher.sh

# test_hcr_host: device and host generators agree, from plain C on the Driver API; memcheck by
# test_hcr_valgrind.sh
HOSTCURAND_HOST_TEST := $(HOSTCURAND_DIR)/test_hcr_host
ALL += $(HOSTCURAND_HOST_TEST)
TESTS += $(HOSTCURAND_HOST_TEST) tests/hostcurand/test_hcr_valgrind.sh
$(HOSTCURAND_HOST_TEST): tests/hostcurand/test_hcr_host.c $(HOSTCURAND_LIB) | $(DEPS_STAMP)
	$(CC) $(CFLAGS) $(CPPFLAGS) -o $@ $< -Wl,-rpath,$(abspath $(HOSTCURAND_DIR)):$(abspath $(HOSTCUDA_DIR)) \
	  $(HOSTCURAND_LIB) $(HOSTCUDA_DIR)/libcuda.so.1
