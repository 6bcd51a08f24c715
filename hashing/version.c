/* version.c - see ghm_version.h. */
#include "ghm_version.h"

const char *ghm_version(void)
{
    return GHM_VERSION_STRING;
}
