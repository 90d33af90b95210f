/* mpi_dl.c — Open MPI opened with dlopen at first use: the one table of MPI entry points
 * (ash_coll_mpi.h) that the collectives (and the hostnccl test double) call through.
 *
 * Why: a preloaded library that NEEDs libmpi maps Open MPI into every process, even at world 1
 * or when ranks meet through NCCL, and cannot load at all on a machine without Open MPI. Only a
 * job that uses MPI (world > 1 with the mpi rendezvous: the mpi backend, NCCL's MPI bootstrap,
 * the exit summary) reaches ash_coll__mpi_load; its failure names the library and the fix.
 * RTLD_GLOBAL: Open MPI's components (mca_*.so, dlopen'ed by MPI_Init) find libmpi's and
 * libopen-pal's symbols in the global scope; with RTLD_LOCAL they may fail to load. A libmpi
 * already in the process (a program linked with it) is the one found and promoted to global.
 * Also the collectives' dlsym (libc's, never the shim's public hook), used for NCCL too.
 * Threading: a mutex makes the first load single; the outcome (and its reason) is kept.
 * Must not: link libmpi (dlopen'ed, RTLD_GLOBAL, on first use); be reached by a job that uses no
 * MPI; call the shim's public dlsym hook.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ash_coll_mpi.h"

ash_coll_mpi_api_t ash_coll__mpi_api;

/* libc's dlsym, never the public name: linked into libaccelshim.so, `dlsym` is the shim's own
 * hook (never called from inside; tests/intercept/test_exports.sh checks). */
void *ash_coll__dlsym(void *handle, const char *name)
{
    static void *(*real)(void *, const char *);
    if (!real)
        *(void **)&real = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real)
        *(void **)&real = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    return real ? real(handle, name) : NULL;
}

static pthread_mutex_t mpi_dl_mutex = PTHREAD_MUTEX_INITIALIZER;
static int mpi_dl_state;          /* 0 not tried, 1 loaded, -1 failed (reason in mpi_dl_why) */
static char mpi_dl_why[512];

static int mpi_dl_fill(void *h)
{
    void *p;

#define ASH_COLL_MPI__SYM(name)                                                                 \
    if ((p = ash_coll__dlsym(h, "MPI_" #name)) == NULL) {                                       \
        snprintf(mpi_dl_why, sizeof mpi_dl_why, "%s has no symbol MPI_" #name                   \
                 " (not Open MPI 4 or later?)", ASH_COLL_MPI_LIBRARY);                          \
        return -1;                                                                              \
    }                                                                                           \
    memcpy(&ash_coll__mpi_api.name, &p, sizeof p);
    ASH_COLL_MPI_FUNCS(ASH_COLL_MPI__SYM)
#undef ASH_COLL_MPI__SYM

#define ASH_COLL_MPI__OBJ(type, field, object)                                                  \
    if ((p = ash_coll__dlsym(h, #object)) == NULL) {                                            \
        snprintf(mpi_dl_why, sizeof mpi_dl_why, "%s has no object " #object                     \
                 " (not Open MPI?)", ASH_COLL_MPI_LIBRARY);                                     \
        return -1;                                                                              \
    }                                                                                           \
    ash_coll__mpi_api.field = (type)p;
    ASH_COLL_MPI_HANDLES(ASH_COLL_MPI__OBJ)
#undef ASH_COLL_MPI__OBJ
    return 0;
}

int ash_coll__mpi_load(char *why, size_t why_len)
{
    pthread_mutex_lock(&mpi_dl_mutex);
    if (mpi_dl_state == 0) {
        void *h = dlopen(ASH_COLL_MPI_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
        if (h == NULL) {
            const char *e = dlerror();
            snprintf(mpi_dl_why, sizeof mpi_dl_why,
                     "this job needs Open MPI, but %s could not be loaded (%s): install Open MPI "
                     "(Debian: apt-get install libopenmpi3), or let the ranks meet without MPI "
                     "(accelerate-run --launcher local, ACCELSHIM_RENDEZVOUS=nccl)",
                     ASH_COLL_MPI_LIBRARY, e ? e : "not found");
            mpi_dl_state = -1;
        } else if (mpi_dl_fill(h) != 0) {
            memset(&ash_coll__mpi_api, 0, sizeof ash_coll__mpi_api);
            mpi_dl_state = -1;   /* the handle stays open: its constructors have run */
        } else {
            mpi_dl_state = 1;
        }
    }
    int rc = mpi_dl_state == 1 ? 0 : -1;
    if (rc != 0 && why != NULL && why_len > 0)
        snprintf(why, why_len, "%s", mpi_dl_why);
    pthread_mutex_unlock(&mpi_dl_mutex);
    return rc;
}
