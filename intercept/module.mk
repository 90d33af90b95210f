# intercept/module.mk — builds build/libaccelshim.so, the LD_PRELOAD library. Its sources, by
# folder (the call direction: intercept -> sync -> collectives/policy; observers beside):
#   intercept/  the CUDA boundary (hooks, routing, kernel cache, the real-driver table's filling)
#   core/       lifecycle, options, world, log, crash, fatal, driver table, allocation table
#               (core/alloc.c through core/alloc.mk)
#   sync/       the sync engine: pipeline, fusion, watchdog, NaN check, observer interface
#   observe/    the engine's observers: record, exit report, trace (and their registry)
#   precision/  the cuBLAS feature: fp32 GEMM compute type, caller exclusion
# Never links libcuda: the real driver is dlopen'ed by name at the first call. Exports only what
# intercept/exports.map allows. The engine links the policy (libyaml) and collectives (MPI)
# archives; other folders' .mk files add to ASH_LIB_EXTRA_LIBS (core/crash.mk, sync/inspect.mk).

ASH_LIB           := $(BUILD)/libaccelshim.so
ASH_LIB_DIRS      := intercept core sync observe precision
ASH_LIB_CPPFLAGS  := $(CPPFLAGS) $(ASH_LIB_DIRS:%=-I%) -Ipolicy -Icollectives
ASH_LIB_HDRS      := $(wildcard $(ASH_LIB_DIRS:%=%/*.h) $(ASH_LIB_DIRS:%=%/*.def)) include/accelshim.h \
                     collectives/ash_coll.h policy/ash_policy.h
# core/alloc.c is built by core/alloc.mk (included by the top Makefile, possibly after this file,
# so its variables cannot be used in prerequisites here: name its object directly).
ASH_LIB_ALLOC_OBJ := $(BUILD)/core/alloc.o
ASH_LIB_SRCS      := $(filter-out core/alloc.c,$(wildcard $(ASH_LIB_DIRS:%=%/*.c)))
ASH_LIB_OBJS      := $(patsubst %.c,$(BUILD)/%.o,$(ASH_LIB_SRCS))
ASH_LIB_EXTRA_LIBS += $(BUILD)/policy/libash_policy.a $(BUILD)/collectives/libash_coll.a -lyaml \
                      $(shell mpicc --showme:link 2>/dev/null || echo -lmpi) -lm

ALL += $(ASH_LIB)

$(ASH_LIB_OBJS): $(BUILD)/%.o: %.c $(ASH_LIB_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ASH_LIB_CPPFLAGS) $(CFLAGS) $(PTHREAD) -c -o $@ $<

$(ASH_LIB): $(ASH_LIB_OBJS) $(ASH_LIB_ALLOC_OBJ) intercept/exports.map \
            $(BUILD)/policy/libash_policy.a $(BUILD)/collectives/libash_coll.a | $(DEPS_STAMP)
	$(CC) -shared $(CFLAGS) $(PTHREAD) -o $@ $(ASH_LIB_OBJS) $(ASH_LIB_ALLOC_OBJ) \
	    -Wl,--version-script=intercept/exports.map -Wl,--no-undefined -Wl,-z,now \
	    $(ASH_LIB_EXTRA_LIBS) -ldl
