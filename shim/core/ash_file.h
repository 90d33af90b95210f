/* ash_file.h — private to the shim: creating the files the shim writes (traces, reports).
 *
 * A preloaded library runs inside programs that may be privileged or run in shared directories,
 * so a file the shim writes is never opened through a symlink and never truncates an existing
 * file: ash_file_create opens PATH with O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC (O_EXCL:
 * fails with EEXIST if anything, a symlink included, dangling or not, is already there).
 * Threading: any thread. Test: tests/reliability/test_file_create.c.
 */
#ifndef ASH_FILE_H
#define ASH_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* A new file at PATH (mode & ~umask); returns the descriptor, or -errno (EEXIST when PATH
 * exists, whatever it is). Callers write with write(2) and close. */
int ash_file_create(const char *path, mode_t mode);

/* Replace every "{rank}" in tmpl; 0, or -1 when out is too small. */
int ash_path_for_rank(const char *tmpl, int rank, char *out, size_t cap);
/* Create a NEW output file (ash_file_create, mode 0644); fd, or -1 with errno set. */
int ash_open_output(const char *path);
/* Escape s as the inside of a JSON string into out (always NUL-terminated); returns out. */
char *ash_json_escape(const char *s, char *out, size_t cap);

#endif /* ASH_FILE_H */
