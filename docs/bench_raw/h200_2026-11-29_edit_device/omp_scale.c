/* how parallel the machine is: a compute loop on 1..32 threads, and a short region repeated */
#include <omp.h>
#include <stdio.h>
static double work(long n) { double s = 0; for (long i = 0; i < n; i++) s += (double)(i % 7) * 1e-9; return s; }
int main(void)
{
    printf("omp_get_max_threads %d, procs %d\n", omp_get_max_threads(), omp_get_num_procs());
    for (int t = 1; t <= 32; t *= 2) {
        double t0 = omp_get_wtime(), sink = 0;
#pragma omp parallel for num_threads(t) reduction(+ : sink) schedule(static)
        for (int k = 0; k < 64; k++)
            sink += work(4000000);
        double t1 = omp_get_wtime();
        /* many short regions, as the edit's passes are */
        double t2 = omp_get_wtime();
        for (int r = 0; r < 200; r++) {
#pragma omp parallel for num_threads(t) reduction(+ : sink) schedule(static)
            for (int k = 0; k < 64; k++)
                sink += work(2000);
        }
        double t3 = omp_get_wtime();
        printf("threads %2d: 64 x 4M %.1f ms; 200 short regions %.3f ms each (%g)\n", t,
               1e3 * (t1 - t0), 1e3 * (t3 - t2) / 200, sink);
    }
    return 0;
}
