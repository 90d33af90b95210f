/* io_move.c — libaccelshim-io.so, part two: "one writer per output" for outputs that are saved
 * to a temporary file and then moved over their final name. Interposes rename, renameat,
 * renameat2, link, linkat, unlink, unlinkat and remove. On a rank other than 0, when either name
 * matches outputs.main_process_only (io_matches), the move goes nowhere and succeeds: nothing is
 * renamed or linked; a rename's source that does not match (this rank's own temporary, written
 * for real) is removed, as the rename would have removed it. Removing a matched name goes
 * nowhere too (rank 0's output stays). Rank 0, and names that match nothing, get the real call. Names are matched as given (a dirfd's folder is not prepended), as the opens are.
 * Threading: any thread; no state of its own. Callers: the program, through the dynamic linker.
 * Must not: keep state of its own; move, link or remove anything for rank 0 or for names that match
 * nothing (they get the real call); be part of libaccelshim.so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io_int.h"

#define IO_API __attribute__((visibility("default")))

/* the next definition of NAME (libc's), or ENOSYS */
#define IO_NEXT(type, name, args)                                                            \
    static type(*next_##name) args;                                                          \
    if (!next_##name)                                                                        \
        *(void **)&next_##name = dlsym(RTLD_NEXT, #name);                                    \
    if (!next_##name) {                                                                      \
        errno = ENOSYS;                                                                      \
        return -1;                                                                           \
    }

/* rank > 0 and a name matches: the move goes nowhere. A source that matches nothing is this
 * rank's own file: removed, as the move would have (KEEP_SOURCE: link, exchange). */
static int io_move_nowhere(int dirfd, const char *from, const char *to, int keep_source)
{
    io_note("INFO io: main_process_only: move goes nowhere: ", to);
    if (keep_source || io_matches(from))
        return 0;
    return (int)syscall(SYS_unlinkat, dirfd, from, 0);
}

static int io_move_matched(const char *from, const char *to)
{
    return io_matches(to) || io_matches(from);
}

IO_API int rename(const char *from, const char *to)
{
    IO_NEXT(int, rename, (const char *, const char *));
    if (io_move_matched(from, to))
        return io_move_nowhere(AT_FDCWD, from, to, 0);
    return next_rename(from, to);
}

IO_API int renameat(int fromfd, const char *from, int tofd, const char *to)
{
    IO_NEXT(int, renameat, (int, const char *, int, const char *));
    if (io_move_matched(from, to))
        return io_move_nowhere(fromfd, from, to, 0);
    return next_renameat(fromfd, from, tofd, to);
}

IO_API int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned flags)
{
    IO_NEXT(int, renameat2, (int, const char *, int, const char *, unsigned));
    if (io_move_matched(from, to))
        return io_move_nowhere(fromfd, from, to, (flags & RENAME_EXCHANGE) != 0);
    return next_renameat2(fromfd, from, tofd, to, flags);
}

IO_API int link(const char *from, const char *to)
{
    IO_NEXT(int, link, (const char *, const char *));
    if (io_move_matched(from, to))
        return io_move_nowhere(AT_FDCWD, from, to, 1);
    return next_link(from, to);
}

IO_API int linkat(int fromfd, const char *from, int tofd, const char *to, int flags)
{
    IO_NEXT(int, linkat, (int, const char *, int, const char *, int));
    if (io_move_matched(from, to))
        return io_move_nowhere(fromfd, from, to, 1);
    return next_linkat(fromfd, from, tofd, to, flags);
}

/* removing a matched name on rank > 0 goes nowhere: rank 0's output (or temporary) stays */
IO_API int unlink(const char *path)
{
    IO_NEXT(int, unlink, (const char *));
    if (io_matches(path)) {
        io_note("INFO io: main_process_only: remove goes nowhere: ", path);
        return 0;
    }
    return next_unlink(path);
}

IO_API int unlinkat(int dirfd, const char *path, int flags)
{
    IO_NEXT(int, unlinkat, (int, const char *, int));
    if (io_matches(path)) {
        io_note("INFO io: main_process_only: remove goes nowhere: ", path);
        return 0;
    }
    return next_unlinkat(dirfd, path, flags);
}

IO_API int remove(const char *path)
{
    IO_NEXT(int, remove, (const char *));
    if (io_matches(path)) {
        io_note("INFO io: main_process_only: remove goes nowhere: ", path);
        return 0;
    }
    return next_remove(path);
}
