/* fork/join cost of an OpenMP region after an idle gap (as between a voxel edit's GPU waits) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+1e-9*t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b; return (x>y)-(x<y);}
int main(int argc, char **argv){
  int nt = argc > 1 ? atoi(argv[1]) : 16, gap_us = argc > 2 ? atoi(argv[2]) : 2000;
  double t[41]; volatile double sink = 0;
  #pragma omp parallel num_threads(nt)
  { sink += 1; }
  for (int i = 0; i < 41; i++) {
    usleep(gap_us);
    double t0 = now();
    #pragma omp parallel num_threads(nt)
    { sink += omp_get_thread_num(); }
    t[i] = 1e6 * (now() - t0);
  }
  qsort(t, 41, sizeof *t, cmp);
  printf("threads %d gap %d us: region min %.1f median %.1f max %.1f us\n", nt, gap_us, t[0], t[20], t[40]);
  return 0;
}
