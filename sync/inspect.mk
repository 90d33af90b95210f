# shim/record.mk — recording (shim/record.c) and the NaN/Inf sentinel (shim/inspect.c) in
# libaccelshim.so: the scan kernels' PTX (shim/inspect_kernels.cu) embedded through
# shim/inspect_ptx.S, the same kernels built for hostcuda as libash_inspect_kernels_host.so
# (accelerate-run --cpu and the tests put it in HOSTCUDA_KERNEL_LIBS), and bench/nan_check.sh.
# (shim/*.c is compiled into the library by intercept/module.mk; this adds the blob and headers.)
# xxHash is used header-only (XXH_INLINE_ALL, from libxxhash-dev): the preloaded library gains
# no runtime dependency.

ASH_INSPECT_PTX  := $(BUILD)/shim/inspect_kernels.ptx
ASH_INSPECT_BLOB := $(BUILD)/shim/inspect_ptx.o
ASH_INSPECT_HOST := $(BUILD)/shim/libash_inspect_kernels_host.so

ALL += $(ASH_INSPECT_HOST)
BENCHES += bench/nan_check.sh
ASH_LIB_EXTRA_LIBS += $(ASH_INSPECT_BLOB)

$(ASH_INSPECT_BLOB): shim/inspect_ptx.S $(ASH_INSPECT_PTX) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -c -DASH_INSPECT_PTX_FILE='"$(ASH_INSPECT_PTX)"' -o $@ $<

$(BUILD)/libaccelshim.so: $(ASH_INSPECT_BLOB)
$(BUILD)/shim/record.o $(BUILD)/shim/inspect.o: shim/ash_record.h

$(ASH_INSPECT_HOST): $(BUILD)/shim/inspect_kernels.host.o
	$(CC) -shared -o $@ $^
