/* query_files.c - directories of queries; see query_files.h. */
#include "query_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ghm_error.h"
#include "ghm_file_io.h"

int ghm_query_is_dir(const char *path)
{
    struct stat st;
    return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void ghm_query_files_free(GhmQueryFiles *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->paths[i]);
    free(f->paths);
    f->paths = NULL;
    f->n = 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "dir/name" in a new string, or NULL when out of memory. */
static char *join(const char *dir, const char *name)
{
    size_t nd = strlen(dir), nn = strlen(name);
    int slash = nd > 0 && dir[nd - 1] != '/';
    char *p = malloc(nd + (size_t)slash + nn + 1);
    if (p) {
        memcpy(p, dir, nd);
        if (slash)
            p[nd] = '/';
        memcpy(p + nd + slash, name, nn + 1);
    }
    return p;
}

/* 1 when path is a regular file whose first bytes say PNG or JPEG. A file that cannot be read
 * is left out too: it would not be one of the directory's images anyway, and reading the rest
 * is what the user asked for. */
static int is_image(const char *path)
{
    struct stat st;
    GhmFileKind kind = GHM_FILE_UNKNOWN;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    if (ghm_file_sniff_path(path, &kind, NULL, 0) < 0)
        return 0;
    return kind == GHM_FILE_PNG || kind == GHM_FILE_JPEG;
}

/* Appends path to out (taking it), growing the array by doubling. */
static int append(GhmQueryFiles *out, size_t *cap, char *path)
{
    if (out->n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        char **p = realloc(out->paths, ncap * sizeof *p);
        if (!p) {
            free(path);
            return GHM_ERR_NOMEM;
        }
        out->paths = p;
        *cap = ncap;
    }
    out->paths[out->n++] = path;
    return GHM_OK;
}

static int read_entries(DIR *d, const char *dir, GhmQueryFiles *out)
{
    size_t cap = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *path = join(dir, e->d_name);
        if (!path)
            return GHM_ERR_NOMEM;
        if (!is_image(path)) {
            free(path);
        } else {
            int ret = append(out, &cap, path);
            if (ret < 0)
                return ret;
        }
        errno = 0;
    }
    return errno ? GHM_ERR_IO : GHM_OK;
}

int ghm_query_files_dir(const char *dir, GhmQueryFiles *out)
{
    out->paths = NULL;
    out->n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        ghm_cli_error(dir, "cannot read the directory: %s", strerror(errno));
        return GHM_ERR_IO;
    }
    int ret = read_entries(d, dir, out);
    closedir(d);
    if (ret == GHM_OK && out->n == 0) {
        ghm_cli_error(dir, "no PNG or JPEG image in this directory");
        ret = GHM_ERR_INVALID;
    } else if (ret < 0) {
        ghm_cli_error(dir, "cannot list the directory: %s", ghm_strerror(ret));
    }
    if (ret < 0) {
        ghm_query_files_free(out);
        return ret;
    }
    qsort(out->paths, out->n, sizeof *out->paths, by_name);
    return GHM_OK;
}
