/*
 * voxel_sweep_gpus.c - `voxel --sweep K --gpus N`: a sweep's steps (or an MPI rank's range of
 * them) dealt to N CUDA devices, the i-th to the (i mod N)-th, each device with a GhmVoxelSweep
 * of its own (the clouds uploaded to each) run by a thread of its own, the results handed to
 * the caller in step order. A device starts its next step once the caller is done with its
 * last result (the sweep's result lives in its buffers), so N steps are in flight.
 *
 * Each step is the whole step on one device, so every step's labels are one device's: this
 * makes a sweep faster, not one step (cutting the grid across devices, which issue 16 also asks
 * for, is not built).
 */
#include <pthread.h>
#include <stdlib.h>

#include "voxel_cli.h"

typedef struct Dealer Dealer;

typedef struct Worker {
    Dealer *d;
    int first;                 /* its steps: first, first + n, ... */
    GhmContext *ctx, *owned;   /* the caller's context for the first device, else owned */
    pthread_t thread;
    int started;
    int done;                  /* the last step whose result is ready, or first - n */
    int taken;                 /* the last step whose result the caller is done with */
    int ret;                   /* step done's status */
    const GhmVoxelResult *r;   /* step done's result, in the worker's sweep */
} Worker;

struct Dealer {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int stop, n, steps;
    const GhmVoxelSweepRun *run;
    Worker *w;
};

/* Step k's result (or failure) for the caller. */
static void hand_over(Worker *w, int k, int ret, const GhmVoxelResult *r)
{
    pthread_mutex_lock(&w->d->lock);
    w->done = k;
    w->ret = ret;
    w->r = r;
    pthread_cond_broadcast(&w->d->changed);
    pthread_mutex_unlock(&w->d->lock);
}

/* Whether step k may run: the caller is done with this worker's step before it (0: stop). */
static int may_run(Worker *w, int k)
{
    Dealer *d = w->d;
    pthread_mutex_lock(&d->lock);
    while (!d->stop && w->taken != k - d->n)
        pthread_cond_wait(&d->changed, &d->lock);
    int go = !d->stop;
    pthread_mutex_unlock(&d->lock);
    return go;
}

/* A device's steps; a failure (its sweep's set-up included) is its step's, and its last. */
static void *run_steps(void *arg)
{
    Worker *w = arg;
    Dealer *d = w->d;
    const GhmVoxelSweepRun *run = d->run;
    GhmVoxelSweep *sw = NULL;
    int ret = ghm_voxel_sweep_create(w->ctx, run->a, run->b, run->grid, run->opt, &sw);
    for (int k = w->first; k < d->steps && may_run(w, k); k += d->n) {
        const GhmVoxelResult *r = NULL;
        if (ret == GHM_OK)
            ret = ghm_voxel_sweep_step(sw, ghm_voxel_sweep_pose(run, run->first + k), &r);
        hand_over(w, k, ret, r);
        if (ret < 0)
            break;
    }
    /* the caller is done with the last result before the sweep goes */
    (void)may_run(w, d->steps + d->n);
    ghm_voxel_sweep_free(&sw);
    return NULL;
}

/* Waits for step k's result; its status. */
static int wait_for_step(Dealer *d, int k, const GhmVoxelResult **r)
{
    Worker *w = &d->w[k % d->n];
    pthread_mutex_lock(&d->lock);
    while (w->done != k)
        pthread_cond_wait(&d->changed, &d->lock);
    int ret = w->ret;
    *r = w->r;
    pthread_mutex_unlock(&d->lock);
    return ret;
}

static void step_taken(Dealer *d, int k)
{
    pthread_mutex_lock(&d->lock);
    d->w[k % d->n].taken = k;
    pthread_cond_broadcast(&d->changed);
    pthread_mutex_unlock(&d->lock);
}

static void stop_all(Dealer *d)
{
    pthread_mutex_lock(&d->lock);
    d->stop = 1;
    pthread_cond_broadcast(&d->changed);
    pthread_mutex_unlock(&d->lock);
    for (int g = 0; g < d->n; g++)
        if (d->w[g].started)
            pthread_join(d->w[g].thread, NULL);
}

/* A context like ctx (ghm_context_options) on device ctx's + g. */
static int context_on(const GhmContext *ctx, int g, GhmContext **out)
{
    GhmContextOptions co = ghm_context_options(ctx);
    co.device += g;
    return ghm_context_create(&co, out);
}

static int start_workers(Dealer *d, GhmContext *ctx)
{
    for (int g = 0; g < d->n; g++) {
        Worker *w = &d->w[g];
        *w = (Worker){.d = d, .first = g, .ctx = ctx, .done = g - d->n, .taken = g - d->n};
        int ret = g ? context_on(ctx, g, &w->owned) : GHM_OK;
        if (ret < 0) {
            ghm_cli_error("--gpus", "cannot start CUDA device %d: %s",
                          ghm_context_device(ctx) + g, ghm_strerror(ret));
            return ret;
        }
        if (g)
            w->ctx = w->owned;
        if (pthread_create(&w->thread, NULL, run_steps, w) != 0) {
            ghm_cli_error("--gpus", "cannot start a thread for CUDA device %d",
                          ghm_context_device(ctx) + g);
            return GHM_ERR_NOMEM;
        }
        w->started = 1;
    }
    return GHM_OK;
}

int ghm_voxel_sweep_on_gpus(GhmContext *ctx, int gpus, const GhmVoxelSweepRun *run,
                            GhmVoxelStepSink sink, void *user)
{
    Dealer d = {.n = gpus, .steps = run->count, .run = run};
    if (!(d.w = calloc((size_t)gpus, sizeof *d.w)))
        return GHM_ERR_NOMEM;
    pthread_mutex_init(&d.lock, NULL);
    pthread_cond_init(&d.changed, NULL);
    int ret = start_workers(&d, ctx);
    for (int k = 0; k < d.steps && ret == GHM_OK; k++) {
        const GhmVoxelResult *r = NULL;
        if ((ret = wait_for_step(&d, k, &r)) < 0)
            ghm_cli_error("voxel", "step %d (CUDA device %d): %s", run->first + k,
                          ghm_context_device(d.w[k % gpus].ctx), ghm_strerror(ret));
        else
            ret = sink(user, run->first + k, r);
        step_taken(&d, k);
    }
    stop_all(&d);
    for (int g = 0; g < gpus; g++)
        ghm_context_free(&d.w[g].owned);
    pthread_cond_destroy(&d.changed);
    pthread_mutex_destroy(&d.lock);
    free(d.w);
    return ret;
}
