# intercept/cublas.mk — the cuBLAS / cuBLASLt hooks (intercept/cublas*.c, built into
# libaccelshim.so by intercept/module.mk's wildcard) depend on their X-macro list too.
$(BUILD)/intercept/cublas.o: intercept/cublas_hooks.def intercept/cublas.h
$(BUILD)/intercept/cublas_unwind.o: intercept/cublas.h
