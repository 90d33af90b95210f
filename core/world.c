/* world.c — rank / local rank / size from the launcher's environment, and the rank's device.
 *
 * See ash_world.h for the sources. Reads only the options table (no getenv), which has validated
 * every variable (garbage stopped the program at init, exit 2).
 * Threading: init inside pthread_once; the device choice under a mutex, then cached.
 * Callers: shim.c (init), intercept/hooks_device.c (cuDeviceGet / cuDeviceGetCount).
 */
#include "ash_world.h"

#include "ash_fatal.h"
#include "ash_log.h"
#include "ash_options.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>


static ash_world_t ash_world_now = {0, 0, 1, "default", "default", "default"};
static pthread_once_t ash_world_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ash_world_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int ash_world_dev = -1;

/* The first of ids[0..n) that is set (every one was validated by the options table, so a set
 * variable holds a value in its range). Returns the option index or -1. */
static int ash_world_first(const ash_opt_id_t *ids, int n, long *out)
{
    for (int i = 0; i < n; i++)
        if (ash_opt_int(ids[i], out) == ASH_OK)
            return i;
    return -1;
}

static void ash_world_read(void)
{
    static const ash_opt_id_t rank_ids[] = {ASH_OPT_RANK, ASH_OPT_OMPI_RANK, ASH_OPT_PMIX_RANK,
                                            ASH_OPT_SLURM_PROCID};
    static const ash_opt_id_t local_ids[] = {ASH_OPT_LOCAL_RANK, ASH_OPT_OMPI_LOCAL_RANK,
                                             ASH_OPT_SLURM_LOCALID};
    static const ash_opt_id_t size_ids[] = {ASH_OPT_WORLD_SIZE, ASH_OPT_OMPI_SIZE, ASH_OPT_SLURM_NTASKS};
    long v = 0;
    int i = ash_world_first(rank_ids, 4, &v);
    if (i >= 0) {
        ash_world_now.rank = (int)v;
        ash_world_now.rank_source = ash_opt_name(rank_ids[i]);
    }
    i = ash_world_first(local_ids, 3, &v);
    if (i >= 0) {
        ash_world_now.local_rank = (int)v;
        ash_world_now.local_source = ash_opt_name(local_ids[i]);
    } else {
        ash_world_now.local_rank = ash_world_now.rank; /* one node assumed */
        ash_world_now.local_source = "rank";
    }
    i = ash_world_first(size_ids, 3, &v);
    if (i >= 0) {
        ash_world_now.size = (int)v;
        ash_world_now.size_source = ash_opt_name(size_ids[i]);
    }
    ash_log_set_rank(ash_world_now.rank);
    long first = 0;
    if (ash_world_now.size > 1 && ash_world_mpi_taken(ash_world_now.rank, &first)) { /* one MPI world per rank */
        ash_warn("world", "a CUDA program of this rank (PID %ld) already joined the job's MPI "
                 "world, and Open MPI lets a rank join once: this program (PID %ld) runs as a plain "
                 "single-process program (world size 1, no collectives)", first, (long)getpid());
        ash_world_now.rank = 0;
        ash_world_now.size = 1;
        ash_world_now.rank_source = ash_world_now.size_source = "second program of the rank";
    }
    if (ash_world_now.rank >= ash_world_now.size) {
        ash_warn("world", "rank %d (%s) >= world size %d (%s); using world size %d", ash_world_now.rank,
                 ash_world_now.rank_source, ash_world_now.size, ash_world_now.size_source,
                 ash_world_now.rank + 1);
        ash_world_now.size = ash_world_now.rank + 1;
        ash_world_now.size_source = "rank + 1";
    }
    ash_info("world", "rank %d (%s), local rank %d (%s), world size %d (%s)", ash_world_now.rank,
             ash_world_now.rank_source, ash_world_now.local_rank, ash_world_now.local_source,
             ash_world_now.size, ash_world_now.size_source);
}

ash_status_t ash_world_init(void)
{
    pthread_once(&ash_world_once, ash_world_read);
    return ASH_OK;
}

const ash_world_t *ash_world(void) { return &ash_world_now; }

int ash_world_device_ordinal(int visible_count)
{
    int dev = atomic_load_explicit(&ash_world_dev, memory_order_acquire);
    if (dev >= 0)
        return dev;
    if (visible_count <= 0)
        return -1;
    ash_world_init();
    pthread_mutex_lock(&ash_world_dev_lock);
    dev = atomic_load_explicit(&ash_world_dev, memory_order_relaxed);
    if (dev < 0) {
        long list[ASH_OPT_LIST_MAX];
        int n = ash_opt_list(ASH_OPT_DEVICES, list, ASH_OPT_LIST_MAX); /* syntax checked at init */
        for (int i = 0; i < n; i++)
            if (list[i] >= visible_count) /* only known now: the first device query */
                ash_fatal(ASH_EXIT_CONFIG, "ACCELSHIM_DEVICES=%.200s: expected device ordinals "
                          "below %d (the devices visible to this process)",
                          ash_opt_str(ASH_OPT_DEVICES), visible_count);
        int local = ash_world_now.local_rank;
        if (n > 0)
            dev = (int)list[local % n];
        else
            dev = local % visible_count;
        ash_info("world", "local rank %d -> physical device %d (%s, %d visible)", local, dev,
                 n > 0 ? "ACCELSHIM_DEVICES" : "all visible", visible_count);
        atomic_store_explicit(&ash_world_dev, dev, memory_order_release);
    }
    pthread_mutex_unlock(&ash_world_dev_lock);
    return dev;
}
