/* io_int.h — private to libaccelshim-io.so: what io.c (opens, the policy read once at load)
 * shares with io_move.c (rename and link).
 *
 * Folder shim/io/ owns: `libaccelshim-io.so`: the one-writer-per-output preload (kept apart so
 * `libaccelshim.so` wraps no libc names)
 *
 * io_matches: 1 when this rank is not 0 and PATH, or PATH without a ".SUFFIX" or "~..." of its
 * last component (a temporary saved next to its output), matches outputs.main_process_only.
 * errno is preserved. io_note: one INFO line (ACCELSHIM_LOG=info|debug) naming PATH.
 * Threading: any thread; the state is read-only once loaded.
 */
#ifndef ASH_IO_INT_H
#define ASH_IO_INT_H

int io_matches(const char *path);
void io_note(const char *what, const char *path);

#endif /* ASH_IO_INT_H */
