/* allreduce_mpi.c — the reference side of bench/allreduce.sh: what a hand-written MPI program pays
 * to all-reduce a gradient that already lives in host memory. Every rank fills COUNT floats with
 * rank + 1, runs WARMUP untimed and ITERS timed MPI_Allreduce(MPI_IN_PLACE, MPI_FLOAT, MPI_SUM) on
 * MPI_COMM_WORLD, and rank 0 prints
 *     allreduce_mpi: count N iters I median_ms X min_ms Y
 * --mode picks how the reduction is waited for, to take the shim's mpi backend apart:
 *   blocking (default)  MPI_Allreduce
 *   iwait               MPI_Iallreduce + MPI_Wait (Open MPI: the non-blocking algorithm, libnbc)
 *   ipoll               MPI_Iallreduce + MPI_Test, napping 50 us after 64 unfinished tests (how
 *                       collectives/coll.c once waited while a watchdog timeout was set)
 * --chunk C (blocking only): the buffer is reduced by MPI_Allreduce calls of at most C floats each,
 * one after the other (what the shim's pipelined mpi backend does per 4 MiB slot).
 * Usage: allreduce_mpi [--count N] [--warmup W] [--iters I] [--mode M] [--chunk C].
 * Single-threaded.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long count = 16L << 20, warmup = 2, iters = 7, chunk = 0;
    const char *mode = "blocking";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--count"))
            count = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup"))
            warmup = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters"))
            iters = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--mode"))
            mode = argv[i + 1];
        else if (!strcmp(argv[i], "--chunk"))
            chunk = atol(argv[i + 1]);
    }
    int m = !strcmp(mode, "blocking") ? 0 : !strcmp(mode, "iwait") ? 1 : !strcmp(mode, "ipoll") ? 2 : -1;
    if (count <= 0 || count > 0x7fffffffL || iters <= 0 || warmup < 0 || m < 0 || chunk < 0 ||
        (chunk > 0 && m != 0)) {
        fprintf(stderr, "allreduce_mpi: bad --count/--iters/--warmup/--mode/--chunk\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    float *buf = malloc((size_t)count * sizeof *buf);
    double *t = malloc((size_t)iters * sizeof *t);
    if (!buf || !t) {
        fprintf(stderr, "allreduce_mpi: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < count; i++)
        buf[i] = (float)(rank + 1);
    for (long i = 0; i < warmup + iters; i++) {
        double t0 = now_ms();
        if (m == 0) {
            long piece = chunk > 0 ? chunk : count;
            for (long off = 0; off < count; off += piece)
                MPI_Allreduce(MPI_IN_PLACE, buf + off, (int)(count - off < piece ? count - off : piece),
                              MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        } else {
            MPI_Request req;
            MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            if (m == 1) {
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                int done = 0;
                for (unsigned spins = 0;; spins++) {
                    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
                    if (done)
                        break;
                    if (spins > 64) {
                        struct timespec nap = {0, 50 * 1000};
                        nanosleep(&nap, NULL);
                    }
                }
            }
        }
        if (i >= warmup)
            t[i - warmup] = now_ms() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    if (rank == 0)
        printf("allreduce_mpi: mode %s chunk %ld ranks %d count %ld iters %ld median_ms %.3f min_ms %.3f\n",
               mode, chunk, size, count, iters, iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2, t[0]);
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
