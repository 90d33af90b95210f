/* ash_fatal.h — private to the shim: the one way to stop the program, and its exit statuses.
 *
 * ASH_EXIT_LIST is the one list of the statuses the shim itself causes (the README's table is
 * written from it); each keeps its value for good. A fatal error prints ONE line,
 * "accelshim: <message>", with one write(2), then ends the process with its status.
 * When _exit is required (ash_fatal_now) rather than exit (ash_fatal):
 *   ash_fatal     runs the lifecycle's exit sequence (shim/lifecycle.c): for errors found at init or
 *                 on the thread that owns the sync point, holding no lock an exit step takes;
 *                 the sequence sees ash_fatal_code() != 0 and skips every step that talks to
 *                 peers or waits on them (closing the communicator, gathering the job's figures).
 *   ash_fatal_now ends with _exit, no exit sequence, no atexit handler of the program: required
 *                 off the sync thread (the watchdog: the sync thread may be blocked inside MPI or
 *                 NCCL holding their locks), from a signal handler, and where the caller holds a
 *                 lock an exit step takes or what the exit steps would write must end here (the
 *                 NaN stop: a record's last line is its "stop" line).
 * Threading: any thread; a second fatal error while one is under way waits for the first's end.
 */
#ifndef ASH_FATAL_H
#define ASH_FATAL_H

/* X(enum name, status, short name, what it means) */
#define ASH_EXIT_LIST(X)                                                                            \
    X(ASH_EXIT_CONFIG, 2, "config",                                                                 \
      "bad configuration: an option's value, the policy file, a rule against its kernel, or a "     \
      "sync point the shim cannot honour (collectives unavailable, arguments unreadable)")          \
    X(ASH_EXIT_MISMATCH, 3, "mismatch", "check_collectives: the ranks disagree on a collective")    \
    X(ASH_EXIT_TIMEOUT, 4, "timeout",                                                               \
      "the watchdog: a collective, or the ranks' meeting at exit, took longer than timeout_s; or "  \
      "a collective's transport broke (a peer rank ended)")                                         \
    X(ASH_EXIT_NAN, 5, "nan", "nan_check: a synced buffer holds NaN or Inf before its collective")    \
    X(ASH_EXIT_CAPTURE, 6, "capture",                                                               \
      "a sync point inside CUDA stream capture or a hand-built graph (its collective would be "     \
      "skipped at graph replay)")                                                                   \
    X(ASH_EXIT_UNSYNCED, 7, "unsynced",                                                             \
      "more than one rank, and no gradient rule fired (or no policy) while sync is required")      \
    X(ASH_EXIT_PARAMS_DIFFER, 8, "params-differ",                                                   \
      "the ranks' parameter digests differ at exit")

#define ASH__EXIT_ENUM(e, v, s, doc) e = v,
typedef enum { ASH_EXIT_LIST(ASH__EXIT_ENUM) } ash_exit_t;
#undef ASH__EXIT_ENUM

/* "config", "mismatch", ...; "?" for a status not in the list. */
const char *ash_exit_name(int code);

/* Print "accelshim: <fmt...>" and exit(code) through the exit sequence. */
_Noreturn void ash_fatal(ash_exit_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print "accelshim: <fmt...>" and _exit(code) (see the rule above); stdio is flushed where no
 * other thread holds it. _reported: the same without a line (the caller reported the error). */
_Noreturn void ash_fatal_now(ash_exit_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void ash_fatal_now_reported(ash_exit_t code);
/* The status of the fatal error under way, 0 when none (exit steps ask before talking to peers). */
int ash_fatal_code(void);

#endif /* ASH_FATAL_H */
