/*
 * file_write.c - the writing half of the file-I/O unit: atomic writes through a temporary file
 * beside the target, and the table of temporary files in flight that a signal handler empties.
 * See ghm_file_io.h for the policy.
 *
 * The table is the one piece of process-wide state, and it has to be: a signal handler can
 * reach nothing else. It is a fixed array of atomic pointers to the writers' temporary names,
 * claimed by compare-and-swap, so that a handler on any thread reads it without locks
 * (lock-free atomics are async-signal-safe; a mutex is not). A writer that finishes clears its
 * slot and, before freeing the name, waits while a handler is walking the table, so that the
 * handler never reads freed memory. With all slots taken a write goes on unprotected: the
 * program writes one or two files at a time, far below the table's size.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ghm_file_io.h"
#include "why_internal.h"

#define MAX_LIVE 64
/* Linux's NAME_MAX is 255: a long target name is cut to this before the suffix is added. */
#define MAX_BASE 200
#define CREATE_TRIES 100

_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "the temporary-file table must be lock-free to be read in a signal handler");

static _Atomic(char *) live[MAX_LIVE];
static atomic_int removing;  /* handlers walking the table now */
static atomic_uint sequence; /* makes names unique within the process */

struct GhmFileWriter {
    FILE *f;
    char *tmp;  /* the temporary file's name; in live[slot] while the file may exist */
    char *path; /* the target (a symbolic link's regular file, resolved) */
    int slot;   /* index in live[], or -1 when the table was full */
    int direct; /* the target is not a regular file: written in place, no temporary */
};

static int track(char *name)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        char *expected = NULL;
        if (atomic_compare_exchange_strong(&live[i], &expected, name))
            return i;
    }
    return -1;
}

/* After this the name may be freed: no handler still holds it. */
static void untrack(int slot)
{
    if (slot < 0)
        return;
    atomic_store(&live[slot], NULL);
    while (atomic_load(&removing) > 0)
        sched_yield(); /* a handler on another thread is unlinking; it ends soon (or the process) */
}

void ghm_file_remove_temporaries(void)
{
    int saved = errno; /* a handler must not change errno under the code it interrupted */
    atomic_fetch_add(&removing, 1);
    for (int i = 0; i < MAX_LIVE; i++) {
        char *name = atomic_load(&live[i]);
        if (name)
            unlink(name);
    }
    atomic_fetch_sub(&removing, 1);
    errno = saved;
}

int ghm_file_temporaries_in_flight(void)
{
    int n = 0;
    for (int i = 0; i < MAX_LIVE; i++)
        n += atomic_load(&live[i]) != NULL;
    return n;
}

/* TARGET.tmp.PID.N in the target's folder, the target's name cut to MAX_BASE bytes. A name
 * with our pid that exists already is left over from a dead process that had the same pid. */
static char *temporary_name(const char *path, unsigned n)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    size_t base = strlen(path + dir);
    if (base > MAX_BASE)
        base = MAX_BASE;
    char suffix[48];
    int len = snprintf(suffix, sizeof suffix, ".tmp.%ld.%u", (long)getpid(), n);
    char *name = malloc(dir + base + (size_t)len + 1);
    if (!name)
        return NULL;
    memcpy(name, path, dir + base);
    memcpy(name + dir + base, suffix, (size_t)len + 1);
    return name;
}

/* Creates the temporary file: registered before it exists, so that no signal can leave it. */
static int create_temporary(GhmFileWriter *w, int *fd, char *why, size_t why_size)
{
    for (int tries = 0; tries < CREATE_TRIES; tries++) {
        if (!(w->tmp = temporary_name(w->path, atomic_fetch_add(&sequence, 1)))) {
            ghmi_why(why, why_size, "out of memory");
            return GHM_ERR_NOMEM;
        }
        w->slot = track(w->tmp);
        /* 0666: the kernel takes the umask off, as for any file a program creates. */
        *fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (*fd >= 0)
            return GHM_OK;
        int err = errno;
        untrack(w->slot);
        free(w->tmp);
        w->tmp = NULL;
        if (err != EEXIST) {
            ghmi_why(why, why_size, "cannot create a temporary file beside it: %s",
                     strerror(err));
            return GHM_ERR_IO;
        }
    }
    ghmi_why(why, why_size, "cannot create a temporary file beside it: %d names taken",
             CREATE_TRIES);
    return GHM_ERR_IO;
}

/* Closes and, unless it was renamed into place, removes the temporary file; frees w. */
static void discard(GhmFileWriter *w, int renamed)
{
    if (w->f)
        fclose(w->f);
    if (w->tmp && !renamed)
        unlink(w->tmp);
    untrack(w->slot);
    free(w->tmp);
    free(w->path);
    free(w);
}

/* Where the write goes: a target that exists and is not a regular file (a device, a pipe:
 * /dev/stdout, /dev/null) cannot be replaced by a rename, and must not be (run as root, the
 * rename put a regular file in place of /dev/full), so it is opened and written in place; a
 * symbolic link to a regular file has the file it names replaced, the link kept (as a shell's
 * `>` writes through it). Sets w->path and w->direct; 0 or an errno. */
static int choose_target(GhmFileWriter *w, const char *path)
{
    struct stat st, lst;
    int exists = stat(path, &st) == 0;
    w->direct = exists && !S_ISREG(st.st_mode);
    if (exists && !w->direct && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
        w->path = realpath(path, NULL);
    else
        w->path = strdup(path);
    return w->path ? 0 : errno ? errno : ENOMEM;
}

static int open_in_place(GhmFileWriter *w, int *fd, char *why, size_t why_size)
{
    *fd = open(w->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (*fd >= 0)
        return GHM_OK;
    ghmi_why(why, why_size, "cannot open for writing: %s", strerror(errno));
    return GHM_ERR_IO;
}

int ghm_file_writer_create(const char *path, GhmFileWriter **out, char *why, size_t why_size)
{
    if (out)
        *out = NULL;
    if (!path || !out || !path[0]) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    GhmFileWriter *w = calloc(1, sizeof *w);
    int err = w ? choose_target(w, path) : ENOMEM;
    if (err == ENOMEM) {
        ghmi_why(why, why_size, "out of memory");
        free(w);
        return GHM_ERR_NOMEM;
    }
    if (err) {
        ghmi_why(why, why_size, "cannot follow the link: %s", strerror(err));
        free(w);
        return GHM_ERR_IO;
    }
    w->slot = -1;
    int fd = -1;
    int ret = w->direct ? open_in_place(w, &fd, why, why_size)
                        : create_temporary(w, &fd, why, why_size);
    if (ret < 0) {
        discard(w, 0);
        return ret;
    }
    if (!(w->f = fdopen(fd, "wb"))) { /* only fails for want of memory */
        ghmi_why(why, why_size, "out of memory");
        close(fd);
        discard(w, 0);
        return GHM_ERR_NOMEM;
    }
    *out = w;
    return GHM_OK;
}

FILE *ghm_file_writer_stream(GhmFileWriter *w)
{
    return w ? w->f : NULL;
}

/* Makes the rename itself durable; best effort, the file is in place already. */
static void sync_folder(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    if (!dir)
        return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* Flushes, fsyncs and closes the stream; 0, or the errno of the first failure. */
static int finish_stream(GhmFileWriter *w)
{
    FILE *f = w->f;
    w->f = NULL;
    int err = 0;
    if (ferror(f))
        err = errno ? errno : EIO; /* set by the stdio call that failed, just before */
    else if (fflush(f) != 0)
        err = errno;
    else if (!w->direct && fsync(fileno(f)) != 0) /* a pipe or a device has nothing to sync */
        err = errno;
    if (fclose(f) != 0 && !err)
        err = errno;
    return err;
}

int ghm_file_writer_commit(GhmFileWriter **pw, char *why, size_t why_size)
{
    if (!pw || !*pw) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    GhmFileWriter *w = *pw;
    *pw = NULL;
    int err = finish_stream(w);
    if (err) {
        ghmi_why(why, why_size, "cannot write: %s", strerror(err));
        discard(w, 0);
        return GHM_ERR_IO;
    }
    if (w->direct) {
        discard(w, 0);
        return GHM_OK;
    }
    if (rename(w->tmp, w->path) != 0) {
        ghmi_why(why, why_size, "cannot put the written file in place: %s", strerror(errno));
        discard(w, 0);
        return GHM_ERR_IO;
    }
    sync_folder(w->path);
    discard(w, 1);
    return GHM_OK;
}

void ghm_file_writer_free(GhmFileWriter **w)
{
    if (!w || !*w)
        return;
    discard(*w, 0);
    *w = NULL;
}

int ghm_file_write(const char *path, const void *data, size_t size, char *why, size_t why_size)
{
    if (!data && size) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    GhmFileWriter *w = NULL;
    int ret = ghm_file_writer_create(path, &w, why, why_size);
    if (ret < 0)
        return ret;
    if (size)
        fwrite(data, 1, size, w->f); /* a short write sets the stream's error: commit reports it */
    return ghm_file_writer_commit(&w, why, why_size);
}
