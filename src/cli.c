/* cli.c - the pieces every sub-command shares; see cli.h. */
#include "cli.h"

#include "ghm_version.h"
#include "ranks.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

GhmCommonOptions ghm_cli_common_defaults(void)
{
    GhmCommonOptions opt = {.backend = GHM_BACKEND_AUTO, .seed = 1};
    return opt;
}

static int quiet; /* ghm_cli_options_quiet: this rank prints no option line */

void ghm_cli_options_quiet(int on)
{
    quiet = on && ghm_ranks_rank() > 0;
    opterr = !quiet;
}

int ghm_cli_quiet(void) { return quiet; }

void ghm_cli_name_command(char **argv, const char *words)
{
    static char name[64]; /* one command runs per process */
    snprintf(name, sizeof name, "%s%s%s", GHM_PROGRAM, words[0] ? " " : "", words);
    argv[0] = name;
}

static void vprint_line(const char *prefix, const char *subject, const char *fmt, va_list ap)
{
    if (quiet)
        return;
    /* Built in one buffer and written with one call, so lines from threads never interleave. */
    char line[2048];
    int n = snprintf(line, sizeof line, "%s: %s", GHM_PROGRAM, prefix);
    if (subject && n >= 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s: ", subject);
    if (n >= 0 && (size_t)n < sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    fprintf(stderr, "%s\n", line);
}

void ghm_cli_error(const char *subject, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_line("", subject, fmt, ap);
    va_end(ap);
}

void ghm_cli_warn(const char *subject, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_line("warning: ", subject, fmt, ap);
    va_end(ap);
}

int ghm_cli_parse_long(const char *name, const char *arg, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end != '\0') {
        ghm_cli_error(name, "'%s' is not a whole number", arg);
        return -1;
    }
    if (v < min || v > max) {
        ghm_cli_error(name, "%ld is out of range (%ld to %ld)", v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int ghm_cli_parse_double(const char *name, const char *arg, double min, double max, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end != '\0' || !isfinite(v)) {
        ghm_cli_error(name, "'%s' is not a number", arg);
        return -1;
    }
    if (v < min || v > max) {
        ghm_cli_error(name, "%g is out of range (%g to %g)", v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_seed(const char *arg, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    if (arg[0] == '-') {
        ghm_cli_error("--seed", "'%s' must be a non-negative whole number", arg);
        return -1;
    }
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || *end != '\0') {
        ghm_cli_error("--seed", "'%s' is not a whole number below 2^64", arg);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int ghm_cli_common_option(GhmCommonOptions *opt, int id, const char *arg)
{
    long v = 0;
    switch (id) {
    case GHM_OPT_BACKEND:
        if (strcmp(arg, "auto") == 0)
            opt->backend = GHM_BACKEND_AUTO;
        else if (strcmp(arg, "cpu") == 0)
            opt->backend = GHM_BACKEND_CPU;
        else if (strcmp(arg, "cuda") == 0)
            opt->backend = GHM_BACKEND_CUDA;
        else {
            ghm_cli_error("--backend", "'%s' is not one of auto, cpu, cuda", arg);
            return -1;
        }
        return 1;
    case GHM_OPT_JSON:
        opt->json = 1;
        return 1;
    case GHM_OPT_QUIET:
        opt->quiet = 1;
        return 1;
    case GHM_OPT_SEED:
        return parse_seed(arg, &opt->seed) < 0 ? -1 : 1;
    case GHM_OPT_THREADS:
        if (ghm_cli_parse_long("--threads", arg, 0, 4096, &v) < 0)
            return -1;
        opt->threads = (int)v;
        return 1;
    case GHM_OPT_VERBOSE:
        opt->verbose = 1;
        return 1;
    case GHM_OPT_HELP:
        opt->help = 1;
        return 1;
    case GHM_OPT_VERSION:
        opt->version = 1;
        return 1;
    default:
        return 0;
    }
}

int ghm_cli_parse_gpus(const char *arg, int most, int *out)
{
    long v;
    if (strcmp(arg, "all") == 0) {
        *out = GHM_CLI_ALL_GPUS;
        return 0;
    }
    if (ghm_cli_parse_long("--gpus", arg, 1, most, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

int ghm_cli_resolve_gpus(int asked, const GhmContext *ctx)
{
    int cuda = ghm_context_backend(ctx) == GHM_BACKEND_CUDA;
    int have = cuda ? ghm_cuda_device_count() : 0;
    if (asked == GHM_CLI_ALL_GPUS)
        return have > 1 ? have : 1;
    if (asked <= 1)
        return 1;
    if (!cuda) {
        ghm_cli_error("--gpus", "%d needs the CUDA backend (this run uses the CPU%s)", asked,
                      ghm_cuda_available() ? "" : ": no usable CUDA device");
        return -1;
    }
    if (ghm_context_device(ctx) + asked > have) {
        ghm_cli_error("--gpus", "%d: this machine has %d CUDA device%s", asked, have,
                      have == 1 ? "" : "s");
        return -1;
    }
    return asked;
}

/* The device this process works on, before the modulo by the number of devices: its rank on
 * its machine, when there are several ranks. */
static int run_device(void) { return ghm_ranks_size() > 1 ? ghm_ranks_local_rank() : 0; }

void ghm_cli_prestart(GhmBackendKind backend) { ghm_context_prestart_on(backend, run_device()); }

int ghm_cli_context(const GhmCommonOptions *opt, GhmContext **out)
{
    GhmContextOptions co = ghm_context_defaults();
    co.backend = opt->backend;
    co.threads = opt->threads;
    co.seed = opt->seed;
    co.verbose = opt->verbose ? 2 : 0;
    int device = run_device(), devices = 0;
    if (device > 0 && opt->backend != GHM_BACKEND_CPU)
        devices = ghm_cuda_device_count();
    if (devices > 0)
        co.device = device % devices;
    int ret = ghm_context_create(&co, out);
    if (ret == GHM_ERR_NO_DEVICE)
        ghm_cli_error("--backend cuda", "%s (try --backend cpu)", ghm_cuda_unavailable_reason());
    else if (ret == GHM_OK && opt->verbose && opt->backend == GHM_BACKEND_AUTO &&
             ghm_context_backend(*out) == GHM_BACKEND_CPU && !ghm_cuda_available())
        fprintf(stderr, "%s: using the CPU backend: %s\n", GHM_PROGRAM,
                ghm_cuda_unavailable_reason());
    else if (ret < 0)
        ghm_cli_error(NULL, "cannot start the %s backend: %s",
                      opt->backend == GHM_BACKEND_CUDA ? "cuda" : "chosen", ghm_strerror(ret));
    return ret;
}

void ghm_cli_auto_on_cpu(GhmCommonOptions *opt, const char *what)
{
    opt->backend = GHM_BACKEND_CPU;
    if (opt->verbose && ghm_cuda_available())
        fprintf(stderr,
                "%s: --backend auto: %s runs on the CPU (starting CUDA costs more than the "
                "work; --backend cuda uses the GPU)\n",
                GHM_PROGRAM, what);
}

void ghm_cli_usage_hint(const char *command)
{
    if (quiet)
        return;
    fprintf(stderr, "Try '%s%s%s --help' for more information.\n", GHM_PROGRAM,
            command ? " " : "", command ? command : "");
}

void ghm_cli_print_version(FILE *f)
{
    fprintf(f, "%s %s (backends: cpu%s%s)\n", GHM_PROGRAM, ghm_version(),
            ghm_cuda_available() ? ", cuda" : "", ghm_ranks_built_in() ? "; MPI ranks" : "");
}

void ghm_cli_print_help(FILE *f)
{
    fputs(
        "Usage: geohash-match [OPTIONS] REFERENCE QUERY        find QUERY (an image) in REFERENCE\n"
        "       geohash-match [OPTIONS] REFERENCE VIDEO        find REFERENCE in every frame\n"
        "       geohash-match [OPTIONS] REFERENCE QUERY...     many queries, tables built once\n"
        "       geohash-match [OPTIONS] --search QUERY REFERENCE...  which references hold QUERY\n"
        "       geohash-match voxel [OPTIONS] A B              intersect two point clouds\n"
        "       geohash-match voxel edit BASE --add X --subtract Y ...  edit a voxel set\n"
        "       geohash-match bench WHAT [OPTIONS]             built-in benchmarks\n"
        "\n"
        "Finds where one picture sits inside another by geometric hashing: edge points of both\n"
        "images vote, through GPU (or multi-threaded CPU) hash tables, for the similarity transform\n"
        "(scale, rotation, translation) that maps the query onto the reference.\n"
        "\n"
        "Image pair (PNG or JPEG, recognised by content):\n"
        "  geohash-match data/images/box_in_scene.png data/pairs/dev_02_query.png\n"
        "  geohash-match --json --overlay found.png scene.png logo.png\n"
        "  Prints the transform, its votes and a confidence in [0,1]. The 2x3 matrix maps a QUERY\n"
        "  pixel (x right, y down, origin at the centre of the top-left pixel) into REFERENCE.\n"
        "\n"
        "Video (any file FFmpeg decodes, or - for a YUV4MPEG2 stream on standard input):\n"
        "  geohash-match --json data/video/megamind_frame050.png data/video/Megamind.avi\n"
        "  ffmpeg -i in.mkv -f yuv4mpegpipe - | geohash-match ref.png -\n"
        "  One line per frame (JSON Lines with --json, adding \"frame\" and \"pts\").\n"
        "\n"
        "Many queries (images, directories of images sorted by name, videos) in one run:\n"
        "  geohash-match --json scene.png crops/ clip.mp4      one line (JSON object) per query\n"
        "  geohash-match --search logo.png photos/ other.jpg   which hold the logo, best first\n"
        "  Each line names its query (or reference). A file that cannot be read gets its error\n"
        "  line and the run goes on; the exit status is then 2.\n"
        "\n"
        "Voxel Boolean intersection of point clouds (PLY ascii/binary, XYZ text):\n"
        "  geohash-match voxel --grid 64 -o out.ply data/pointclouds/bunny.ply "
        "data/pointclouds/kitten.ply\n"
        "  Labels each occupied voxel of A and B: outside, inside, intersection or unknown.\n"
        "  geohash-match voxel edit kitten.ply --subtract bunny.ply -o bitten.ply\n"
        "  A solid voxel set made from BASE, then edited by each cloud in turn (union,\n"
        "  difference, intersection; geohash-match voxel edit --help).\n"
        "\n"
        "Benchmarks:\n"
        "  geohash-match bench hash --json-out hash.json      hash-table rates vs a sort baseline\n"
        "  geohash-match bench match                          time per query, stage by stage\n"
        "  geohash-match bench voxel                          time per voxel step, 3 sizes\n"
        "  geohash-match bench video                          decode / match / end-to-end fps\n"
        "  geohash-match bench dynmap|distmap|tables          the hash tables' own (bench --help)\n"
        "\n"
        "Common options:\n"
        "  --backend auto|cpu|cuda  where to compute (auto: CUDA when a device is present, but\n"
        "                           one image pair, image queries the CPU's threads answer\n"
        "                           sooner (up to ~750 on 16 threads, 37 on 2), or one voxel\n"
        "                           step or edit at --grid <= 128, on the CPU)\n"
        "  --json                   one JSON object on stdout (JSON Lines for video)\n"
        "  --quiet                  print nothing but errors; the exit status tells the result\n"
        "  --seed N                 seed of every random choice; same seed, same answer (default 1)\n"
        "  --threads N              CPU threads (default: all cores; a video's decoder: 16)\n"
        "  --verbose                timings per stage and table sizes on stderr\n"
        "  --help, --version\n"
        "Each mode has more options: geohash-match voxel --help, voxel edit --help, match --help.\n"
        "\n"
        "Exit status: 0 found (or success), 1 no match, 2 error (one line on stderr names the file\n"
        "and the problem).\n",
        f);
}

static int first_stdout_errno; /* ghm_cli_note_stdout_error */

void ghm_cli_note_stdout_error(int err)
{
    if (!first_stdout_errno)
        first_stdout_errno = err;
}

void ghm_cli_stdout_error(int err)
{
    err = err ? err : first_stdout_errno;
    ghm_cli_error("standard output", "%s", err ? strerror(err) : "write error");
}

int ghm_cli_output_not_input(const char *option, const char *output, const char *input)
{
    struct stat out, in;
    if (!output || !input || stat(output, &out) != 0 || !S_ISREG(out.st_mode))
        return 0; /* a new file, or a device or pipe written in place */
    if (stat(input, &in) != 0 || in.st_dev != out.st_dev || in.st_ino != out.st_ino)
        return 0;
    ghm_cli_error(option, "'%s' is the input %s: refusing to write over it", output, input);
    return -1;
}
