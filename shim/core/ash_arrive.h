/* ash_arrive.h — private to the shim: which ranks did not arrive at a stuck collective.
 *
 * Owns a progress board: with ACCELSHIM_PROGRESS_DIR set (accelerate-run sets it to its run
 * directory), each rank keeps DIR/progress-R current with the sequence number and description of
 * the last collective it began (one pwrite per collective). When the watchdog fires, the rank
 * reads its peers' records and names those behind it: the ranks that did not arrive, each with
 * the sync point it was last seen at (Horovod's stall check, through files instead of its
 * coordinator). Only peers that share the directory (same host, or a shared file system) are seen.
 * Threading: mark on the launching thread (the engine serialises collectives); report from the
 * watchdog thread or the launching thread, once. Callers: sync_watch.c.
 */
#ifndef ASH_ARRIVE_H
#define ASH_ARRIVE_H

/* This rank begins collective SEQ, described by WHAT (first call opens the record). */
void ash_arrive_mark(const char *what, unsigned long long seq);
/* This rank has waited too long at SEQ: log, at error, the ranks that did not arrive. */
void ash_arrive_report(unsigned long long seq);

#endif /* ASH_ARRIVE_H */
