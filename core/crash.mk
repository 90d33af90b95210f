# shim/crash.mk — the crash reporter (shim/crash.c) needs libunwind in libaccelshim.so.
# (shim/*.c is compiled into the library by intercept/module.mk; this only adds the library.)
ASH_LIB_EXTRA_LIBS += -lunwind
