/* ash_coll_mpi.h — private to collectives/ (and the hostnccl test double): Open MPI reached
 * through one table of entry points, filled by dlopen at first use (mpi_dl.c), never linked.
 *
 * What: each MPI entry point the collectives use is listed once (ASH_COLL_MPI_FUNCS), with its
 * type taken from mpi.h; calls read ASH_MPI(Allreduce)(...). Open MPI's predefined handles
 * (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, ...) are addresses of objects inside libmpi: mpi.h's macros
 * would link against them, so this header redefines the ones used to the table's resolved copies
 * and removes MPI_COMM_NULL (a communicator not opened is ASH_COLL_NO_COMM, never passed to MPI).
 * Pure constants (MPI_SUCCESS, MPI_IN_PLACE, MPI_STATUS_IGNORE, thread levels) stay mpi.h's.
 * Invariant: no ASH_MPI() call and no handle before ash_coll__mpi_load() returned 0.
 * Threading: ash_coll__mpi_load is idempotent and thread-safe; the table is read-only after it.
 */
#ifndef ASH_COLL_MPI_H
#define ASH_COLL_MPI_H

#include <stddef.h>
#include <mpi.h>   /* types and the ABI of Open MPI 4.x / 5.x (soname libmpi.so.40) */

#define ASH_COLL_MPI_LIBRARY "libmpi.so.40"

/* every MPI function called through the table */
#define ASH_COLL_MPI_FUNCS(X)                                                                   \
    X(Init_thread) X(Initialized) X(Finalized) X(Finalize) X(Query_thread) X(Comm_size)          \
    X(Comm_rank) X(Comm_dup) X(Comm_free) X(Comm_set_errhandler) X(Comm_set_name)                \
    X(Error_string) X(Wait) X(Test) X(Allreduce) X(Iallreduce) X(Bcast) X(Ibcast) X(Ibarrier)    \
    X(Allgather) X(Iallgather) X(Op_create) X(Op_free) X(Isend) X(Irecv)

/* every predefined handle used: type, field, Open MPI's object behind mpi.h's macro */
#define ASH_COLL_MPI_HANDLES(X)                                                                 \
    X(MPI_Comm, comm_world, ompi_mpi_comm_world)                                                 \
    X(MPI_Datatype, dt_byte, ompi_mpi_byte)                                                      \
    X(MPI_Datatype, dt_int, ompi_mpi_int)                                                        \
    X(MPI_Datatype, dt_float, ompi_mpi_float)                                                    \
    X(MPI_Datatype, dt_ull, ompi_mpi_unsigned_long_long)                                         \
    X(MPI_Datatype, dt_uint16, ompi_mpi_uint16_t)                                                \
    X(MPI_Op, op_sum, ompi_mpi_op_sum)                                                           \
    X(MPI_Op, op_min, ompi_mpi_op_min)                                                           \
    X(MPI_Errhandler, errors_return, ompi_mpi_errors_return)

typedef struct ash_coll_mpi_api {
#define ASH_COLL_MPI__FN(name) __typeof__(MPI_##name) *name;
    ASH_COLL_MPI_FUNCS(ASH_COLL_MPI__FN)
#undef ASH_COLL_MPI__FN
#define ASH_COLL_MPI__HANDLE(type, field, object) type field;
    ASH_COLL_MPI_HANDLES(ASH_COLL_MPI__HANDLE)
#undef ASH_COLL_MPI__HANDLE
} ash_coll_mpi_api_t;

extern ash_coll_mpi_api_t ash_coll__mpi_api;

/* ASH_MPI(Allreduce)(...): call MPI_Allreduce through the table */
#define ASH_MPI(name) (ash_coll__mpi_api.name)

/* Open libmpi.so.40 (RTLD_GLOBAL: Open MPI's plugins resolve its symbols globally) and fill the
 * table, once per process. 0 on success; -1 with a one-line reason naming the library (or the
 * missing symbol) in WHY. */
int ash_coll__mpi_load(char *why, size_t why_len);

/* libc's dlsym (the public name is the shim's own hook when linked into libaccelshim.so) */
void *ash_coll__dlsym(void *handle, const char *name);

#undef MPI_COMM_WORLD
#define MPI_COMM_WORLD (ash_coll__mpi_api.comm_world)
#undef MPI_BYTE
#define MPI_BYTE (ash_coll__mpi_api.dt_byte)
#undef MPI_INT
#define MPI_INT (ash_coll__mpi_api.dt_int)
#undef MPI_FLOAT
#define MPI_FLOAT (ash_coll__mpi_api.dt_float)
#undef MPI_UNSIGNED_LONG_LONG
#define MPI_UNSIGNED_LONG_LONG (ash_coll__mpi_api.dt_ull)
#undef MPI_UINT16_T
#define MPI_UINT16_T (ash_coll__mpi_api.dt_uint16)
#undef MPI_SUM
#define MPI_SUM (ash_coll__mpi_api.op_sum)
#undef MPI_MIN
#define MPI_MIN (ash_coll__mpi_api.op_min)
#undef MPI_ERRORS_RETURN
#define MPI_ERRORS_RETURN (ash_coll__mpi_api.errors_return)
#undef MPI_COMM_NULL
/* a communicator not (or no longer) open: ours, never handed to MPI */
#define ASH_COLL_NO_COMM ((MPI_Comm)NULL)

#endif /* ASH_COLL_MPI_H */
