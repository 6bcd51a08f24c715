/*
 * vision_backend.c - the one bridge from vision/ to the backend mechanism (see
 * vision_backend_internal.h): it asks the registry for the "vision" device module of the
 * context's backend, so that the rest of vision/ keeps to the public headers and never learns
 * which backends were compiled in.
 */
#include "vision_backend_internal.h"

#include "ghm_backend_internal.h"

const GhmVisionOps *ghmi_vision_ops(const GhmContext *ctx)
{
    return ghmi_backend_module(ctx, "vision");
}
