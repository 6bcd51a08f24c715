/*
 * why_internal.h - the one formatter of the "why" messages that vision/ functions hand back
 * with an error status (the caller prints them as "FILE: why"). Not a public header.
 */
#ifndef GHM_WHY_INTERNAL_H
#define GHM_WHY_INTERNAL_H

#include <stddef.h>

/* Writes a printf-style message into why (size why_size); does nothing when why is NULL. */
void ghmi_why(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* GHM_WHY_INTERNAL_H */
