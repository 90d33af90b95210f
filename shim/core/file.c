/* file.c — ash_file_create (see ash_file.h): exclusive creation, never through a symlink.
 *
 * Invariant: no existing file is opened, truncated or followed. errno is preserved for the
 * application (the result carries the error). Threading: any thread. Callers: the writers of the
 * shim's output files (trace, exit report), which share the path template and JSON escaping too.
 * Must not: open, truncate or follow an existing file (symlinks included); change the errno the
 * application sees.
 */
#include "ash_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

char *ash_json_escape(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return out;
    for (; s && *s && n + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
    return out;
}

int ash_path_for_rank(const char *tmpl, int rank, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = tmpl; *p; p++) {
        if (!strncmp(p, "{rank}", 6)) {
            int w = snprintf(out + n, cap - n, "%d", rank);
            if (w < 0 || (size_t)w >= cap - n)
                return -1;
            n += (size_t)w;
            p += 5;
        } else {
            if (n + 1 >= cap)
                return -1;
            out[n++] = *p;
        }
    }
    out[n] = '\0';
    return 0;
}

/* Through ash_file_create (shim/core/file.c): O_CREAT|O_EXCL|O_NOFOLLOW, so a symlink (or anything
 * else) already at the path makes the open fail instead of writing elsewhere or truncating. */
int ash_open_output(const char *path)
{
    int fd = ash_file_create(path, 0644);
    if (fd < 0) {
        errno = -fd;
        return -1;
    }
    return fd;
}
