/* query_files.c - the files of QUERY arguments, directories listed; see query_files.h. */
#include "query_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ghm_error.h"
#include "ghm_file_io.h"
#include "ghm_video.h"

int ghm_query_is_dir(const char *path)
{
    struct stat st;
    return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void ghm_query_list_free(GhmQueryList *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->entries[i].path);
        free(l->entries[i].why);
    }
    free(l->entries);
    l->entries = NULL;
    l->n = 0;
}

size_t ghm_query_list_images(const GhmQueryList *l)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += l->entries[i].kind == GHM_QUERY_IMAGE;
    return k;
}

/* Appends an entry taking path and why (freed here on failure), growing by doubling. */
static int append(GhmQueryList *l, size_t *cap, char *path, GhmQueryKind kind, char *why)
{
    if (!path || (kind == GHM_QUERY_BAD && !why)) {
        free(path);
        free(why);
        return GHM_ERR_NOMEM;
    }
    if (l->n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        GhmQueryEntry *e = realloc(l->entries, ncap * sizeof *e);
        if (!e) {
            free(path);
            free(why);
            return GHM_ERR_NOMEM;
        }
        l->entries = e;
        *cap = ncap;
    }
    l->entries[l->n++] = (GhmQueryEntry){path, kind, why};
    return GHM_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const GhmQueryEntry *)a)->path, ((const GhmQueryEntry *)b)->path);
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

/* Whether a name ends as pictures' names do (PNG, JPEG, and the formats cameras and phones write
 * that this program does not read: HEIC, WebP, ...), in any case. */
static int named_like_an_image(const char *name)
{
    static const char *const ext[] = {"png", "jpg", "jpeg", "jpe", "jfif", "heic", "heif", "avif",
                                      "webp", "tif", "tiff", "bmp", "gif", "dng"};
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof ext / sizeof *ext; i++)
        if (strcasecmp(dot + 1, ext[i]) == 0)
            return 1;
    return 0;
}

/* 1 when the directory entry `name` at path is one of the directory's images: a regular file
 * whose first bytes say PNG or JPEG, or one named like a picture whatever it holds (a phone's
 * HEIC photo, a file that cannot be read, a link to nothing), so that its query gets its error
 * line instead of being left out without a word. Other files (notes, sidecars) are left out. */
static int is_image(const char *path, const char *name)
{
    struct stat st;
    GhmFileKind kind = GHM_FILE_UNKNOWN;
    if (named_like_an_image(name))
        return stat(path, &st) != 0 || !S_ISDIR(st.st_mode);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    if (ghm_file_sniff_path(path, &kind, NULL, 0) < 0)
        return 0;
    return kind == GHM_FILE_PNG || kind == GHM_FILE_JPEG;
}

/* Appends the images of the open directory d, then sorts them by name. Returns GHM_OK,
 * GHM_ERR_NOMEM, or GHM_ERR_IO when reading the directory failed (errno set). */
static int add_images(GhmQueryList *l, size_t *cap, DIR *d, const char *dir)
{
    size_t first = l->n;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            char *path = join(dir, e->d_name);
            int ret = GHM_OK;
            if (!path)
                return GHM_ERR_NOMEM;
            if (!is_image(path, e->d_name))
                free(path);
            else if ((ret = append(l, cap, path, GHM_QUERY_IMAGE, NULL)) < 0)
                return ret;
        }
        errno = 0;
    }
    if (errno)
        return GHM_ERR_IO;
    if (l->n - first > 1) /* qsort wants a valid array even for no element */
        qsort(l->entries + first, l->n - first, sizeof *l->entries, by_name);
    return GHM_OK;
}

/* A directory's images, or one GHM_QUERY_BAD entry saying why there are none. */
static int add_directory(GhmQueryList *l, size_t *cap, const char *dir)
{
    char why[256] = "";
    size_t first = l->n;
    DIR *d = opendir(dir);
    int ret = GHM_OK;
    if (!d) {
        snprintf(why, sizeof why, "cannot read the directory: %s", strerror(errno));
    } else {
        ret = add_images(l, cap, d, dir);
        if (ret == GHM_ERR_IO)
            snprintf(why, sizeof why, "cannot list the directory: %s", strerror(errno));
        else if (ret == GHM_OK && l->n == first)
            snprintf(why, sizeof why, "no PNG or JPEG image in this directory");
        closedir(d);
    }
    if (ret == GHM_ERR_NOMEM)
        return ret;
    if (!why[0])
        return GHM_OK;
    while (l->n > first) { /* a listing cut short by an error: none of it */
        l->n--;
        free(l->entries[l->n].path);
    }
    return append(l, cap, strdup(dir), GHM_QUERY_BAD, strdup(why));
}

int ghm_query_list_build(char *const *args, int n, GhmQueryList *out)
{
    size_t cap = 0;
    int ret = GHM_OK;
    out->entries = NULL;
    out->n = 0;
    for (int i = 0; i < n && ret == GHM_OK; i++) {
        if (ghm_query_is_dir(args[i]))
            ret = add_directory(out, &cap, args[i]);
        else
            ret = append(out, &cap, strdup(args[i]),
                         ghm_video_is_video_path(args[i]) ? GHM_QUERY_VIDEO : GHM_QUERY_IMAGE,
                         NULL);
    }
    if (ret < 0)
        ghm_query_list_free(out);
    return ret;
}
