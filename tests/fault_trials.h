/*
 * fault_trials.h - the operations the fault walks fail in turn (check_faults.c on the CPU with
 * failing host allocations, check_faults_cuda.c on the GPU with failing device allocations and
 * kernel launches): one definition of each trial, so both backends are held to the same
 * promise. A trial's setup and check run unarmed, its run armed; check asserts that a failed
 * run returned fault_error and left its objects valid (as before the call, or empty), then that
 * the same call without the fault gives the right answer.
 */
#ifndef GHM_FAULT_TRIALS_H
#define GHM_FAULT_TRIALS_H

#include "ghm_context.h"
#include "ghm_map.h"

typedef struct FaultTrial {
    void *(*setup)(void);                /* unarmed */
    int (*run)(void *state);             /* armed: the operation */
    void (*check)(void *state, int ret); /* unarmed: answers right, or the objects still valid */
    void (*teardown)(void *state);
} FaultTrial;

/* Set by the walking test: the context every trial works in, the error the armed kind of
 * fault makes the operation return, and the scheme the map trial builds. */
extern GhmContext *fault_ctx;
extern int fault_error;
extern GhmMapScheme fault_map_scheme;

extern const FaultTrial fault_map_trial;     /* map rebuilt from content A to B, B's keys found */
extern const FaultTrial fault_multi_trial;   /* multimap rebuilt, every key's values retrieved */
extern const FaultTrial fault_dist_trial;    /* split map over two contexts rebuilt, keys found */
extern const FaultTrial fault_ranked_trial;  /* the same as one rank of a ranked split map */
extern const FaultTrial fault_set_trial;     /* a set and a sorted table built */
extern const FaultTrial fault_index_trial;   /* index rebuilt from 300 distinct keys to 700 */
extern const FaultTrial fault_dynmap_trial;  /* dynamic table: items inserted, a third erased, slabs collected */
extern const FaultTrial fault_ref_trial;     /* a matcher's reference tables built */
extern const FaultTrial fault_query_trial;   /* an image query against a built reference */
extern const FaultTrial fault_voxel_trial;   /* a voxel step of two spheres at 32^3 */
extern const FaultTrial fault_edit_trial;    /* a voxel edit by them: add, subtract, add, intersect */

/* Frees what the trials cache between runs (the query image, the voxel step's label counts). */
void fault_trials_release(void);

#endif
