/* world_mpi.c — one MPI world per rank: a second CUDA program in the same Open MPI rank (a rank
 * command that is a script running a preprocessing step and then the trainer) cannot join the
 * job, because Open MPI lets each rank initialise MPI once (the second MPI_Init_thread aborts).
 * So the first program of a rank that opens the collectives leaves a marker (one per rank) in
 * Open MPI's session folder of the job (OMPI_MCA_orte_jobfam_session_dir: mode 0700, kept while
 * the job runs, removed by mpirun at its end; the per-process OMPI_FILE_LOCATION is removed when
 * any rank ends, so it cannot be used),
 * and a later program of that rank finds it at init and runs as a plain single-process program
 * (world size 1, no collectives) after one line saying so. The marker holds the first program's
 * PID and the job's mpirun URI (OMPI_MCA_orte_hnp_uri, with its port): a marker left in a stale
 * session folder by an earlier job (same mpirun PID) does not count and is replaced. Outside
 * Open MPI nothing changes.
 * Invariant: the marker is created with O_EXCL|O_NOFOLLOW (ash_file_create), never followed.
 * Threading: ash_world_mpi_taken runs inside world.c's pthread_once; ash_world_mpi_mark under
 * the sync engine's lock. Callers: world.c (init), sync.c (before the collectives open).
 * Must not: call or initialise MPI (it reads Open MPI's environment and session folder only);
 * follow a symlink (markers are read O_NOFOLLOW and created O_EXCL|O_NOFOLLOW); change anything
 * outside Open MPI.
 */
#include "ash_world.h"

#include "ash_file.h"
#include "ash_log.h"
#include "ash_options.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORLD_MPI_MARKER "accelshim-mpi-joined"

/* one marker per rank: the folder is the job's on this node, shared by its ranks */
static int world_mpi_path(int rank, char *path, size_t cap)
{
    const char *dir = ash_opt_str(ASH_OPT_OMPI_JOB_DIR);
    if (!dir || dir[0] != '/')
        return 0;
    int n = snprintf(path, cap, "%s/" WORLD_MPI_MARKER ".%d", dir, rank);
    return n > 0 && (size_t)n < cap;
}

/* the marker's text for this job: "PID URI\n"; 0 when there is no job URI */
static int world_mpi_text(char *text, size_t cap)
{
    const char *uri = ash_opt_str(ASH_OPT_OMPI_HNP_URI);
    if (!uri || !*uri)
        return 0;
    int n = snprintf(text, cap, "%ld %s\n", (long)getpid(), uri);
    return n > 0 && (size_t)n < cap ? n : 0;
}

/* 1: the marker at PATH is this job's (its PID in *pid); 0: none, or an earlier job's */
static int world_mpi_read(const char *path, long *pid)
{
    char text[1024];
    const char *uri = ash_opt_str(ASH_OPT_OMPI_HNP_URI);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 || !uri)
        return fd >= 0 ? (close(fd), 0) : 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    char *end;
    *pid = strtol(text, &end, 10);
    size_t ulen = strlen(uri);
    return *end == ' ' && !strncmp(end + 1, uri, ulen) && end[1 + ulen] == '\n';
}

int ash_world_mpi_taken(int rank, long *pid)
{
    char path[4096];
    *pid = 0;
    return world_mpi_path(rank, path, sizeof path) && world_mpi_read(path, pid);
}

void ash_world_mpi_mark(void)
{
    char path[4096], text[1200];
    long pid;
    int len = world_mpi_text(text, sizeof text);
    if (!len || !world_mpi_path(ash_world()->rank, path, sizeof path))
        return;
    if (!world_mpi_read(path, &pid))
        (void)unlink(path); /* an earlier job's (stale session folder), or none */
    int fd = ash_file_create(path, 0600);
    if (fd < 0) {
        if (fd != -EEXIST)
            ash_debug("world", "%s: %s (a later CUDA program of this rank will not be told it "
                      "cannot join)", path, strerror(-fd));
        return;
    }
    (void)!write(fd, text, (size_t)len);
    close(fd);
}
