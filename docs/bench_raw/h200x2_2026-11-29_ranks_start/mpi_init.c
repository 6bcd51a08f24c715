#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv)
{
    double t0 = now();
    int provided = 0, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    double t1 = now();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = now();
    MPI_Finalize();
    double t3 = now();
    printf("rank %d init %.3f barrier %.3f finalize %.3f s provided %d (serialized %d)\n", rank, t1 - t0, t2 - t1, t3 - t2, provided, MPI_THREAD_SERIALIZED);
    return 0;
}
