/* next_a.c — libnext_a.so for test_dlsym_next: an interposer-style library loaded AFTER the shim
 * that defines ash_next_target and asks for the NEXT definition with dlsym(RTLD_NEXT, ...). */
#include <dlfcn.h>

int ash_next_target(void) { return 1; }

/* 2 when RTLD_NEXT was resolved relative to this library (libnext_b's definition), 1 when it was
 * resolved relative to the shim (our own definition again: the bug), 0 when not found. */
int ash_next_ask(void)
{
    int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "ash_next_target");
    return f ? f() : 0;
}

/* RTLD_NEXT for a driver name from a library after the shim. */
void *ash_next_cu(const char *name) { return dlsym(RTLD_NEXT, name); }
