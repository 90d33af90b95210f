/* io.c — libaccelshim-io.so: "one writer per output". On ranks other than 0, an open FOR WRITING
 * of a path matching the policy's outputs.main_process_only goes to /dev/null; reads, other
 * paths and rank 0 are untouched.
 *
 * Interposes open, open64, openat, openat64, creat, creat64, fopen, fopen64, freopen, freopen64,
 * and the _FORTIFY_SOURCE entry points __open_2, __open64_2, __openat_2, __openat64_2 (what a
 * program built with -D_FORTIFY_SOURCE calls for a two-argument open whose flags the compiler
 * cannot see; its version script exports nothing else); rename and link: io_move.c. Rank: first
 * valid of ACCELSHIM_RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID (as the shim reads it);
 * policy: ACCELSHIM_POLICY, a regular file (a FIFO or device is skipped: the shim refuses it),
 * read ONCE when the library is loaded (its one constructor), with raw syscalls and
 * ash_policy_parse (no interposed call, so no recursion); editing or deleting it later changes
 * nothing. A write to NAME.SUFFIX or NAME~ counts as a write to NAME (a temporary saved next to
 * its output). The environment is read through the shim's options table (shim/core/options.c linked in:
 * secure_getenv, so set-uid programs get no redirection; no getenv here). A separate library so that libaccelshim.so's exports stay cu*, dlsym and accelshim_*. Writing
 * intent: open flags O_WRONLY/O_RDWR/O_CREAT/O_TRUNC, creat, an fopen mode with w, a or +. O_EXCL
 * is dropped when redirecting (/dev/null exists). Threading: init at load (pthread_once), then
 * read-only state.
 * Must not: read the environment itself (only through the options table) or an interposed function during its init (raw
 * syscalls, no recursion); redirect a read, rank 0's opens or a path that matches nothing; be part
 * of libaccelshim.so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ash_log.h"
#include "ash_options.h"
#include "ash_policy.h"
#include "io_int.h"

#define IO_API __attribute__((visibility("default")))
#define IO_POLICY_MAX (1 << 20)

static pthread_once_t io_once = PTHREAD_ONCE_INIT;
static int io_rank = -1;           /* -1: unknown (treated as rank 0: untouched) */
static ash_policy_t *io_policy;      /* NULL: nothing to redirect */
static int io_verbose;               /* ACCELSHIM_LOG=info|debug */

static void io_log(const char *a, const char *b)
{
    char line[1200];
    int n = snprintf(line, sizeof line, "[accelshim rank %d] %s%s\n", io_rank, a, b);
    if (n > 0)
        (void)!write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void io_init(void)
{
    /* the shim's options table (its own copy, linked in): typed getters only; an invalid value
     * reads as unset here, and the shim stops the program with the one line naming it */
    static const ash_opt_id_t ranks[] = {ASH_OPT_RANK, ASH_OPT_OMPI_RANK, ASH_OPT_PMIX_RANK,
                                         ASH_OPT_SLURM_PROCID};
    int saved = errno;
    long v;
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0] && io_rank < 0; i++)
        if (ash_opt_int(ranks[i], &v) == ASH_OK)
            io_rank = (int)v;
    io_verbose = ash_opt_enum(ASH_OPT_LOG) >= ASH_LOG_INFO; /* error|warn|info|debug */
    const char *path = ash_opt_str(ASH_OPT_POLICY);
    if (io_rank <= 0 || !path)
        goto out;
    /* raw syscalls: our own open/fopen must not be re-entered from here */
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        goto out; /* the shim reports an unreadable policy */
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        syscall(SYS_close, fd);
        goto out; /* a FIFO or a device: never read (it could block); the shim refuses it */
    }
    char *text = malloc(IO_POLICY_MAX);
    size_t len = 0;
    ssize_t n;
    while (text && len < IO_POLICY_MAX &&
           (n = syscall(SYS_read, fd, text + len, IO_POLICY_MAX - len)) > 0)
        len += (size_t)n;
    syscall(SYS_close, fd);
    char err[512];
    if (text && ash_policy_parse(text, len, path, &io_policy, err, sizeof err) != ASH_POLICY_OK)
        io_policy = NULL; /* the shim reports the error and stops the program */
    free(text);
    if (io_policy && ash_policy_output_count(io_policy) == 0) {
        ash_policy_free(io_policy);
        io_policy = NULL;
    }
out:
    errno = saved;
}

/* the policy is read once, here, when the library is loaded (environment already set) */
__attribute__((constructor)) static void io_load(void)
{
    pthread_once(&io_once, io_init);
}

/* PATH, or PATH with a suffix ".SUFFIX" / "~..." of its last component cut off, matches */
int io_matches(const char *path)
{
    pthread_once(&io_once, io_init);
    if (!io_policy || !path || io_rank <= 0)
        return 0;
    int saved = errno;
    int r = ash_policy_output_main_only(io_policy, path);
    size_t len = strlen(path);
    const char *slash = strrchr(path, '/');
    size_t first = slash ? (size_t)(slash - path) + 2 : 1; /* ".name" is no suffix */
    char cut[4096];
    for (size_t i = len; !r && i-- > first;) {
        if ((path[i] != '.' && path[i] != '~') || i >= sizeof cut)
            continue;
        memcpy(cut, path, i);
        cut[i] = '\0';
        r = ash_policy_output_main_only(io_policy, cut);
    }
    errno = saved;
    return r;
}

/* Should a write-open of PATH go to /dev/null? */
static int io_redirect(const char *path)
{
    int r = io_matches(path);
    if (r && io_verbose)
        io_log("INFO io: main_process_only: writes to /dev/null instead of ", path);
    return r;
}

void io_note(const char *what, const char *path)
{
    if (io_verbose)
        io_log(what, path);
}

static int io_flags_write(int flags)
{
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
}

static int io_mode_write(const char *mode)
{
    return mode && strpbrk(mode, "wa+") != NULL;
}

#define IO_REAL(type, name, ver, args)                                                       \
    static type(*real_##name) args;                                                          \
    if (!real_##name)                                                                        \
        *(void **)&real_##name = dlvsym(RTLD_NEXT, #name, ver);                              \
    if (!real_##name) {                                                                      \
        errno = ENOSYS;                                                                      \
        return (type)0;                                                                      \
    }

static mode_t io_mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* the path and flags actually used */
static const char *io_open_path(const char *path, int *flags)
{
    if (io_flags_write(*flags) && io_redirect(path)) {
        *flags &= ~O_EXCL;
        return "/dev/null";
    }
    return path;
}

IO_API int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = io_mode_arg(flags, ap);
    va_end(ap);
    path = io_open_path(path, &flags);
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

IO_API int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = io_mode_arg(flags, ap);
    va_end(ap);
    path = io_open_path(path, &flags);
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_LARGEFILE, mode);
}

IO_API int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = io_mode_arg(flags, ap);
    va_end(ap);
    path = io_open_path(path, &flags);
    return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

IO_API int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = io_mode_arg(flags, ap);
    va_end(ap);
    path = io_open_path(path, &flags);
    return (int)syscall(SYS_openat, dirfd, path, flags | O_LARGEFILE, mode);
}

/* _FORTIFY_SOURCE's two-argument opens: glibc's own abort on O_CREAT/O_TMPFILE without a mode
 * is kept by calling glibc's function (with the path and flags actually used). */
IO_API int __open_2(const char *path, int flags)
{
    IO_REAL(int, __open_2, "GLIBC_2.7", (const char *, int));
    path = io_open_path(path, &flags);
    return real___open_2(path, flags);
}

IO_API int __open64_2(const char *path, int flags)
{
    IO_REAL(int, __open64_2, "GLIBC_2.7", (const char *, int));
    path = io_open_path(path, &flags);
    return real___open64_2(path, flags);
}

IO_API int __openat_2(int dirfd, const char *path, int flags)
{
    IO_REAL(int, __openat_2, "GLIBC_2.7", (int, const char *, int));
    path = io_open_path(path, &flags);
    return real___openat_2(dirfd, path, flags);
}

IO_API int __openat64_2(int dirfd, const char *path, int flags)
{
    IO_REAL(int, __openat64_2, "GLIBC_2.7", (int, const char *, int));
    path = io_open_path(path, &flags);
    return real___openat64_2(dirfd, path, flags);
}

IO_API int creat(const char *path, mode_t mode)
{
    int flags = O_CREAT | O_WRONLY | O_TRUNC;
    path = io_open_path(path, &flags);
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

IO_API int creat64(const char *path, mode_t mode)
{
    int flags = O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE;
    path = io_open_path(path, &flags);
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

IO_API FILE *fopen(const char *path, const char *mode)
{
    IO_REAL(FILE *, fopen, "GLIBC_2.2.5", (const char *, const char *));
    if (io_mode_write(mode) && io_redirect(path))
        path = "/dev/null";
    return real_fopen(path, mode);
}

IO_API FILE *fopen64(const char *path, const char *mode)
{
    IO_REAL(FILE *, fopen64, "GLIBC_2.2.5", (const char *, const char *));
    if (io_mode_write(mode) && io_redirect(path))
        path = "/dev/null";
    return real_fopen64(path, mode);
}

IO_API FILE *freopen(const char *path, const char *mode, FILE *stream)
{
    IO_REAL(FILE *, freopen, "GLIBC_2.2.5", (const char *, const char *, FILE *));
    if (path && io_mode_write(mode) && io_redirect(path))
        path = "/dev/null";
    return real_freopen(path, mode, stream);
}

IO_API FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
    IO_REAL(FILE *, freopen64, "GLIBC_2.2.5", (const char *, const char *, FILE *));
    if (path && io_mode_write(mode) && io_redirect(path))
        path = "/dev/null";
    return real_freopen64(path, mode, stream);
}
