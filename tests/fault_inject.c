/*
 * fault_inject.c - see fault_inject.h. The allocation functions of this executable take
 * precedence over libc's for every caller (the dynamic linker resolves malloc to the first
 * definition, the executable's); the library's calls are told apart from libc's, libgomp's and
 * the image libraries' by the caller's address: the library is linked into this executable.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fault_inject.h"

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t alignment, size_t size);

static atomic_long armed_at;   /* 0: not armed */
static atomic_long counted;
static atomic_int hit;

/* Whether the call comes from this executable (the library or the tests), not a shared object. */
static int from_library(const void *caller)
{
    static const void *base;
    if (!base) {
        Dl_info self;
        if (!dladdr((const void *)&from_library, &self))
            return 0;
        base = self.dli_fbase;
    }
    Dl_info info;
    return dladdr(caller, &info) && info.dli_fbase == base;
}

static int should_fail(const void *caller)
{
    if (atomic_load(&armed_at) == 0 || !from_library(caller))
        return 0;
    long n = atomic_fetch_add(&counted, 1) + 1;
    if (n != atomic_load(&armed_at))
        return 0;
    atomic_store(&hit, 1);
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t size)
{
    return should_fail(__builtin_return_address(0)) ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    return should_fail(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    return should_fail(__builtin_return_address(0)) ? NULL : __libc_realloc(p, size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    return should_fail(__builtin_return_address(0)) ? NULL : __libc_memalign(alignment, size);
}

void fault_arm(long k)
{
    atomic_store(&counted, 0);
    atomic_store(&hit, 0);
    atomic_store(&armed_at, k);
}

long fault_disarm(void)
{
    atomic_store(&armed_at, 0);
    return atomic_load(&counted);
}

int fault_hit(void) { return atomic_load(&hit); }

size_t fault_heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}
