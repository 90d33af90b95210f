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
$(PTXT_DIR)/test_ptx_%: $(PTXT_SRC)/test_ptx_%.c $(PTXT_SRC)/ptxt.h $(PTXT_SRC)/isa_ref.h $(HOSTCUDA_LIB) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -frounding-math -I$(PTXT_SRC) -o $@ $< $(PTXT_LDFLAGS)

$(PTXT_DIR)/test_ptx_isa: $(PTXT_DIR)/isa_kernels.ptx
$(PTXT_DIR)/test_ptx_sem: $(PTXT_DIR)/sem_kernels.ptx

PTXT_BINS := $(PTXT_DIR)/test_ptx_isa $(PTXT_DIR)/test_ptx_sem
ALL += $(PTXT_BINS)
TESTS += $(PTXT_BINS)
