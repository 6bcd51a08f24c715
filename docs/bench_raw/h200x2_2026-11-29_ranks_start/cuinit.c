/* How long CUDA's start takes in a process, alone or beside another: cuInit-equivalent
 * (cudaFree(0)), then 256 MB of page-locked host memory, then 256 MB of device memory. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void)
{
    double t0 = now();
    cudaFree(0);
    double t1 = now();
    void *h = NULL, *d = NULL;
    cudaMallocHost(&h, 256u << 20);
    double t2 = now();
    cudaMalloc(&d, 256u << 20);
    cudaMemcpy(d, h, 256u << 20, cudaMemcpyHostToDevice);
    double t3 = now();
    printf("init %.3f pinned %.3f device+copy %.3f s\n", t1 - t0, t2 - t1, t3 - t2);
    return 0;
}
