/* digest.c — at exit the ranks compare a digest of the parameter buffers the policy names.
 *
 * What it proves: every buffer a `parameters` rule broadcast holds the same bytes on every rank
 * when the program frees it (or at exit). What it cannot: buffers no parameters rule named
 * (without one there is no check), or values the program copied elsewhere. Ranks without an MPI
 * world (ACCELSHIM_RENDEZVOUS=nccl) exchange the digests over the exit meeting's TCP connections
 * (collectives/coll_meet.c), without CUDA; the buffers are read before, as with MPI. Where those
 * ranks could not meet over TCP (said at open) the exchange fails with a warning and nothing is
 * compared. Invariant: the exchange happens on every rank or on none (it depends only on the
 * policy and the world, which all ranks share). Threading: a mutex guards the notes; compare
 * runs once at exit, after the ranks met (sync_fini). Callers: see ash_digest.h.
 * Must not: exchange digests on some ranks only, or before the ranks met at exit (sync_fini);
 * compare buffers no parameters rule named; use CUDA in the exchange (the buffers are read before).
 */
#include "ash_digest.h"

#include "ash_log.h"
#include "ash_policy.h"
#include "ash_sync.h"
#include "ash_unfired.h"
#include "ash_world.h"

#define XXH_INLINE_ALL /* header-only: the preloaded library gains no runtime dependency */
#include <xxhash.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define DIG_MAX 256             /* buffers tracked; more are counted as not compared */
#define DIG_CHUNK (4u << 20)    /* bytes copied to the host at a time */

typedef struct {
    CUdeviceptr ptr;
    size_t bytes;
    CUstream stream;
    int state;                  /* 0 noted, 1 digested, 2 unreadable */
    unsigned long long hash;
} dig_buf_t;

static struct {
    pthread_mutex_t lock;
    const ash_coll_driver_t *drv;
    dig_buf_t buf[DIG_MAX];
    atomic_int n;
    int overflow;
    int failed;
} D = {.lock = PTHREAD_MUTEX_INITIALIZER};

void ash_digest_note(const ash_coll_driver_t *drv, CUdeviceptr ptr, size_t bytes, CUstream s)
{
    pthread_mutex_lock(&D.lock);
    int n = atomic_load(&D.n);
    D.drv = drv;
    for (int i = 0; i < n; i++)
        if (D.buf[i].ptr == ptr && D.buf[i].bytes == bytes && D.buf[i].state == 0)
            goto out; /* the same live buffer through another rule */
    if (n == DIG_MAX)
        D.overflow = 1;
    else {
        D.buf[n] = (dig_buf_t){ptr, bytes, s, 0, 0};
        atomic_store(&D.n, n + 1);
    }
out:
    pthread_mutex_unlock(&D.lock);
}

/* Digest one buffer through the host (its stream first, then the legacy stream). */
/* The status the differing digests lead to: 8, unless nothing was synchronised at all (7 then). */
static const char *digest_verdict(void)
{
    return ash_unfired_will_fail() ? "the job ends with exit 7: no gradient rule fired"
                                   : "exit 8";
}

static void dig_take(dig_buf_t *b)
{
    const ash_coll_driver_t *d = D.drv;
    unsigned char *host = malloc(b->bytes < DIG_CHUNK ? b->bytes : DIG_CHUNK);
    XXH3_state_t st;
    b->state = 2;
    if (!host || !d)
        goto out;
    XXH3_64bits_reset(&st);
    for (size_t off = 0; off < b->bytes; off += DIG_CHUNK) {
        size_t len = b->bytes - off < DIG_CHUNK ? b->bytes - off : DIG_CHUNK;
        CUstream s = b->stream;
        if (d->cuMemcpyDtoHAsync_v2(host, b->ptr + off, len, s) != CUDA_SUCCESS ||
            d->cuStreamSynchronize(s) != CUDA_SUCCESS) {
            s = NULL;
            if (d->cuMemcpyDtoHAsync_v2(host, b->ptr + off, len, s) != CUDA_SUCCESS ||
                d->cuStreamSynchronize(s) != CUDA_SUCCESS)
                goto out;
        }
        XXH3_64bits_update(&st, host, len);
    }
    b->hash = XXH3_64bits_digest(&st);
    b->state = 1;
out:
    free(host);
}

void ash_digest_before_free(CUdeviceptr ptr)
{
    int n = atomic_load_explicit(&D.n, memory_order_relaxed);
    if (n == 0 || ptr == 0)
        return;
    pthread_mutex_lock(&D.lock);
    for (int i = 0; i < n; i++)
        if (D.buf[i].ptr == ptr && D.buf[i].state == 0)
            dig_take(&D.buf[i]);
    pthread_mutex_unlock(&D.lock);
}

int ash_digest_failed(void) { return D.failed; }

enum { W_HASH, W_BYTES, W_BUFS, W_UNREAD, W_RANK, W_OVER };

void ash_digest_compare(ash_coll_t *c)
{
    const ash_world_t *w = ash_world();
    const ash_policy_t *p = ash_sync_policy();
    if (!c || w->size <= 1 || ash_policy_rule_count(p, ASH_POLICY_RULE_PARAMETER) == 0)
        return; /* no parameters rule: no check (the same on every rank) */
    unsigned long long fp[ASH_COLL_FP_WORDS] = {0};
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    pthread_mutex_lock(&D.lock);
    int n = atomic_load(&D.n);
    for (int i = 0; i < n; i++) {
        dig_buf_t *b = &D.buf[i];
        if (b->state == 0)
            dig_take(b); /* still live at exit */
        if (b->state != 1) {
            fp[W_UNREAD]++;
            continue;
        }
        unsigned long long pair[2] = {b->bytes, b->hash};
        XXH3_64bits_update(&st, pair, sizeof pair);
        fp[W_BYTES] += b->bytes;
        fp[W_BUFS]++;
    }
    pthread_mutex_unlock(&D.lock);
    fp[W_HASH] = XXH3_64bits_digest(&st);
    fp[W_RANK] = (unsigned long long)w->rank;
    fp[W_OVER] = (unsigned long long)D.overflow;
    unsigned long long *all = calloc((size_t)w->size, sizeof fp);
    if (!all)
        return;
    ash_coll_status_t cst = ash_coll_exit_gather(c, "the parameter digest", fp, all);
    if (cst != ASH_COLL_OK) {
        ash_warn("digest", "exchanging the parameter digests failed (%s): parameters not compared",
                 ash_coll_status_text(cst));
        free(all);
        return;
    }
    int first = -1, differ = 0;
    for (int q = 1; q < w->size; q++) {
        const unsigned long long *f = all + (size_t)q * ASH_COLL_FP_WORDS;
        if (f[W_HASH] != all[W_HASH] || f[W_BYTES] != all[W_BYTES] || f[W_BUFS] != all[W_BUFS]) {
            differ++;
            if (first < 0)
                first = q;
        }
    }
    if (differ) {
        const unsigned long long *f = all + (size_t)first * ASH_COLL_FP_WORDS;
        D.failed = 1;
        if (w->rank == 0)
            ash_error("digest", "ranks ended with different parameters: rank %d differs from rank 0 "
                      "(%d of %d ranks differ; digest %016llx over %llu buffer(s), %llu bytes vs "
                      "rank 0's %016llx over %llu buffer(s), %llu bytes); %s",
                      first, differ, w->size - 1, f[W_HASH], f[W_BUFS], f[W_BYTES], all[W_HASH],
                      all[W_BUFS], all[W_BYTES], digest_verdict());
        else if (memcmp(all + (size_t)w->rank * ASH_COLL_FP_WORDS, all, 3 * sizeof *all))
            ash_error("digest", "ranks ended with different parameters: this rank's digest %016llx "
                      "differs from rank 0's %016llx; %s", fp[W_HASH], all[W_HASH], digest_verdict());
    } else if (w->rank == 0) {
        if (all[W_BUFS] == 0)
            ash_info("digest", "no parameter buffer was broadcast and readable: nothing compared");
        else
            ash_info("digest", "parameters agree on all %d ranks: digest %016llx over %llu "
                     "buffer(s), %llu bytes%s", w->size, all[W_HASH], all[W_BUFS], all[W_BYTES],
                     all[W_UNREAD] || all[W_OVER] ? " (some buffers could not be read or tracked)" : "");
    }
    free(all);
}
