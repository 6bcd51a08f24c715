/* why.c - see why_internal.h. */
#include "why_internal.h"

#include <stdarg.h>
#include <stdio.h>

void ghmi_why(char *why, size_t why_size, const char *fmt, ...)
{
    if (why == NULL || why_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}
