/* ash_world.h — private to the shim: who this process is (rank, local rank, world size) and which
 * physical device it drives.
 *
 * Sources, in this order, first valid wins: ACCELSHIM_* (the explicit override), torchrun (RANK,
 * LOCAL_RANK, WORLD_SIZE; LOCAL_WORLD_SIZE checked), Open MPI / PMIx (OMPI_COMM_WORLD_*,
 * PMIX_RANK), Slurm (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS); else rank 0 of 1, local rank =
 * rank. torchrun's RANK and WORLD_SIZE come as a pair (one alone, or a value out of range: exit 2);
 * Every source that is set must agree with the others on rank and size (ACCELSHIM_*, torchrun,
 * Open MPI, PMIx's rank; Slurm's are inherited inside an allocation and left out): a contradiction
 * (a stale ACCELSHIM_WORLD_SIZE=1 under mpirun) is refused, exit 2, naming both variables.
 * A world from torchrun of more than one rank meets through NCCL (no MPI) at MASTER_ADDR:
 * ACCELSHIM_PORT (default MASTER_PORT + 1), exported as NCCL_COMM_ID unless the user set one;
 * ACCELSHIM_RENDEZVOUS in the environment keeps its own choice. A malformed value stops the
 * program (the options table); a rank >= size does too (exit 2: the ranks would never all meet).
 * Device: ACCELSHIM_DEVICES (comma list of physical ordinals, default all visible) ->
 * list[local_rank % len]; an ordinal not visible stops the program at the first device query.
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
/* torchrun's world: 1 and *comm_id = "IPv4:PORT" where the ranks meet through NCCL (the sync
 * engine then uses ACCELSHIM_RENDEZVOUS=nccl); 0 otherwise. Valid after ash_world_init. */
int ash_world_nccl_rendezvous(const char **comm_id);

#endif /* ASH_WORLD_H */
