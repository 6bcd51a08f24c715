/*
 * ghm_api.h - GHM_API marks what the library exports. The library is compiled with hidden
 * visibility, so a function is part of the shared library's interface only when its
 * declaration in a public header (ghm_*.h) says GHM_API; internal helpers (ghmi_*, the
 * backends' entry points) stay private to it.
 */
#ifndef GHM_API_H
#define GHM_API_H

#if defined(__GNUC__) || defined(__clang__)
#define GHM_API __attribute__((visibility("default")))
#else
#define GHM_API
#endif

#endif /* GHM_API_H */
