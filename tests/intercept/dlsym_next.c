/* dlsym_next.c — dlsym(RTLD_NEXT, name) called by the application resolves relative to the
 * CALLER, not to the shim that interposes dlsym: from libnext_a.so (loaded after the shim) it
 * must find libnext_b.so's definition; driver names asked with RTLD_NEXT from the program and
 * from libnext_a.so both give the shim's hook; a name defined nowhere gives NULL and a dlerror.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

int ash_next_ask(void);
void *ash_next_cu(const char *name);

static const char *owner(void *p, char *buf, size_t cap, const char **sym)
{
    Dl_info i;
    if (p == NULL || dladdr(p, &i) == 0) {
        *sym = "-";
        return "-";
    }
    *sym = i.dli_sname ? i.dli_sname : "?";
    snprintf(buf, cap, "%s", i.dli_fname);
    return basename(buf);
}

int main(int argc, char **argv)
{
    int shim = argc > 1 && strcmp(argv[1], "--shim") == 0;
    int fails = 0;
    int got = ash_next_ask();
    printf("dlsym(RTLD_NEXT, ash_next_target) from libnext_a.so -> definition %d (want 2)\n", got);
    fails += got != 2;

    const char *want_owner = shim ? "libaccelshim.so" : "libcuda.so.1";
    char b1[256], b2[256];
    const char *s1, *s2;
    const char *o1 = owner(dlsym(RTLD_NEXT, "cuLaunchKernel"), b1, sizeof b1, &s1);
    const char *o2 = owner(ash_next_cu("cuLaunchKernel"), b2, sizeof b2, &s2);
    printf("RTLD_NEXT cuLaunchKernel: from the program %s:%s, from libnext_a.so %s:%s (want %s:cuLaunchKernel)\n", o1,
           s1, o2, s2, want_owner);
    fails += strcmp(o1, want_owner) != 0 || strcmp(s1, "cuLaunchKernel") != 0;
    fails += strcmp(o2, want_owner) != 0 || strcmp(s2, "cuLaunchKernel") != 0;

    dlerror();
    void *none = dlsym(RTLD_NEXT, "ash_next_nowhere");
    const char *err = dlerror();
    printf("RTLD_NEXT ash_next_nowhere -> %p, dlerror %s\n", none, err ? "set" : "NOT set");
    fails += none != NULL || err == NULL;
    dlerror();
    void *found = dlsym(RTLD_NEXT, "ash_next_target");
    err = dlerror();
    printf("RTLD_NEXT ash_next_target from the program -> %s, dlerror after success %s\n", found ? "found" : "NULL",
           err ? err : "clear");
    fails += found == NULL || err != NULL;
    printf("%s\n", fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}
