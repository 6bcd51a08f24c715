// Throw-away probe (s41): 512 MB from GPU 0 into GPU 1 by cudaMemcpyPeerAsync, and by a kernel on
// GPU 0 whose coalesced 4-byte / 16-byte stores land in GPU 1's memory; both directions at once.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void store4(const unsigned *src, unsigned *dst, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
__global__ void store16(const uint4 *src, uint4 *dst, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
int main()
{
    const size_t bytes = (size_t)512 << 20, n = bytes / 4;
    unsigned *a[2], *b[2];
    cudaStream_t s[2];
    cudaEvent_t e0[2], e1[2];
    for (int d = 0; d < 2; d++) {
        cudaSetDevice(d);
        cudaDeviceEnablePeerAccess(1 - d, 0);
        cudaMalloc(&a[d], bytes);
        cudaMalloc(&b[d], bytes);
        cudaMemset(a[d], 1, bytes);
        cudaStreamCreate(&s[d]);
        cudaEventCreate(&e0[d]);
        cudaEventCreate(&e1[d]);
    }
    for (int mode = 0; mode < 4; mode++)
        for (int both = 0; both < 2; both++)
            for (int rep = 0; rep < 3; rep++) {
                for (int d = 0; d <= both; d++) {
                    cudaSetDevice(d);
                    cudaEventRecord(e0[d], s[d]);
                    unsigned *dst = mode == 3 ? b[d] : b[1 - d];
                    if (mode == 0)
                        cudaMemcpyPeerAsync(dst, 1 - d, a[d], d, bytes, s[d]);
                    else if (mode == 1)
                        store4<<<132 * 8, 256, 0, s[d]>>>(a[d], dst, n);
                    else
                        store16<<<132 * 8, 256, 0, s[d]>>>((const uint4 *)a[d], (uint4 *)dst, n / 4);
                    cudaEventRecord(e1[d], s[d]);
                }
                float ms[2] = {0, 0};
                for (int d = 0; d <= both; d++) {
                    cudaSetDevice(d);
                    cudaEventSynchronize(e1[d]);
                    cudaEventElapsedTime(&ms[d], e0[d], e1[d]);
                }
                const char *name[] = {"memcpy peer", "kernel 4-byte stores", "kernel 16-byte stores", "kernel 16-byte local"};
                printf("%-22s %s rep %d: %.3f ms (%.0f GB/s)%s\n", name[mode], both ? "both ways" : "one way  ", rep,
                       ms[0], bytes / ms[0] / 1e6, cudaGetLastError() ? " ERROR" : "");
            }
    return 0;
}
