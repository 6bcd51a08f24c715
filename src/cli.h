/*
 * cli.h - what every sub-command of geohash-match shares: exit codes, the common options,
 * number parsing with clear messages, one-line errors, and the context a command runs in.
 *
 * A command parses its own options with getopt_long over an array that starts with
 * GHM_COMMON_LONG_OPTIONS, hands every option it does not know to ghm_cli_common_option(),
 * and returns a GHM_EXIT_* status; only main() calls exit().
 */
#ifndef GHM_CLI_H
#define GHM_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "ghm_context.h"

#define GHM_PROGRAM "geohash-match"

/* Names the sub-command in argv[0] ("geohash-match voxel edit"), which getopt puts before its
 * own messages ("unrecognized option"), so that they begin as every other error line does.
 * words is the command after the program's name; argv[0] then points at static storage. */
void ghm_cli_name_command(char **argv, const char *words);

enum { GHM_EXIT_FOUND = 0, GHM_EXIT_NOT_FOUND = 1, GHM_EXIT_ERROR = 2 };

/* getopt_long ids of the common options; a command's own ids start at GHM_OPT_FIRST_COMMAND. */
enum {
    GHM_OPT_BACKEND = 1000,
    GHM_OPT_JSON,
    GHM_OPT_QUIET,
    GHM_OPT_SEED,
    GHM_OPT_THREADS,
    GHM_OPT_VERBOSE,
    GHM_OPT_HELP,
    GHM_OPT_VERSION,
    GHM_OPT_FIRST_COMMAND = 1100
};

#define GHM_COMMON_LONG_OPTIONS                                                              \
    {"backend", required_argument, NULL, GHM_OPT_BACKEND},                                   \
        {"json", no_argument, NULL, GHM_OPT_JSON},                                           \
        {"quiet", no_argument, NULL, GHM_OPT_QUIET},                                         \
        {"seed", required_argument, NULL, GHM_OPT_SEED},                                     \
        {"threads", required_argument, NULL, GHM_OPT_THREADS},                               \
        {"verbose", no_argument, NULL, GHM_OPT_VERBOSE},                                     \
        {"help", no_argument, NULL, GHM_OPT_HELP},                                           \
        {"version", no_argument, NULL, GHM_OPT_VERSION}

typedef struct GhmCommonOptions {
    GhmBackendKind backend;
    int json;    /* machine-readable output on stdout */
    int quiet;   /* nothing on stdout but the result (and no progress) */
    int threads; /* 0 = all cores */
    uint64_t seed;
    int verbose; /* timings and table sizes on stderr */
    int help;    /* --help was given: the command prints its help and returns 0 */
    int version;
} GhmCommonOptions;

GhmCommonOptions ghm_cli_common_defaults(void);

/* Applies one common option. Returns 1 if id was a common option it applied, 0 if id is not a
 * common option, or -1 after printing an error line for a bad value. */
int ghm_cli_common_option(GhmCommonOptions *opt, int id, const char *arg);

/* Under an MPI launch every rank reads the same arguments, so their errors, --help and
 * --version would be printed once per rank: between ghm_cli_options_quiet(1) and (0) the ranks
 * after the first print none of them (ghm_cli_error, ghm_cli_warn, ghm_cli_usage_hint and
 * getopt's own lines; a command asks ghm_cli_quiet() before it prints help). Their exit status
 * is still the run's (ranks.h agrees on it). */
void ghm_cli_options_quiet(int on);
int ghm_cli_quiet(void);

/* Prints "geohash-match: <subject>: <message>" as one line on stderr. subject may be NULL. */
void ghm_cli_error(const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints a warning line "geohash-match: warning: <subject>: <message>" on stderr. */
void ghm_cli_warn(const char *subject, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Strict number parsing of option values: the whole string must be a number within
 * [min, max]; otherwise prints "geohash-match: --name: ..." and returns -1. */
int ghm_cli_parse_long(const char *name, const char *arg, long min, long max, long *out);
int ghm_cli_parse_double(const char *name, const char *arg, double min, double max, double *out);

/* Prints "geohash-match: standard output: <strerror(err)>": a result that could not be written
 * (a full disk, a closed pipe). err 0: the reason ghm_cli_note_stdout_error kept, if any, else
 * "write error". */
void ghm_cli_stdout_error(int err);

/* Keeps the reason (an errno) of the first failed write to standard output, for a later
 * ghm_cli_stdout_error(0): a caller that only learns of the failure from ferror() at the end
 * (the check in main) has lost errno by then. */
void ghm_cli_note_stdout_error(int err);

/* Refuses to write an output over an input (ffmpeg's rule): when output (the value of option,
 * may be NULL) names the same regular file as input (may be NULL; one that does not exist is
 * passed over), prints "<option>: '<output>' is the input <input>: ..." and returns -1; else
 * 0. A typo that names the cloud or the photo just read would otherwise replace it with the
 * result. */
int ghm_cli_output_not_input(const char *option, const char *output, const char *input);

/* --gpus all: every CUDA device there is (none: as without the option). */
#define GHM_CLI_ALL_GPUS (-1)

/* Parses --gpus's value ("all": GHM_CLI_ALL_GPUS, or 1..most) into *out; prints one error line
 * and returns -1 for anything else. */
int ghm_cli_parse_gpus(const char *arg, int most, int *out);

/* The devices `asked` (a --gpus value; 0: one) means in ctx: 1 without the option, every device
 * for GHM_CLI_ALL_GPUS, else asked; -1 after an error line where ctx is not a CUDA context or
 * there are not that many devices from ctx's on. */
int ghm_cli_resolve_gpus(int asked, const GhmContext *ctx);

/* Creates the context for the common options, printing one error line on failure (e.g. CUDA
 * asked for where no device is). Returns GHM_OK or the error. Several MPI ranks on one machine
 * each take their own device, as far as the devices go round. */
int ghm_cli_context(const GhmCommonOptions *opt, GhmContext **out);

/* Starts CUDA ahead, on the device ghm_cli_context will name (ghm_context_prestart_on). */
void ghm_cli_prestart(GhmBackendKind backend);

/* --backend auto turned into the CPU for work where starting CUDA costs more than the work
 * (`what`, e.g. "one image pair"); says so under --verbose when a device is there. */
void ghm_cli_auto_on_cpu(GhmCommonOptions *opt, const char *what);

/* Prints "geohash-match: unexpected argument..." / usage hints for getopt failures. */
void ghm_cli_usage_hint(const char *command);

/* The top-level help and the version line. */
void ghm_cli_print_help(FILE *f);
void ghm_cli_print_version(FILE *f);

/* Installs the program's FFmpeg log callback (src/ffmpeg_log.c): decoder lines go to the video
 * being read, nothing is printed. Process-wide, so main() calls it; the library never does. */
void ghm_cli_install_ffmpeg_log(void);

/* The sub-commands. Each returns a GHM_EXIT_* status. argv[0] is the command's name. */
int ghm_cmd_match(int argc, char **argv); /* REFERENCE QUERY (image or video) */
int ghm_cmd_voxel(int argc, char **argv);
int ghm_cmd_bench(int argc, char **argv);

#endif /* GHM_CLI_H */
