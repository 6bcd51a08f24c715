/* json_out.c - see json_out.h. */
#include "json_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ghm_file_io.h"

/* Length of the valid UTF-8 sequence at s, or 0 if the byte there starts none. */
static size_t utf8_sequence(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t len = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || (len == 2 && s[0] < 0xC2) || (len == 4 && s[0] > 0xF4))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (len == 3 && s[0] == 0xE0 && s[1] < 0xA0)
        return 0; /* overlong */
    if (len == 3 && s[0] == 0xED && s[1] >= 0xA0)
        return 0; /* surrogate */
    if (len == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90)))
        return 0;
    return len;
}

json_t *ghm_json_string_lossy(const char *s)
{
    json_t *str = json_string(s);
    if (str)
        return str;
    size_t n = strlen(s);
    char *fixed = malloc(3 * n + 1); /* each bad byte grows to the 3-byte U+FFFD */
    if (!fixed)
        return NULL;
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_sequence(u + i);
        if (len == 0) {
            memcpy(fixed + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else {
            memcpy(fixed + o, s + i, len);
            o += len;
            i += len;
        }
    }
    fixed[o] = '\0';
    str = json_string(fixed);
    free(fixed);
    return str;
}

int ghm_json_write_file(const char *path, json_t *obj)
{
    char why[256] = "out of memory"; /* obj is NULL after a failed json_pack */
    GhmFileWriter *w = NULL;
    int ret = obj ? ghm_file_writer_create(path, &w, why, sizeof why) : GHM_ERR_NOMEM;
    if (ret == GHM_OK) {
        FILE *f = ghm_file_writer_stream(w);
        /* A write error leaves the stream's error set, and commit says which it was. */
        if (json_dumpf(obj, f, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) == 0 || ferror(f)) {
            ret = ghm_file_writer_commit(&w, why, sizeof why);
        } else {
            ghm_file_writer_free(&w); /* jansson ran out of memory */
            ret = GHM_ERR_NOMEM;
        }
    }
    if (ret < 0)
        ghm_cli_error(path, "cannot write the JSON output: %s", why);
    json_decref(obj);
    return ret < 0 ? -1 : 0;
}

int ghm_json_print(FILE *f, const json_t *obj)
{
    errno = 0;
    if (json_dumpf(obj, f, JSON_COMPACT | JSON_REAL_PRECISION(10)) == 0 && fputc('\n', f) != EOF &&
        fflush(f) == 0)
        return 0;
    if (f == stdout) /* callers that go on (a sweep's lines) leave the report to main */
        ghm_cli_note_stdout_error(errno);
    return -1;
}
