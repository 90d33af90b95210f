/* ash_crash.h — private to the shim: crash reports (a backtrace on a fatal signal).
 *
 * ash_crash_install (called at shim init, never from a constructor) installs, on an alternate
 * signal stack, handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT that write
 *   [accelshim rank R] crash: SIGSEGV (address 0x0) in mlp_deliberate_crash+0x1f
 *   [accelshim rank R]   #0 0x000055d0c3e01a2f mlp_deliberate_crash+0x1f
 * with write(2) and libunwind (symbol names from the ELF symbol tables), then restore the
 * default action and re-raise, so the exit status is the signal's. A handler the program had
 * installed before runs first; when it returns the program goes on and nothing is reported (a
 * report only when it restored the default action and raised the signal again).
 * ACCELSHIM_CRASH_HANDLER=0 disables. ash_crash_mark (before the collectives open) notes the
 * handlers; ash_crash_reinstall (after) goes on top of the ones the library (Open MPI) put where
 * ours were, chaining to them, puts back a program's handler the library replaced, and never
 * displaces one the program installed itself.
 * ash_crash_thread gives the calling thread an alternate stack of its own (once per thread; a
 * no-op when disabled or when the program set one): called where a thread creates or retains a
 * context and at sync points, never on the launch fast path.
 * Threading: install/reinstall at init or under the sync engine's lock; handlers on any thread.
 */
#ifndef ASH_CRASH_H
#define ASH_CRASH_H

void ash_crash_install(void);
void ash_crash_mark(void);
void ash_crash_reinstall(void);
void ash_crash_thread(void);

#endif /* ASH_CRASH_H */
