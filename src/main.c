/*
 * main.c - entry point: picks the sub-command from the first argument and turns its GHM_EXIT_*
 * status into the process exit status. The only file that calls exit().
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
    /* Idle OpenMP workers sleep instead of spinning (unless the user says otherwise): between
     * the short parallel stages of a query, spinning threads burned three times the CPU time
     * and, on a loaded or small machine, slowed video matching from 5.8 to 1.8 frames/s. */
    setenv("OMP_WAIT_POLICY", "passive", 0);
    if (argc >= 2 && strcmp(argv[1], "voxel") == 0)
        return ghm_cmd_voxel(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "bench") == 0)
        return ghm_cmd_bench(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "match") == 0)
        return ghm_cmd_match(argc - 1, argv + 1);
    return ghm_cmd_match(argc, argv);
}
