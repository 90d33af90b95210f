/* world.c — rank / local rank / size from the launcher's environment, and the rank's device.
 *
 * See ash_world.h for the sources, their order and the fallbacks. Reads only the options table
 * (no getenv); with torchrun's variables it exports NCCL_COMM_ID (setenv, during init) for the
 * NCCL bootstrap. Threading: init inside pthread_once; the device choice under a mutex, cached.
 * Callers: shim.c (init), intercept/hooks_device.c (cuDeviceGet / cuDeviceGetCount).
 */
#include "ash_world.h"

#include "ash_log.h"
#include "ash_options.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ASH_WORLD_MAX_RANK (1L << 24)

static ash_world_t ash_world_now = {0, 0, 1, "default", "default", "default"};
static pthread_once_t ash_world_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ash_world_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int ash_world_dev = -1;
static char ash_world_comm_id[320]; /* torchrun: MASTER_ADDR's IPv4:port where the ranks meet */

/* A world variable that cannot be used ends the process before any CUDA call returns: exit 2. */
static _Noreturn void ash_world_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void ash_world_refuse(const char *fmt, ...)
{
    char line[768];
    int n = snprintf(line, sizeof line, "accelshim: world: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    (void)!write(2, line, (size_t)n);
    exit(2);
}

/* One whole source's rank and size: both set (parsed) -> 1; neither -> 0; one alone -> refused. */
static int ash_world_pair(ash_opt_id_t rank_id, ash_opt_id_t size_id, const char *who, long *rank,
                          long *size)
{
    const char *r = ash_opt_str(rank_id), *z = ash_opt_str(size_id);
    if (!r && !z)
        return 0;
    if (!r || !z)
        ash_world_refuse("%s=%s is set but %s is not (%s sets both)", r ? ash_opt_name(rank_id)
                         : ash_opt_name(size_id), r ? r : z, r ? ash_opt_name(size_id)
                         : ash_opt_name(rank_id), who);
    if (ash_opt_parse_long(z, 1, ASH_WORLD_MAX_RANK, size) != ASH_OK)
        ash_world_refuse("%s=\"%s\": expected a world size in 1..%ld", ash_opt_name(size_id), z,
                         ASH_WORLD_MAX_RANK);
    if (ash_opt_parse_long(r, 0, *size - 1, rank) != ASH_OK)
        ash_world_refuse("%s=\"%s\": expected a rank in 0..%ld (%s=%ld)", ash_opt_name(rank_id), r,
                         *size - 1, ash_opt_name(size_id), *size);
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
        ash_world_refuse("RANK and WORLD_SIZE (torchrun) are set but MASTER_ADDR is not: the ranks "
                         "have no place to meet");
    long port = 0;
    if (ash_opt_str(ASH_OPT_PORT)) {
        if (ash_opt_int(ASH_OPT_PORT, 1, 65535, &port) != ASH_OK)
            ash_world_refuse("ACCELSHIM_PORT=\"%s\": expected a TCP port in 1..65535",
                             ash_opt_str(ASH_OPT_PORT));
    } else {
        const char *mp = ash_opt_str(ASH_OPT_TR_MASTER_PORT);
        if (!mp)
            ash_world_refuse("RANK and WORLD_SIZE (torchrun) are set but neither MASTER_PORT nor "
                             "ACCELSHIM_PORT is: the ranks have no port to meet at");
        if (ash_opt_parse_long(mp, 1, 65534, &port) != ASH_OK)
            ash_world_refuse("MASTER_PORT=\"%s\": expected a TCP port in 1..65534 (the shim's "
                             "ranks meet at MASTER_PORT + 1; ACCELSHIM_PORT to choose)", mp);
        port++;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char ip[INET_ADDRSTRLEN];
    if (getaddrinfo(addr, NULL, &hints, &res) != 0 || !res ||
        !inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr, ip, sizeof ip))
        ash_world_refuse("MASTER_ADDR=\"%s\": not an IPv4 address or a host name with one", addr);
    freeaddrinfo(res);
    snprintf(ash_world_comm_id, sizeof ash_world_comm_id, "%s:%ld", ip, port);
    if (setenv("NCCL_COMM_ID", ash_world_comm_id, 1) != 0) /* NCCL's bootstrap reads it */
        ash_world_refuse("cannot export NCCL_COMM_ID=%s", ash_world_comm_id);
}

int ash_world_nccl_rendezvous(const char **comm_id)
{
    if (!ash_world_comm_id[0])
        return 0;
    *comm_id = ash_world_comm_id;
    return 1;
}

/* First valid value among ids[0..n): warn on each malformed one. Returns the option index or -1. */
static int ash_world_first(const ash_opt_id_t *ids, int n, long lo, long hi, long *out)
{
    for (int i = 0; i < n; i++) {
        ash_status_t st = ash_opt_int(ids[i], lo, hi, out);
        if (st == ASH_OK)
            return i;
        if (st == ASH_ERR_CONFIG)
            ash_warn("world", "%s=\"%s\" is not an integer in %ld..%ld; ignored", ash_opt_name(ids[i]),
                     ash_opt_str(ids[i]), lo, hi);
    }
    return -1;
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
    const char *ompi_r = ash_opt_str(ASH_OPT_OMPI_RANK), *ompi_z = ash_opt_str(ASH_OPT_OMPI_SIZE);
    if (tr && ompi_r && ompi_z && ash_opt_parse_long(ompi_r, 0, ASH_WORLD_MAX_RANK, &mpi_rank) == ASH_OK &&
        ash_opt_parse_long(ompi_z, 1, ASH_WORLD_MAX_RANK, &mpi_size) == ASH_OK &&
        (mpi_rank != tr_rank || mpi_size != tr_size) && !ash_opt_str(ASH_OPT_RANK))
        ash_world_refuse("conflicting sources: torchrun says rank %ld of %ld (RANK, WORLD_SIZE), "
                         "Open MPI says rank %ld of %ld (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE); "
                         "unset one, or choose with ACCELSHIM_RANK and ACCELSHIM_WORLD_SIZE",
                         tr_rank, tr_size, mpi_rank, mpi_size);
    if (tr) {
        const char *lws = ash_opt_str(ASH_OPT_TR_LOCAL_WORLD_SIZE), *lr = ash_opt_str(ASH_OPT_TR_LOCAL_RANK);
        long lw = 0, l = 0;
        if (lws && ash_opt_parse_long(lws, 1, tr_size, &lw) != ASH_OK)
            ash_world_refuse("LOCAL_WORLD_SIZE=\"%s\": expected 1..%ld (WORLD_SIZE)", lws, tr_size);
        if (lr && ash_opt_parse_long(lr, 0, lws ? lw - 1 : tr_size - 1, &l) != ASH_OK)
            ash_world_refuse("LOCAL_RANK=\"%s\": expected 0..%ld (%s)", lr,
                             lws ? lw - 1 : tr_size - 1, lws ? "LOCAL_WORLD_SIZE - 1" : "WORLD_SIZE - 1");
    }
    int i = ash_world_first(rank_ids, 5, 0, ASH_WORLD_MAX_RANK - 1, &v);
    if (i >= 0) {
        ash_world_now.rank = (int)v;
        ash_world_now.rank_source = ash_opt_name(rank_ids[i]);
    }
    i = ash_world_first(local_ids, 4, 0, ASH_WORLD_MAX_RANK - 1, &v);
    if (i >= 0) {
        ash_world_now.local_rank = (int)v;
        ash_world_now.local_source = ash_opt_name(local_ids[i]);
    } else {
        ash_world_now.local_rank = ash_world_now.rank; /* one node assumed */
        ash_world_now.local_source = "rank";
    }
    i = ash_world_first(size_ids, 4, 1, ASH_WORLD_MAX_RANK, &v);
    if (i >= 0) {
        ash_world_now.size = (int)v;
        ash_world_now.size_source = ash_opt_name(size_ids[i]);
    }
    ash_log_set_rank(ash_world_now.rank);
    if (ash_world_now.rank >= ash_world_now.size) {
        ash_warn("world", "rank %d (%s) >= world size %d (%s); using world size %d", ash_world_now.rank,
                 ash_world_now.rank_source, ash_world_now.size, ash_world_now.size_source,
                 ash_world_now.rank + 1);
        ash_world_now.size = ash_world_now.rank + 1;
        ash_world_now.size_source = "rank + 1";
    }
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

/* Parse "a,b,c" into list; returns the count, or -1 (malformed) or -2 (an ordinal >= visible). */
static int ash_world_parse_devices(const char *text, int visible, int *list, int cap)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        char item[16];
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0 || len >= sizeof item || n == cap)
            return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        long v;
        if (ash_opt_parse_long(item, 0, 1L << 20, &v) != ASH_OK)
            return -1;
        if (v >= visible)
            return -2;
        list[n++] = (int)v;
        if (comma == NULL)
            return n;
        p = comma + 1;
    }
}

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
        int list[ASH_WORLD_MAX_DEVICES];
        int n = -1;
        const char *spec = ash_opt_str(ASH_OPT_DEVICES);
        if (spec != NULL) {
            n = ash_world_parse_devices(spec, visible_count, list, ASH_WORLD_MAX_DEVICES);
            if (n == -1)
                ash_warn("world", "ACCELSHIM_DEVICES=\"%s\" is not a comma list of device ordinals "
                         "(at most %d); using all %d visible devices", spec, ASH_WORLD_MAX_DEVICES,
                         visible_count);
            else if (n == -2)
                ash_warn("world", "ACCELSHIM_DEVICES=\"%s\" names a device >= the %d visible; "
                         "using all visible devices", spec, visible_count);
        }
        int local = ash_world_now.local_rank;
        if (n > 0)
            dev = list[local % n];
        else
            dev = local % visible_count;
        ash_info("world", "local rank %d -> physical device %d (%s, %d visible)", local, dev,
                 n > 0 ? "ACCELSHIM_DEVICES" : "all visible", visible_count);
        atomic_store_explicit(&ash_world_dev, dev, memory_order_release);
    }
    pthread_mutex_unlock(&ash_world_dev_lock);
    return dev;
}
