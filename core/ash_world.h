/* ash_world.h — private to the shim: who this process is (rank, local rank, world size) and which
 * physical device it drives.
 *
 * Sources, first valid wins: rank = ACCELSHIM_RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID,
 * else 0; local rank = ACCELSHIM_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, else the
 * rank (one node assumed); size = ACCELSHIM_WORLD_SIZE, OMPI_COMM_WORLD_SIZE, SLURM_NTASKS, else 1.
 * A malformed value is warned about (naming the variable) and the next source is used; a rank
 * >= size raises size to rank + 1 with a warning. Device: ACCELSHIM_DEVICES (comma list of
 * physical ordinals, default all visible) -> list[local_rank % len]; a malformed list or an
 * ordinal not visible is warned about and the default (all visible) is used.
 * Threading: ash_world_init runs once (lazy init); the getters are reads of immutable data;
 * ash_world_device_ordinal computes once under a mutex. Knows no CUDA symbol: the caller passes
 * the real visible device count.
 */
#ifndef ASH_WORLD_H
#define ASH_WORLD_H

#include "ash_status.h"

typedef struct {
    int rank;
    int local_rank;
    int size;
    const char *rank_source;  /* name of the variable that gave the rank, or "default" */
    const char *local_source; /* same for the local rank */
    const char *size_source;  /* same for the size */
} ash_world_t;

#define ASH_WORLD_MAX_DEVICES 64

ash_status_t ash_world_init(void);          /* idempotent; reads options; no CUDA */
const ash_world_t *ash_world(void);         /* valid after ash_world_init */

/* The physical ordinal this rank uses, given visible_count devices (> 0); computed on the first
 * call and cached (later calls return the cached value whatever they pass). -1 if visible_count
 * <= 0 on the first call (nothing cached then). */
int ash_world_device_ordinal(int visible_count);

/* One MPI world per Open MPI rank (world_mpi.c): mark, before the collectives open, that a
 * program of this rank joined; taken: an earlier program of this rank did (its PID in *pid, 0 if
 * unknown), so this one runs as a single process (world.c). */
void ash_world_mpi_mark(void);
int ash_world_mpi_taken(int rank, long *pid);

#endif /* ASH_WORLD_H */
