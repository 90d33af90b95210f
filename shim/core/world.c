/* world.c — rank / local rank / size from the launcher's environment, and the rank's device.
 *
 * See ash_world.h for the sources, their order and the fallbacks. Reads only the options table
 * (no getenv), which has validated every variable (garbage stopped the program at init, exit 2);
 * with torchrun's variables it exports NCCL_COMM_ID (setenv, during init) for the NCCL bootstrap.
 * Threading: init inside pthread_once; the device choice under a mutex, then cached.
 * Callers: lifecycle.c (init), intercept/hooks_device.c (cuDeviceGet / cuDeviceGetCount).
 * Must not: read the environment itself (only through the options table); talk to other ranks or initialise MPI (the world
 * comes from the launcher's environment); include anything above shim/core/.
 */
#include "ash_world.h"

#include "ash_fatal.h"
#include "ash_log.h"
#include "ash_options.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>


static ash_world_t ash_world_now = {0, 0, 1, "default", "default", "default"};
static pthread_once_t ash_world_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ash_world_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int ash_world_dev = -1;
static char ash_world_comm_id[320]; /* torchrun: MASTER_ADDR's IPv4:port where the ranks meet */

/* One whole source's rank and size (each already in its range): both set -> 1; neither -> 0; one
 * alone, or a rank not below the size -> refused (exit 2). */
static int ash_world_pair(ash_opt_id_t rank_id, ash_opt_id_t size_id, const char *who, long *rank,
                          long *size)
{
    int r = ash_opt_int(rank_id, rank) == ASH_OK, z = ash_opt_int(size_id, size) == ASH_OK;
    if (!r && !z)
        return 0;
    if (!r || !z)
        ash_fatal(ASH_EXIT_CONFIG, "world: %s=%s is set but %s is not (%s sets both)",
                  ash_opt_name(r ? rank_id : size_id), ash_opt_str(r ? rank_id : size_id),
                  ash_opt_name(r ? size_id : rank_id), who);
    if (*rank >= *size)
        ash_fatal(ASH_EXIT_CONFIG, "world: %s=%ld: expected a rank in 0..%ld (%s=%ld)",
                  ash_opt_name(rank_id), *rank, *size - 1, ash_opt_name(size_id), *size);
    return 1;
}

/* torchrun's world of more than one rank: the ranks meet through NCCL's bootstrap at
 * MASTER_ADDR (as IPv4) : ACCELSHIM_PORT, default MASTER_PORT + 1 (torchrun's store holds
 * MASTER_PORT itself). An NCCL_COMM_ID the user set wins. */
static void ash_world_torchrun_meet(void)
{
    const char *id = ash_opt_str(ASH_OPT_NCCL_COMM_ID);
    if (id && *id) {
        snprintf(ash_world_comm_id, sizeof ash_world_comm_id, "%s", id);
        return;
    }
    const char *addr = ash_opt_str(ASH_OPT_TR_MASTER_ADDR);
    if (!addr)
        ash_fatal(ASH_EXIT_CONFIG, "world: RANK and WORLD_SIZE (torchrun) are set but MASTER_ADDR "
                  "is not: the ranks have no place to meet");
    long port = 0;
    if (ash_opt_int(ASH_OPT_PORT, &port) != ASH_OK) {
        if (ash_opt_int(ASH_OPT_TR_MASTER_PORT, &port) != ASH_OK)
            ash_fatal(ASH_EXIT_CONFIG, "world: RANK and WORLD_SIZE (torchrun) are set but neither "
                      "MASTER_PORT nor ACCELSHIM_PORT is: the ranks have no port to meet at");
        if (port >= 65535)
            ash_fatal(ASH_EXIT_CONFIG, "world: MASTER_PORT=%ld: expected a TCP port in 1..65534 (the "
                      "shim's ranks meet at MASTER_PORT + 1; ACCELSHIM_PORT to choose)", port);
        port++;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char ip[INET_ADDRSTRLEN];
    if (getaddrinfo(addr, NULL, &hints, &res) != 0 || !res ||
        !inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr, ip, sizeof ip))
        ash_fatal(ASH_EXIT_CONFIG, "world: MASTER_ADDR=\"%.200s\": not an IPv4 address or a host "
                  "name with one", addr);
    freeaddrinfo(res);
    snprintf(ash_world_comm_id, sizeof ash_world_comm_id, "%s:%ld", ip, port);
    if (setenv("NCCL_COMM_ID", ash_world_comm_id, 1) != 0) /* NCCL's bootstrap reads it */
        ash_fatal(ASH_EXIT_CONFIG, "world: cannot export NCCL_COMM_ID=%s", ash_world_comm_id);
}

int ash_world_nccl_rendezvous(const char **comm_id)
{
    if (!ash_world_comm_id[0])
        return 0;
    *comm_id = ash_world_comm_id;
    return 1;
}

/* The first of ids[0..n) that is set (every one was validated by the options table, so a set
 * variable holds a value in its range). Returns the option index or -1. */
static int ash_world_first(const ash_opt_id_t *ids, int n, long *out)
{
    for (int i = 0; i < n; i++)
        if (ash_opt_int(ids[i], out) == ASH_OK)
            return i;
    return -1;
}

/* Every description of the world that is set must agree: the ACCELSHIM_* override, torchrun's,
 * Open MPI's and PMIx's rank (Slurm's are left out: every launcher inside an allocation inherits
 * them). A stale export (ACCELSHIM_WORLD_SIZE=1 from an earlier run, mpirun -x ACCELSHIM_RANK=0)
 * would make a rank train alone or wait forever for a rank that does not exist: refused (exit 2),
 * naming both variables, the override first. */
static void ash_world_agree(void)
{
    static const struct { ash_opt_id_t id; int size; const char *who; } src[] = {
        {ASH_OPT_RANK, 0, "the accelshim override"},     {ASH_OPT_WORLD_SIZE, 1, "the accelshim override"},
        {ASH_OPT_TR_RANK, 0, "torchrun's world"},         {ASH_OPT_TR_WORLD_SIZE, 1, "torchrun's world"},
        {ASH_OPT_OMPI_RANK, 0, "Open MPI's world, which started this process"},
        {ASH_OPT_OMPI_SIZE, 1, "Open MPI's world, which started this process"},
        {ASH_OPT_PMIX_RANK, 0, "PMIx's world, which started this process"},
    };
    enum { N = sizeof src / sizeof src[0] };
    for (int a = 0; a < N; a++) {
        long va = 0, vb = 0;
        if (ash_opt_int(src[a].id, &va) != ASH_OK)
            continue;
        for (int b = a + 1; b < N; b++)
            if (src[b].size == src[a].size && ash_opt_int(src[b].id, &vb) == ASH_OK && va != vb)
                ash_fatal(ASH_EXIT_CONFIG, "world: %s=%ld contradicts %s=%ld (%s): a stale export? "
                          "unset %s, or make the two agree", ash_opt_name(src[a].id), va,
                          ash_opt_name(src[b].id), vb, src[b].who, ash_opt_name(src[a].id));
    }
}

static void ash_world_read(void)
{
    static const ash_opt_id_t rank_ids[] = {ASH_OPT_RANK, ASH_OPT_TR_RANK, ASH_OPT_OMPI_RANK,
                                            ASH_OPT_PMIX_RANK, ASH_OPT_SLURM_PROCID};
    static const ash_opt_id_t local_ids[] = {ASH_OPT_LOCAL_RANK, ASH_OPT_TR_LOCAL_RANK,
                                             ASH_OPT_OMPI_LOCAL_RANK, ASH_OPT_SLURM_LOCALID};
    static const ash_opt_id_t size_ids[] = {ASH_OPT_WORLD_SIZE, ASH_OPT_TR_WORLD_SIZE,
                                            ASH_OPT_OMPI_SIZE, ASH_OPT_SLURM_NTASKS};
    long v = 0, tr_rank = 0, tr_size = 0, mpi_rank = 0, mpi_size = 0;
    /* torchrun and Open MPI both describe the world: two that disagree are refused (ACCELSHIM_*
     * is the explicit override; Slurm's are inherited by every launcher inside an allocation) */
    int tr = ash_world_pair(ASH_OPT_TR_RANK, ASH_OPT_TR_WORLD_SIZE, "torchrun", &tr_rank, &tr_size);
    if (tr && ash_opt_int(ASH_OPT_OMPI_RANK, &mpi_rank) == ASH_OK &&
        ash_opt_int(ASH_OPT_OMPI_SIZE, &mpi_size) == ASH_OK &&
        (mpi_rank != tr_rank || mpi_size != tr_size) && !ash_opt_str(ASH_OPT_RANK))
        ash_fatal(ASH_EXIT_CONFIG, "world: conflicting sources: torchrun says rank %ld of %ld (RANK, "
                  "WORLD_SIZE), Open MPI says rank %ld of %ld (OMPI_COMM_WORLD_RANK, "
                  "OMPI_COMM_WORLD_SIZE); unset one, or choose with ACCELSHIM_RANK and "
                  "ACCELSHIM_WORLD_SIZE", tr_rank, tr_size, mpi_rank, mpi_size);
    if (tr) {
        long lw = tr_size, l = 0;
        if (ash_opt_int(ASH_OPT_TR_LOCAL_WORLD_SIZE, &lw) == ASH_OK && lw > tr_size)
            ash_fatal(ASH_EXIT_CONFIG, "world: LOCAL_WORLD_SIZE=%ld: expected 1..%ld (WORLD_SIZE)",
                      lw, tr_size);
        if (ash_opt_int(ASH_OPT_TR_LOCAL_RANK, &l) == ASH_OK && l >= lw)
            ash_fatal(ASH_EXIT_CONFIG, "world: LOCAL_RANK=%ld: expected 0..%ld (LOCAL_WORLD_SIZE or "
                      "WORLD_SIZE, minus 1)", l, lw - 1);
    }
    ash_world_agree();
    int i = ash_world_first(rank_ids, 5, &v);
    if (i >= 0) {
        ash_world_now.rank = (int)v;
        ash_world_now.rank_source = ash_opt_name(rank_ids[i]);
    }
    i = ash_world_first(local_ids, 4, &v);
    if (i >= 0) {
        ash_world_now.local_rank = (int)v;
        ash_world_now.local_source = ash_opt_name(local_ids[i]);
    } else {
        ash_world_now.local_rank = ash_world_now.rank; /* one node assumed */
        ash_world_now.local_source = "rank";
    }
    i = ash_world_first(size_ids, 4, &v);
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
    if (ash_world_now.rank >= ash_world_now.size) /* the ranks would never all meet */
        ash_fatal(ASH_EXIT_CONFIG, "world: rank %d (%s) is not below the world size %d (%s): the "
                  "ranks would wait for one another forever; set the rank and the size together",
                  ash_world_now.rank, ash_world_now.rank_source, ash_world_now.size,
                  ash_world_now.size_source);
    /* torchrun's ranks (no mpirun): they meet through NCCL unless ACCELSHIM_RENDEZVOUS says */
    if (tr && ash_world_now.size > 1 && ash_world_now.size_source == ash_opt_name(ASH_OPT_TR_WORLD_SIZE) &&
        ash_opt_source(ASH_OPT_RENDEZVOUS) != ASH_OPT_SRC_ENV)
        ash_world_torchrun_meet();
    ash_info("world", "rank %d (%s), local rank %d (%s), world size %d (%s)", ash_world_now.rank,
             ash_world_now.rank_source, ash_world_now.local_rank, ash_world_now.local_source,
             ash_world_now.size, ash_world_now.size_source);
    if (ash_world_comm_id[0])
        ash_info("world", "torchrun's ranks meet through NCCL at %s (NCCL_COMM_ID)", ash_world_comm_id);
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
