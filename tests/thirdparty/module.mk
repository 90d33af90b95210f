# tests/thirdparty/module.mk — the project's own recipe for the third-party corpus (unmodified
# public sources at ACCELSHIM_THIRDPARTY, default ../shared/thirdparty from the repository root;
# never copied, never modified; scripts/fetch-thirdparty.sh clones the same pinned commits).
# Built into build/thirdparty/ as a user would build them to dry-run on a CPU:
#   llm.c/train_gpt2fp32cu   train_gpt2_fp32.cu  (fp32; cuBLAS)
#   llm.c/train_gpt2cu       train_gpt2.cu       (bf16, one GPU: -DENABLE_BF16 -DNO_MULTI_GPU
#                            -DNO_USE_MPI; cuBLASLt; -include llmc_cuda13_compat.h for CUDA 13's
#                            cudaMemAdvise)
#   llm.c/train_gpt2         train_gpt2.c, llm.c's CPU reference trainer (gcc -O3 -fopenmp)
#   cuda-samples/NAME/NAME   vectorAddDrv, matrixMulDrv, simpleDrvRuntime (each beside the
#                            fatbin it loads from its working directory), vectorAdd, matrixMul
# Every CUDA program: nvcc's default code (sm_75 SASS + compute_75 PTX, which hostcuda runs) and
# -cudart shared (NVIDIA's static cudart cannot run on hostcuda). llm.c: llm.c's own flags
# without NVML (-O3 --use_fast_math -std=c++17 -lcublas -lcublasLt).
# When the corpus is absent nothing here is built and the tests that need it skip (CI=true: fail).
TP_SRC := $(or $(ACCELSHIM_THIRDPARTY),../shared/thirdparty)
TP_DIR := $(BUILD)/thirdparty
TP_LLMC := $(TP_SRC)/llm.c
TP_SAMPLES := $(TP_SRC)/cuda-samples/Samples/0_Introduction
TP_NVCC_FLAGS := -cudart shared -Wno-deprecated-gpu-targets
TP_LLMC_NVCC := -O3 --use_fast_math -std=c++17 $(TP_NVCC_FLAGS)
TP_LLMC_LIBS := -lcublas -lcublasLt
TP_SAMPLE_INC := -I$(TP_SRC)/cuda-samples/Common
TP_DRV_LIBS := -L$(CUDA_HOME)/lib64/stubs -lcuda

TP_LLMC_BINS := $(addprefix $(TP_DIR)/llm.c/,train_gpt2fp32cu train_gpt2cu train_gpt2)
TP_SAMPLE_BINS := $(TP_DIR)/cuda-samples/vectorAddDrv/vectorAddDrv \
                  $(TP_DIR)/cuda-samples/vectorAddDrv/vectorAdd_kernel64.fatbin \
                  $(TP_DIR)/cuda-samples/matrixMulDrv/matrixMulDrv \
                  $(TP_DIR)/cuda-samples/matrixMulDrv/matrixMul_kernel64.fatbin \
                  $(TP_DIR)/cuda-samples/simpleDrvRuntime/simpleDrvRuntime \
                  $(TP_DIR)/cuda-samples/simpleDrvRuntime/vectorAdd_kernel64.fatbin \
                  $(TP_DIR)/cuda-samples/vectorAdd/vectorAdd \
                  $(TP_DIR)/cuda-samples/matrixMul/matrixMul

.PHONY: thirdparty
thirdparty: $(if $(wildcard $(TP_LLMC)/train_gpt2.c),$(TP_LLMC_BINS)) \
            $(if $(wildcard $(TP_SAMPLES)/vectorAdd/vectorAdd.cu),$(TP_SAMPLE_BINS))
	@$(if $(wildcard $(TP_LLMC)/train_gpt2.c),:,echo "thirdparty: $(TP_SRC) has no llm.c: nothing built (scripts/fetch-thirdparty.sh)")
ALL += thirdparty

$(TP_DIR)/llm.c/train_gpt2fp32cu: $(TP_LLMC)/train_gpt2_fp32.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(TP_LLMC_NVCC) -diag-suppress 550 -o $@ $< $(TP_LLMC_LIBS)

$(TP_DIR)/llm.c/train_gpt2cu: $(TP_LLMC)/train_gpt2.cu tests/thirdparty/llmc_cuda13_compat.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(TP_LLMC_NVCC) -DENABLE_BF16 -DNO_MULTI_GPU -DNO_USE_MPI \
	    -include tests/thirdparty/llmc_cuda13_compat.h -I$(TP_LLMC) -o $@ $< $(TP_LLMC_LIBS)

$(TP_DIR)/llm.c/train_gpt2: $(TP_LLMC)/train_gpt2.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -O3 -fopenmp -Wno-unused-result -I$(TP_LLMC) -o $@ $< -lm

# the Driver API samples load NAME_kernel64.fatbin from their working directory (sdkFindFilePath "./")
$(TP_DIR)/cuda-samples/%/vectorAdd_kernel64.fatbin: $(TP_SAMPLES)/%/vectorAdd_kernel.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -Wno-deprecated-gpu-targets $(TP_SAMPLE_INC) -o $@ $<
$(TP_DIR)/cuda-samples/matrixMulDrv/matrixMul_kernel64.fatbin: $(TP_SAMPLES)/matrixMulDrv/matrixMul_kernel.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -Wno-deprecated-gpu-targets $(TP_SAMPLE_INC) -o $@ $<

$(TP_DIR)/cuda-samples/vectorAddDrv/vectorAddDrv: $(TP_SAMPLES)/vectorAddDrv/vectorAddDrv.cpp | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 $(TP_NVCC_FLAGS) $(TP_SAMPLE_INC) -o $@ $< $(TP_DRV_LIBS)
$(TP_DIR)/cuda-samples/matrixMulDrv/matrixMulDrv: $(TP_SAMPLES)/matrixMulDrv/matrixMulDrv.cpp | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 $(TP_NVCC_FLAGS) $(TP_SAMPLE_INC) -o $@ $< $(TP_DRV_LIBS)
$(TP_DIR)/cuda-samples/simpleDrvRuntime/simpleDrvRuntime: $(TP_SAMPLES)/simpleDrvRuntime/simpleDrvRuntime.cpp | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 $(TP_NVCC_FLAGS) $(TP_SAMPLE_INC) -o $@ $< $(TP_DRV_LIBS)
$(TP_DIR)/cuda-samples/vectorAdd/vectorAdd: $(TP_SAMPLES)/vectorAdd/vectorAdd.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 $(TP_NVCC_FLAGS) $(TP_SAMPLE_INC) -o $@ $<
$(TP_DIR)/cuda-samples/matrixMul/matrixMul: $(TP_SAMPLES)/matrixMul/matrixMul.cu | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 $(TP_NVCC_FLAGS) $(TP_SAMPLE_INC) -o $@ $<

# the data recipe, checked with llm.c's own loader (llmc/dataloader.h compiled in unmodified)
TP_SPLIT_CHECK := $(TP_DIR)/llmc_split_check
$(TP_SPLIT_CHECK): tests/thirdparty/llmc_split_check.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wno-unused-result -I$(TP_LLMC) -o $@ $< -lm
thirdparty: $(if $(wildcard $(TP_LLMC)/llmc/dataloader.h),$(TP_SPLIT_CHECK))

TESTS += tests/thirdparty/test_llmc_tiny.sh tests/thirdparty/test_fetch_thirdparty.sh tests/thirdparty/test_samples.sh \
         tests/thirdparty/test_try_samples.sh \
         tests/thirdparty/test_llmc_fp32.sh tests/thirdparty/test_llmc_fp32_shim.sh tests/thirdparty/test_llmc_bf16_shim.sh \
         tests/thirdparty/test_llmc_record.sh tests/thirdparty/test_llmc_overlap.sh \
         tests/thirdparty/test_llmc_eval_watch.sh
