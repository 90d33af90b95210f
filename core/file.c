/* file.c — ash_file_create (see ash_file.h): exclusive creation, never through a symlink.
 *
 * Invariant: no existing file is opened, truncated or followed. errno is preserved for the
 * application (the result carries the error). Threading: any thread. Callers: future trace and
 * report writers of the shim.
 */
#include "ash_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int ash_file_create(const char *path, mode_t mode)
{
    int saved = errno, fd, err;
    if (!path || !*path)
        return -EINVAL;
    do
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    while (fd < 0 && errno == EINTR);
    err = errno;
    errno = saved;
    return fd >= 0 ? fd : -err;
}
