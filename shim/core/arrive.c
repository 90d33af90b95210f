/* arrive.c — the progress board behind "ranks that did not arrive" (see ash_arrive.h).
 *
 * Record: DIR/progress-R, ARR_REC bytes, "seq N\t<what>\n" padded with spaces, rewritten in place
 * with one pwrite (a reader sees the old or the new record; a torn one fails to parse and reads
 * as unknown). Invariant: a rank whose record is missing or unreadable is never called "arrived".
 * Threading: mark from the (serialised) launching thread; report once, from the firing thread.
 * Callers: sync_watch.c (begin -> mark, fire -> report).
 * Must not: call a rank "arrived" whose record is missing or unreadable; wait for another rank;
 * talk to other ranks except through the records in DIR; include anything above shim/core/.
 */
#include "ash_arrive.h"

#include "ash_log.h"
#include "ash_options.h"
#include "ash_world.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARR_REC 320  /* bytes of one record */
#define ARR_LIST 768 /* bytes of the reported list */

static struct {
    int fd;      /* -1: not opened yet; -2: off (no directory, or it cannot be written) */
    char dir[512];
} A = {.fd = -1};

static void arr_open(void)
{
    const char *dir = ash_opt_str(ASH_OPT_PROGRESS_DIR);
    char path[600];
    A.fd = -2;
    if (!dir || snprintf(A.dir, sizeof A.dir, "%s", dir) >= (int)sizeof A.dir)
        return;
    snprintf(path, sizeof path, "%s/progress-%d", A.dir, ash_world()->rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        ash_info("arrive", "cannot write %s: the watchdog will not name the ranks that did not "
                 "arrive", path);
        return;
    }
    A.fd = fd;
}

void ash_arrive_mark(const char *what, unsigned long long seq)
{
    if (A.fd == -1)
        arr_open();
    if (A.fd < 0)
        return;
    char rec[ARR_REC];
    int n = snprintf(rec, sizeof rec, "seq %llu\t%s", seq, what);
    if (n < 0)
        return;
    if (n > ARR_REC - 1)
        n = ARR_REC - 1;
    memset(rec + n, ' ', (size_t)(ARR_REC - 1 - n));
    rec[ARR_REC - 1] = '\n';
    (void)!pwrite(A.fd, rec, sizeof rec, 0);
}

/* Peer q's record: 1 and *seq / what when it parses, 0 when missing or torn. */
static int arr_read(int q, unsigned long long *seq, char *what, size_t len)
{
    char path[600], rec[ARR_REC + 1];
    snprintf(path, sizeof path, "%s/progress-%d", A.dir, q);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = pread(fd, rec, ARR_REC, 0);
    close(fd);
    if (got != ARR_REC || rec[ARR_REC - 1] != '\n' || strncmp(rec, "seq ", 4))
        return 0;
    rec[ARR_REC - 1] = '\0';
    char *end = NULL;
    *seq = strtoull(rec + 4, &end, 10);
    if (end == rec + 4 || *end != '\t')
        return 0;
    size_t w = strlen(end + 1);
    while (w > 0 && end[w] == ' ')
        w--;
    snprintf(what, len, "%.*s", (int)w, end + 1);
    return 1;
}

void ash_arrive_report(unsigned long long seq)
{
    if (A.fd < 0)
        return;
    const ash_world_t *w = ash_world();
    char list[ARR_LIST] = "", what[ARR_REC];
    size_t used = 0;
    int behind = 0, unknown = 0;
    for (int q = 0; q < w->size; q++) {
        unsigned long long s = 0;
        int n = 0;
        if (q == w->rank)
            continue;
        if (!arr_read(q, &s, what, sizeof what)) {
            unknown++;
            n = snprintf(list + used, sizeof list - used, "%srank %d (no progress seen: not on "
                         "this host, or no collective begun)", used ? "; " : "", q);
        } else if (s < seq) {
            behind++;
            n = snprintf(list + used, sizeof list - used, "%srank %d (last at sequence %llu: %s)",
                         used ? "; " : "", q, s, what);
        }
        if (n > 0)
            used = used + (size_t)n < sizeof list ? used + (size_t)n : sizeof list - 1;
    }
    if (behind + unknown == 0)
        ash_error("watchdog", "every other rank began sequence %llu or later: none is missing; "
                  "they issued a different collective, or the transport is stuck", seq);
    else
        ash_error("watchdog", "ranks that did not arrive at sequence %llu: %s", seq, list);
}
