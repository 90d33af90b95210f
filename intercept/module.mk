# intercept/module.mk — builds build/libaccelshim.so, the LD_PRELOAD library, from intercept/*.c
# and shim/*.c (shim/alloc.c through shim/alloc.mk). Never links libcuda: the real driver is
# dlopen'ed by name at the first call. Exports only what intercept/exports.map allows.
# The sync engine links the policy (libyaml) and collectives (MPI) archives.

ASH_LIB           := $(BUILD)/libaccelshim.so
ASH_LIB_CPPFLAGS  := $(CPPFLAGS) -Ishim -Iintercept -Ipolicy -Icollectives
ASH_LIB_HDRS      := $(wildcard intercept/*.h shim/*.h) intercept/hooks.def intercept/pfn_versions.def collectives/ash_coll.h \
                     policy/ash_policy.h
INTERCEPT_SRCS    := $(wildcard intercept/*.c)
# shim/alloc.c is built by shim/alloc.mk (included by the top Makefile, possibly after this file,
# so its variables cannot be used in prerequisites here: name its object directly).
ASH_LIB_ALLOC_OBJ := $(BUILD)/shim/alloc.o
ASH_SHIM_SRCS     := $(filter-out shim/alloc.c,$(wildcard shim/*.c))
ASH_LIB_OBJS      := $(patsubst %.c,$(BUILD)/%.o,$(INTERCEPT_SRCS) $(ASH_SHIM_SRCS))
ASH_LIB_EXTRA_LIBS ?= $(BUILD)/policy/libash_policy.a $(BUILD)/collectives/libash_coll.a -lyaml \
                      $(shell mpicc --showme:link 2>/dev/null || echo -lmpi) -lm

ALL += $(ASH_LIB)

$(BUILD)/intercept/%.o: intercept/%.c $(ASH_LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ASH_LIB_CPPFLAGS) $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(ASH_SHIM_SRCS:%.c=$(BUILD)/%.o): $(BUILD)/shim/%.o: shim/%.c $(ASH_LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ASH_LIB_CPPFLAGS) $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(ASH_LIB): $(ASH_LIB_OBJS) $(ASH_LIB_ALLOC_OBJ) intercept/exports.map \
            $(BUILD)/policy/libash_policy.a $(BUILD)/collectives/libash_coll.a | $(DEPS_STAMP)
	$(CC) -shared $(CFLAGS) $(PTHREAD) -o $@ $(ASH_LIB_OBJS) $(ASH_LIB_ALLOC_OBJ) \
	    -Wl,--version-script=intercept/exports.map -Wl,--no-undefined -Wl,-z,now \
	    $(ASH_LIB_EXTRA_LIBS) -ldl
