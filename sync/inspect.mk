# sync/inspect.mk — the engine's NaN/Inf check (sync/inspect.c) in libaccelshim.so: the scan
# kernels' PTX (sync/inspect_kernels.cu) embedded through sync/inspect_ptx.S; the same kernels
# built for hostcuda as libash_inspect_kernels_host.so (accelerate-run --cpu and the tests put it
# in HOSTCUDA_KERNEL_LIBS; its path under build/shim/ is kept, as they name it), and
# bench/nan_check.sh. (sync/*.c is compiled into the library by intercept/module.mk; this adds
# the blob.) xxHash (observe/record.c) is used header-only (XXH_INLINE_ALL, from libxxhash-dev):
# the preloaded library gains no runtime dependency.

ASH_INSPECT_PTX  := $(BUILD)/sync/inspect_kernels.ptx
ASH_INSPECT_BLOB := $(BUILD)/sync/inspect_ptx.o
ASH_INSPECT_HOST := $(BUILD)/shim/libash_inspect_kernels_host.so

ALL += $(ASH_INSPECT_HOST)
BENCHES += bench/nan_check.sh
ASH_LIB_EXTRA_LIBS += $(ASH_INSPECT_BLOB)

$(ASH_INSPECT_BLOB): sync/inspect_ptx.S $(ASH_INSPECT_PTX) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -c -DASH_INSPECT_PTX_FILE='"$(ASH_INSPECT_PTX)"' -o $@ $<

$(BUILD)/libaccelshim.so: $(ASH_INSPECT_BLOB)

$(ASH_INSPECT_HOST): $(BUILD)/sync/inspect_kernels.host.o
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^
