/*
 * fault_inject.h - failing the k-th allocation of the library, for the tests of check_faults.c.
 *
 * fault_inject.c replaces malloc, calloc, realloc and aligned_alloc in the test executable (they
 * pass on to glibc's __libc_* functions). While armed, the allocations that the library itself
 * makes (callers in the test executable, which links libgeohash.a; libc, libgomp, libpng and
 * libjpeg are other objects and never fail) are counted, and the k-th returns NULL with ENOMEM.
 * Not with AddressSanitizer, which replaces the same functions.
 */
#ifndef GHM_TESTS_FAULT_INJECT_H
#define GHM_TESTS_FAULT_INJECT_H

#include <stddef.h>

/* From now on the k-th (1-based) allocation of the library fails. */
void fault_arm(long k);

/* Stops failing; returns how many allocations of the library were made since fault_arm. */
long fault_disarm(void);

/* Whether the armed allocation has been failed. */
int fault_hit(void);

/* Bytes held by the heap now (glibc's mallinfo2), for leak checks around a trial. */
size_t fault_heap_in_use(void);

#endif /* GHM_TESTS_FAULT_INJECT_H */
