# precision/cublas.mk — the cuBLAS / cuBLASLt hooks (precision/cublas*.c, built into
# libaccelshim.so by intercept/module.mk's folder list) depend on their X-macro list too.
$(BUILD)/precision/cublas.o: precision/cublas_hooks.def precision/cublas.h
$(BUILD)/precision/cublas_unwind.o: precision/cublas.h
