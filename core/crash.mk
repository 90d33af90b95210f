# core/crash.mk — the crash reporter (core/crash.c) needs libunwind in libaccelshim.so.
# (core/*.c is compiled into the library by intercept/module.mk; this only adds the library.)
ASH_LIB_EXTRA_LIBS += -lunwind
