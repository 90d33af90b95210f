# shim/alloc.mk — the allocation table (shim/alloc.c, private header shim/ash_alloc.h).
# Included by the shim's module.mk. Exposes ASH_ALLOC_OBJS for libaccelshim.so to link; no CUDA,
# no libraries beyond libc and pthreads.

ASH_ALLOC_SRCS := shim/alloc.c
ASH_ALLOC_OBJS := $(BUILD)/shim/alloc.o

$(BUILD)/shim/alloc.o: shim/alloc.c shim/ash_alloc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PTHREAD) -c -o $@ $<

ALL += $(ASH_ALLOC_OBJS)
