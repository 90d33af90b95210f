/* doors.c — the three ways a program reaches a driver entry point: dlsym, cuGetProcAddress
 * (legacy 4-argument export) and cuGetProcAddress_v2. Each calls the REAL resolver, keeps its
 * CUresult / symbolStatus / dlerror, and maps the pointer it returned by identity
 * (ash_hook_route): a hooked driver export -> that exact symbol's hook; one of our hooks -> as is;
 * anything else (cuGetExportTable, unhooked names, unknown pointers) -> untouched. The two
 * cuGetProcAddress doors then fall back to routing by (name, version, flags) when the pointer is
 * no exported symbol (ash_hook_route_proc), and record each request in ACCELSHIM_ROUTING_TABLE.
 *
 * dlsym: only names matching cu[A-Z]* are routed; the real dlsym comes from dlvsym(RTLD_NEXT,
 * "dlsym", "GLIBC_2.34"), then "GLIBC_2.2.5" (x86-64), then "GLIBC_2.17" (aarch64); the public
 * dlsym is never called from inside the shim. RTLD_NEXT is resolved relative to the CALLER (the
 * real dlsym would see the shim as caller): see ash_dlsym_next for the method and its limits.
 * Threading: any thread; a thread-local depth makes nested resolver calls (from init, or from
 * the driver's own resolver) pass straight through.
 * Must not: call the public dlsym from inside the shim; route a dlsym name not matching cu[A-Z]*;
 * answer or wrap cuGetExportTable (handed back untouched); change the real resolver's CUresult,
 * symbolStatus or dlerror; decide policy or talk to other ranks.
 */
#include "ash_hook.h"

#include "ash_log.h"
#include "ash_options.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void *(*ash_dlsym_fn)(void *, const char *);
static _Atomic(ash_dlsym_fn) ash_dlsym_real;

static ash_dlsym_fn ash_dlsym_get(void)
{
    ash_dlsym_fn f = atomic_load_explicit(&ash_dlsym_real, memory_order_acquire);
    if (ASH_LIKELY(f != NULL))
        return f;
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && f == NULL; i++)
        f = (ash_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (f == NULL)
        ash_error("doors", "cannot find the real dlsym (dlvsym GLIBC_2.34/2.2.5/2.17): dlsym returns NULL");
    else
        atomic_store_explicit(&ash_dlsym_real, f, memory_order_release); /* same value from any thread */
    return f;
}

void *ash_hook_real_dlsym(void *handle, const char *name)
{
    ash_dlsym_fn f = ash_dlsym_get();
    return f ? f(handle, name) : NULL;
}

/* strcmp(a, b) == 0, written out: during a sanitizer's start even strcmp is an unready interceptor */
static int ash_streq(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* Run an IFUNC resolver the way ld.so does on this architecture; (void *)-1 where unknown. */
static void *ash_elf_ifunc(uintptr_t resolver)
{
#if defined(__x86_64__)
    return ((void *(*)(void))resolver)();
#elif defined(__aarch64__)
    struct {
        unsigned long size, hwcap, hwcap2;
    } caps = {sizeof caps, getauxval(AT_HWCAP), getauxval(AT_HWCAP2)};
    return ((void *(*)(uint64_t, const void *))resolver)(caps.hwcap | (1ULL << 62), &caps);
#else
    (void)resolver;
    return (void *)-1;
#endif
}

/* The address of `name` DEFINED in object m itself (its own .dynsym, through DT_GNU_HASH), or
 * NULL. No dlopen, no allocation, no lock: safe even while a sanitizer runtime, which intercepts
 * dlopen, is still starting. The default version wins (hidden versions are skipped); an IFUNC's
 * resolver is run as ld.so would; a TLS symbol answers -1 (the caller uses the real dlsym). */
static void *ash_elf_lookup(const struct link_map *m, const char *name)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu_hash = NULL;
    const ElfW(Half) *versym = NULL;
    if (m->l_ld == NULL)
        return NULL;
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
        /* ld.so relocates these in place for most objects, not for all (vdso): add the base if not */
        uintptr_t v = (uintptr_t)d->d_un.d_ptr;
        if (v < (uintptr_t)m->l_addr)
            v += (uintptr_t)m->l_addr;
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)v; break;
        case DT_STRTAB: strtab = (const char *)v; break;
        case DT_GNU_HASH: gnu_hash = (const uint32_t *)v; break;
        case DT_VERSYM: versym = (const ElfW(Half) *)v; break;
        default: break;
        }
    }
    if (symtab == NULL || strtab == NULL || gnu_hash == NULL)
        return NULL;
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    uint32_t nbuckets = gnu_hash[0], symoffset = gnu_hash[1], bloom_size = gnu_hash[2], bloom_shift = gnu_hash[3];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)&gnu_hash[4];
    const uint32_t *buckets = (const uint32_t *)&bloom[bloom_size];
    const uint32_t *chain = &buckets[nbuckets];
    const unsigned bits = sizeof(ElfW(Addr)) * 8;
    ElfW(Addr) word = bloom[(h / bits) % bloom_size];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> bloom_shift) % bits));
    if (nbuckets == 0 || (word & mask) != mask)
        return NULL;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t h2 = chain[i - symoffset];
        const ElfW(Sym) *sym = &symtab[i];
        if ((h | 1) == (h2 | 1) && sym->st_shndx != SHN_UNDEF && ash_streq(strtab + sym->st_name, name) &&
            (sym->st_info >> 4) != STB_LOCAL && (versym == NULL || !(versym[i] & 0x8000))) {
            if ((sym->st_info & 0xf) == STT_GNU_IFUNC)
                return ash_elf_ifunc((uintptr_t)m->l_addr + sym->st_value);
            if ((sym->st_info & 0xf) == STT_TLS)
                return (void *)-1;
            return (void *)((uintptr_t)m->l_addr + sym->st_value);
        }
        if (h2 & 1)
            return NULL;
    }
}

/* dlsym(RTLD_NEXT, name) as the CALLER would get it: the first object after the caller's in the
 * link-map chain that itself defines name (ash_elf_lookup). Limits: the chain also holds objects
 * dlopen'ed RTLD_LOCAL, which glibc's RTLD_NEXT would skip; other link-map namespaces (dlmopen)
 * are not walked; objects without DT_GNU_HASH are skipped; a caller that dladdr cannot place
 * (JIT code), an IFUNC or TLS symbol, or a walk that finds nothing gets the real dlsym's answer
 * relative to the shim — never the caller's own definition. */
static void *ash_dlsym_next(ash_dlsym_fn real, const void *caller, const char *name)
{
    Dl_info info;
    struct link_map *self = NULL;
    if (dladdr1(caller, &info, (void **)&self, RTLD_DL_LINKMAP) == 0 || self == NULL)
        return real(RTLD_NEXT, name);
    for (struct link_map *m = self->l_next; m != NULL; m = m->l_next) {
        void *p = ash_elf_lookup(m, name);
        if (p == (void *)-1)
            break; /* the real dlsym must resolve it */
        if (p != NULL)
            return p;
    }
    /* The real dlsym's answer relative to the shim (also sets dlerror() on a miss), unless it is
     * the caller's own definition, which RTLD_NEXT must never return (an interposer would call
     * itself forever). */
    void *p = real(RTLD_NEXT, name);
    struct link_map *owner = NULL;
    Dl_info pinfo;
    if (p != NULL && dladdr1(p, &pinfo, (void **)&owner, RTLD_DL_LINKMAP) != 0 && owner == self)
        return NULL;
    return p;
}

ASH_EXPORT void *dlsym(void *handle, const char *name)
{
    const void *caller = __builtin_return_address(0);
    ash_dlsym_fn real = ash_dlsym_get();
    if (real == NULL)
        return NULL;
    if (!ash_hook_is_cu_name(name) || ash_hook_depth > 0)
        return handle == RTLD_NEXT ? ash_dlsym_next(real, caller, name) : real(handle, name);
    ash_hook_depth++;
    ash_hook_init();
    void *p = handle == RTLD_NEXT ? ash_dlsym_next(real, caller, name) : real(handle, name);
    p = ash_hook_route(p, name);
    ash_hook_depth--;
    return p;
}

/* ---- the routing table (ACCELSHIM_ROUTING_TABLE=PATH): one TSV line per cuGetProcAddress[_v2]
 * request a program makes (nested requests of the shim or the driver itself are not recorded):
 *   symbol cudaVersion flags status owner real handed route hook door
 * status = CUresult ":" symbolStatus (success|symbol_not_found|version_not_sufficient; '-' when
 * the caller passed no symbolStatus or used the 4-argument door); owner = the file dladdr names
 * for the driver's pointer (basename; '-' none, '?' unknown); real = the exported symbol that
 * pointer is (dladdr exact), else ~nearest+0xoffset, '-' when none; handed = hook|passthrough;
 * route = identity|name|none; hook = the exported name of the hook handed out, '-' otherwise;
 * door = gpa_v2|gpa. The file is opened once (O_APPEND, never following a symlink) and gets a
 * '#' header line when empty; each line is one write(2). Documented in docs/hostcuda.md. */
static int ash_rt_fd = -1;
static pthread_once_t ash_rt_once = PTHREAD_ONCE_INIT;

static void ash_rt_open(void)
{
    const char *path = ash_opt_str(ASH_OPT_ROUTING_TABLE);
    if (path == NULL)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        ash_error("doors", "ACCELSHIM_ROUTING_TABLE: cannot open \"%s\": %s; requests are not recorded", path,
                  strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0) {
        static const char hdr[] = "#symbol\tcudaVersion\tflags\tstatus\towner\treal\thanded\troute\thook\tdoor\n";
        (void)!write(fd, hdr, sizeof hdr - 1);
    }
    ash_rt_fd = fd;
}

static const char *ash_rt_base(const char *path)
{
    const char *b = path;
    for (const char *c = path; *c; c++)
        if (*c == '/')
            b = c + 1;
    return b;
}

static void ash_rt_record(const char *door, const char *symbol, int version, cuuint64_t flags, CUresult r,
                          const CUdriverProcAddressQueryResult *st, void *real, void *handed, ash_route_t route)
{
    pthread_once(&ash_rt_once, ash_rt_open);
    if (ash_rt_fd < 0)
        return;
    static const char *const stname[] = {"success", "symbol_not_found", "version_not_sufficient"};
    static const char *const routename[] = {"none", "identity", "name"};
    const char *status = st == NULL ? "-" : ((unsigned)*st < 3 ? stname[*st] : "?");
    const char *owner = "-", *real_name = "-", *hook = ash_hook_name_of(handed);
    char namebuf[192];
    Dl_info info;
    if (real != NULL) {
        owner = "?";
        if (dladdr(real, &info) != 0) {
            owner = info.dli_fname != NULL ? ash_rt_base(info.dli_fname) : "?";
            if (info.dli_sname != NULL && info.dli_saddr == real) {
                real_name = info.dli_sname;
            } else {
                snprintf(namebuf, sizeof namebuf, "~%s+0x%lx", info.dli_sname ? info.dli_sname : "?",
                         (unsigned long)((char *)real - (char *)(info.dli_saddr ? info.dli_saddr : info.dli_fbase)));
                real_name = namebuf;
            }
        }
    }
    char line[512];
    int n = snprintf(line, sizeof line, "%s\t%d\t%llu\t%d:%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
                     symbol == NULL ? "(null)" : symbol[0] == '\0' ? "-" : symbol, version,
                     (unsigned long long)flags, (int)r, status, owner, real_name,
                     hook != NULL ? "hook" : "passthrough", routename[route], hook != NULL ? hook : "-", door);
    if (n > 0)
        (void)!write(ash_rt_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

ASH_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult *symbolStatus)
{
    ash_hook_init();
    PFN_cuGetProcAddress_v12000 real = ash_real.cuGetProcAddress_v2;
    if (ASH_UNLIKELY(real == NULL))
        return ash_hook_missing("cuGetProcAddress_v2");
    if (ash_hook_depth > 0)
        return real(symbol, pfn, cudaVersion, flags, symbolStatus);
    ash_hook_depth++;
    CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    void *got = (r == CUDA_SUCCESS && pfn != NULL) ? *pfn : NULL;
    ash_route_t route = ASH_ROUTE_NONE;
    if (got != NULL && ash_hook_is_cu_name(symbol))
        *pfn = ash_hook_route_proc(got, symbol, cudaVersion, flags, &route);
    if (ASH_UNLIKELY(ash_opt_str(ASH_OPT_ROUTING_TABLE) != NULL))
        ash_rt_record("gpa_v2", symbol, cudaVersion, flags, r, symbolStatus, got, got ? *pfn : NULL, route);
    ash_hook_depth--;
    return r;
}

ASH_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    ash_hook_init();
    PFN_cuGetProcAddress_v11030 real = ash_real.cuGetProcAddress;
    if (ASH_UNLIKELY(real == NULL))
        return ash_hook_missing("cuGetProcAddress");
    if (ash_hook_depth > 0)
        return real(symbol, pfn, cudaVersion, flags);
    ash_hook_depth++;
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    void *got = (r == CUDA_SUCCESS && pfn != NULL) ? *pfn : NULL;
    ash_route_t route = ASH_ROUTE_NONE;
    if (got != NULL && ash_hook_is_cu_name(symbol))
        *pfn = ash_hook_route_proc(got, symbol, cudaVersion, flags, &route);
    if (ASH_UNLIKELY(ash_opt_str(ASH_OPT_ROUTING_TABLE) != NULL))
        ash_rt_record("gpa", symbol, cudaVersion, flags, r, NULL, got, got ? *pfn : NULL, route);
    ash_hook_depth--;
    return r;
}
