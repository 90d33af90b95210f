# tests/ptx/module.mk — the PTX interpreter's proof (issue 24, part 5): per-instruction tests from
# the PTX ISA (isa_kernels.cu, inline asm, against C references), SIMT semantics (sem_kernels.cu),
# faults, llm.c's matmul_forward_kernel4 overrun, and every project kernel through its twin and
# through the interpreter. The kernels here are PTX only (no host twins): hostcuda runs them with
# HOSTCUDA_EXEC=ptx, and each test skips (77) when its hostcuda has no interpreter.

PTXT_SRC := tests/ptx
PTXT_DIR := $(BUILD)/tests/ptx
PTXT_LDFLAGS := -L$(HOSTCUDA_DIR) -Wl,-rpath,$(abspath $(HOSTCUDA_DIR)) -lcuda -lm

$(PTXT_DIR)/isa_kernels.ptx: $(PTXT_SRC)/isa_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -arch=compute_80 -O2 -o $@ $<
$(PTXT_DIR)/sem_kernels.ptx: $(PTXT_SRC)/sem_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -arch=compute_90 -O2 -o $@ $<

# the references need the FPU's rounding modes honoured: -frounding-math
$(PTXT_DIR)/test_ptx_isa: $(PTXT_SRC)/test_ptx_isa.c $(PTXT_SRC)/isa_cases.c $(PTXT_SRC)/isa_cases.h $(PTXT_SRC)/ptxt.h \
                          $(PTXT_SRC)/isa_ref.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -frounding-math -I$(PTXT_SRC) -o $@ $(PTXT_SRC)/test_ptx_isa.c $(PTXT_SRC)/isa_cases.c \
	    $(PTXT_LDFLAGS)
$(PTXT_DIR)/test_ptx_sem: $(PTXT_SRC)/test_ptx_sem.c $(PTXT_SRC)/ptxt.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -I$(PTXT_SRC) -o $@ $< $(PTXT_LDFLAGS)

$(PTXT_DIR)/fault_kernels.ptx: $(PTXT_SRC)/fault_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -arch=compute_80 -O2 -o $@ $<
$(PTXT_DIR)/refuse_kernels.ptx: $(PTXT_SRC)/refuse_kernels.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -arch=compute_80 -O2 -o $@ $<
$(PTXT_DIR)/ptx_fault_run: $(PTXT_SRC)/ptx_fault_run.c $(PTXT_SRC)/ptxt.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -I$(PTXT_SRC) -o $@ $< $(PTXT_LDFLAGS)

# llm.c's kernels, compiled from the third-party corpus with its Makefile's flags (never copied);
# built only where the corpus is (ACCELSHIM_THIRDPARTY, default ../shared/thirdparty)
PTXT_THIRDPARTY := $(or $(ACCELSHIM_THIRDPARTY),../shared/thirdparty)
PTXT_LLMC_SRC := $(PTXT_THIRDPARTY)/llm.c/train_gpt2_fp32.cu
$(PTXT_DIR)/llmc_fp32.ptx: $(PTXT_LLMC_SRC) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -O3 --use_fast_math -std=c++17 -arch=compute_75 -diag-suppress 550 -o $@ $<
ifneq ($(wildcard $(PTXT_LLMC_SRC)),)
ALL += $(PTXT_DIR)/llmc_fp32.ptx
endif

# the twin-vs-interpreter harness, and every project kernel's PTX again with -fmad=false (no fma
# contraction: the interpreter must then match the host twins bit for bit, library functions apart)
$(PTXT_DIR)/ptx_twin_run: $(PTXT_SRC)/ptx_twin_run.c $(PTXT_SRC)/ptxt.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -I$(PTXT_SRC) -o $@ $< $(PTXT_LDFLAGS)
PTXT_PROJECT_KERNELS := tests/hostcuda/test_kernels.cu tests/trainers/mlp_kernels.cu tests/trainers/layers_kernels.cu \
                        collectives/cast_kernels.cu shim/sync/inspect_kernels.cu
PTXT_NOFMA_PTX := $(addprefix $(PTXT_DIR)/nofma/,$(notdir $(PTXT_PROJECT_KERNELS:.cu=.ptx)))
define PTXT_NOFMA_RULE
$(PTXT_DIR)/nofma/$(notdir $(1:.cu=.ptx)): $(1) include/ash_kernel.h | $$(DEPS_STAMP)
	@mkdir -p $$(dir $$@)
	$$(NVCC) $$(NVCCFLAGS) -fmad=false -Iinclude -o $$@ $$<
endef
$(foreach k,$(PTXT_PROJECT_KERNELS),$(eval $(call PTXT_NOFMA_RULE,$(k))))
# and for compute_75 (nvcc's default target: bf16 rounding done with integer instructions there,
# with cvt.rn.bf16.f32 from compute_80 on)
PTXT_CC75_PTX := $(addprefix $(PTXT_DIR)/cc75/,$(notdir $(PTXT_PROJECT_KERNELS:.cu=.ptx)))
define PTXT_CC75_RULE
$(PTXT_DIR)/cc75/$(notdir $(1:.cu=.ptx)): $(1) include/ash_kernel.h | $$(DEPS_STAMP)
	@mkdir -p $$(dir $$@)
	$$(NVCC) -ptx -arch=compute_75 -O2 -Iinclude -o $$@ $$<
endef
$(foreach k,$(PTXT_PROJECT_KERNELS),$(eval $(call PTXT_CC75_RULE,$(k))))

$(PTXT_DIR)/test_ptx_isa: $(PTXT_DIR)/isa_kernels.ptx
$(PTXT_DIR)/test_ptx_sem: $(PTXT_DIR)/sem_kernels.ptx

$(PTXT_DIR)/test_ptx_llmc: $(PTXT_SRC)/test_ptx_llmc.c $(PTXT_SRC)/ptxt.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -I$(PTXT_SRC) -o $@ $< $(PTXT_LDFLAGS)

PTXT_BINS := $(PTXT_DIR)/test_ptx_isa $(PTXT_DIR)/test_ptx_sem $(PTXT_DIR)/test_ptx_llmc
ALL += $(PTXT_BINS) $(PTXT_DIR)/ptx_fault_run $(PTXT_DIR)/fault_kernels.ptx $(PTXT_DIR)/refuse_kernels.ptx $(PTXT_DIR)/ptx_twin_run $(PTXT_NOFMA_PTX) \
       $(PTXT_CC75_PTX)
TESTS += $(PTXT_BINS) $(PTXT_SRC)/test_ptx_faults.sh $(PTXT_SRC)/test_ptx_refuse.sh $(PTXT_SRC)/test_ptx_twins.sh $(PTXT_SRC)/test_ptx_equivalence.sh \
         $(PTXT_SRC)/test_ptx_equivalence_mpi.sh
