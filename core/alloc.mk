# core/alloc.mk — the allocation table (core/alloc.c, private header core/ash_alloc.h).
# Included by the top Makefile. Exposes ASH_ALLOC_OBJS for libaccelshim.so to link; no CUDA,
# no libraries beyond libc and pthreads.

ASH_ALLOC_SRCS := core/alloc.c
ASH_ALLOC_OBJS := $(BUILD)/core/alloc.o

$(BUILD)/core/alloc.o: core/alloc.c core/ash_alloc.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PTHREAD) -c -o $@ $<

ALL += $(ASH_ALLOC_OBJS)
