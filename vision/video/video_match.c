/*
 * video_match.c - several workers matching a video's frames, results in stream order (see
 * ghm_video_match.h).
 *
 * One mutex guards the ring and the counters; two condition variables: `space` wakes workers
 * (a slot was handed back, the source's token is free, the go or stop signal) and `done` wakes
 * the consumer (a slot is done; at start, a worker is set up). Item seq lives in slot
 * seq % nslots. A worker takes seq = next_seq only while next_seq - next_out < nslots and
 * no other worker holds the token (`taking`), takes the source's next item outside the lock
 * (so the others can hand in results meanwhile), then loads (where the source has it do so)
 * and matches into the slot it owns until it marks it done; the consumer only touches a slot
 * that is done. After the source's final item (END or an error) no worker reads again. Every
 * wait is finite: workers wait for space that the consumer frees or for stop; the consumer
 * waits for a slot that a live worker owns or will take; stop cancels the source so that a
 * worker waiting in it returns.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_video_match.h"

/* Ring slots per worker: one for the frame it matches, one for a frame done early while an
 * older one is still being matched elsewhere. More would only hold more frames in memory. */
#define SLOTS_PER_JOB 2
/* CPU default: one worker per thread, at most this many (each holds a clone of the reference
 * tables and up to two frames with their matching scratch). */
#define MAX_DEFAULT_CPU_JOBS 16
/* CUDA default: enough streams to overlap one frame's host stages with others' kernels. */
#define DEFAULT_CUDA_JOBS 4

enum { SLOT_FREE = 0, SLOT_TAKEN, SLOT_DONE };

typedef struct Slot {
    int state;
    GhmMatchedFrame mf;
} Slot;

typedef struct Worker {
    GhmVideoMatch *vm;
    int device;          /* its CUDA device (the options' device field) */
    GhmContext *ctx;     /* made, used and freed on the worker's thread */
    GhmMatcher *matcher; /* the clone; NULL with swap; as ctx */
    pthread_t thread;
    int started;
    int setup_ret;       /* the context's and the clone's status */
} Worker;

struct GhmVideoMatch {
    GhmVideoMatchSource source;
    GhmContext *ctx;     /* the caller's (one job) */
    GhmMatcher *matcher; /* the caller's: used with one job, cloned with more */
    const GhmImage *swap_query;
    const GhmMatchParams *params;
    int jobs;
    int gpus;            /* devices the workers are dealt across, >= 1 */
    int first_device;    /* the first of them */
    int inline_match;    /* one job on ctx's device: no thread, next() matches */
    int threads;         /* CPU threads the workers share (the options'; 0: ctx's) */
    /* more than one job, or workers on another device than ctx's */
    int sync_ready;      /* lock and conditions initialised */
    pthread_mutex_t lock;
    pthread_cond_t space;
    pthread_cond_t done;
    Slot *slots;
    int nslots;
    int64_t next_seq;    /* the next item a worker takes */
    int64_t next_out;    /* the next item next() hands back */
    int taking;          /* a worker is taking from the source */
    int ended;           /* the source's final item has been taken */
    int go;              /* every worker is set up: take items */
    int stopping;
    int ready;           /* workers that finished setting up */
    Worker *workers;
    int final_seen;
    GhmMatchedFrame final; /* the final item, to repeat */
};

int ghm_video_match_default_jobs(const GhmContext *ctx)
{
    if (!ctx)
        return 1;
    if (ghm_context_backend(ctx) == GHM_BACKEND_CUDA)
        return DEFAULT_CUDA_JOBS;
    int t = ghm_context_threads(ctx);
    return t < 1 ? 1 : t > MAX_DEFAULT_CPU_JOBS ? MAX_DEFAULT_CPU_JOBS : t;
}

int ghm_video_match_jobs(const GhmVideoMatch *vm)
{
    return vm ? vm->jobs : 0;
}

int ghm_video_match_gpus(const GhmVideoMatch *vm)
{
    return vm ? vm->gpus : 0;
}

/* Matches a GHM_VIDEO_FRAME item in ctx (with matcher, or with a matcher built from the frame
 * under --swap), loading its image first where the source left that to the worker; other
 * items pass through with ret GHM_OK. */
static void match_item(const GhmVideoMatch *vm, GhmContext *ctx, GhmMatcher *matcher,
                       GhmMatchedFrame *mf)
{
    mf->ret = GHM_OK;
    mf->match_ms = 0.0;
    if (mf->item.status == GHM_VIDEO_FRAME && !mf->item.frame.image && vm->source.load)
        vm->source.load(vm->source.user, &mf->item);
    if (mf->item.status != GHM_VIDEO_FRAME)
        return;
    double t = ghm_now();
    if (!vm->swap_query) {
        mf->ret = ghm_matcher_match(matcher, mf->item.frame.image, &mf->res);
    } else {
        GhmMatcher *per_frame = NULL;
        mf->ret = ghm_matcher_create(ctx, mf->item.frame.image, vm->params, &per_frame);
        if (mf->ret == GHM_OK)
            mf->ret = ghm_matcher_match(per_frame, vm->swap_query, &mf->res);
        ghm_matcher_free(&per_frame);
    }
    mf->match_ms = 1e3 * (ghm_now() - t);
}

/* The worker's context: the caller's backend, seed and verbose level, a share of its threads,
 * the worker's device. Made on the worker's thread, so that the workers' devices start at once
 * and the caller's thread never works on another device than its own. */
static int worker_context(Worker *w)
{
    const GhmVideoMatch *vm = w->vm;
    GhmContextOptions co = ghm_context_options(vm->ctx);
    co.threads = (vm->threads ? vm->threads : ghm_context_threads(vm->ctx)) / vm->jobs;
    if (co.threads < 1)
        co.threads = 1;
    co.device = w->device;
    return ghm_context_create(&co, &w->ctx);
}

static void *worker_main(void *arg)
{
    Worker *w = arg;
    GhmVideoMatch *vm = w->vm;
    int ret = worker_context(w);
    if (ret == GHM_OK && !vm->swap_query)
        ret = ghm_matcher_clone(w->ctx, vm->matcher, &w->matcher);
    pthread_mutex_lock(&vm->lock);
    w->setup_ret = ret;
    vm->ready++;
    pthread_cond_broadcast(&vm->done);
    while (!vm->go && !vm->stopping)
        pthread_cond_wait(&vm->space, &vm->lock);
    for (;;) {
        while (!vm->stopping && !vm->ended &&
               (vm->taking || vm->next_seq - vm->next_out >= vm->nslots))
            pthread_cond_wait(&vm->space, &vm->lock);
        if (vm->stopping || vm->ended)
            break;
        vm->taking = 1;
        Slot *s = &vm->slots[vm->next_seq % vm->nslots];
        vm->next_seq++;
        s->state = SLOT_TAKEN;
        pthread_mutex_unlock(&vm->lock);

        /* The slot is this worker's until it is marked done. */
        memset(&s->mf, 0, sizeof s->mf);
        vm->source.next(vm->source.user, &s->mf.item);
        int final = s->mf.item.status == GHM_VIDEO_END || s->mf.item.status < 0;
        pthread_mutex_lock(&vm->lock);
        vm->taking = 0;
        vm->ended |= final;
        pthread_cond_broadcast(&vm->space);
        pthread_mutex_unlock(&vm->lock);

        match_item(vm, w->ctx, w->matcher, &s->mf);
        pthread_mutex_lock(&vm->lock);
        s->state = SLOT_DONE;
        pthread_cond_signal(&vm->done); /* only the consumer waits on it now */
    }
    pthread_mutex_unlock(&vm->lock);
    ghm_matcher_free(&w->matcher);
    ghm_context_free(&w->ctx);
    return NULL;
}

/* Starts the workers' threads and waits until each has its context and clone. */
static int start_workers(GhmVideoMatch *vm)
{
    int ret = GHM_OK;
    for (int i = 0; i < vm->jobs && ret == GHM_OK; i++) {
        Worker *w = &vm->workers[i];
        w->vm = vm;
        w->device = vm->first_device + i % vm->gpus;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            ret = GHM_ERR_EXTERNAL;
        else
            w->started = 1;
    }
    int started = 0;
    for (int i = 0; i < vm->jobs; i++)
        started += vm->workers[i].started;
    pthread_mutex_lock(&vm->lock);
    while (vm->ready < started)
        pthread_cond_wait(&vm->done, &vm->lock);
    for (int i = 0; i < vm->jobs && ret == GHM_OK; i++)
        if (vm->workers[i].setup_ret < 0)
            ret = vm->workers[i].setup_ret;
    if (ret == GHM_OK) {
        vm->go = 1;
        pthread_cond_broadcast(&vm->space);
    }
    pthread_mutex_unlock(&vm->lock);
    return ret;
}

static int init_sync(GhmVideoMatch *vm)
{
    if (pthread_mutex_init(&vm->lock, NULL) != 0)
        return GHM_ERR_EXTERNAL;
    if (pthread_cond_init(&vm->space, NULL) != 0) {
        pthread_mutex_destroy(&vm->lock);
        return GHM_ERR_EXTERNAL;
    }
    if (pthread_cond_init(&vm->done, NULL) != 0) {
        pthread_cond_destroy(&vm->space);
        pthread_mutex_destroy(&vm->lock);
        return GHM_ERR_EXTERNAL;
    }
    vm->sync_ready = 1;
    return GHM_OK;
}

/* The workers and devices of opt (0 jobs: the default, per device). */
static int resolve_workers(GhmVideoMatch *vm, const GhmVideoMatchOptions *opt)
{
    const GhmContext *ctx = vm->ctx;
    vm->gpus = opt->gpus > 1 ? opt->gpus : 1;
    vm->jobs = opt->jobs ? opt->jobs : ghm_video_match_default_jobs(ctx) * vm->gpus;
    vm->first_device = (ghm_context_device(ctx) < 0 ? 0 : ghm_context_device(ctx)) +
                       opt->first_gpu;
    if (vm->gpus == 1 && opt->first_gpu == 0)
        return GHM_OK;
    if (ghm_context_backend(ctx) != GHM_BACKEND_CUDA || vm->jobs < vm->gpus ||
        vm->jobs > GHM_VIDEO_MATCH_MAX_JOBS)
        return GHM_ERR_INVALID;
    return vm->first_device + vm->gpus > ghm_cuda_device_count() ? GHM_ERR_NO_DEVICE : GHM_OK;
}

static int reader_next(void *reader, GhmQueuedFrame *item)
{
    return ghm_video_reader_next(reader, item);
}

static void reader_cancel(void *reader) { ghm_video_reader_cancel(reader); }

int ghm_video_match_start(GhmVideoReader *reader, GhmContext *ctx, GhmMatcher *matcher,
                          const GhmVideoMatchOptions *opt, GhmVideoMatch **out)
{
    GhmVideoMatchSource source = {reader, reader_next, reader_cancel, NULL};
    if (!reader) {
        if (out)
            *out = NULL;
        return GHM_ERR_INVALID;
    }
    return ghm_video_match_start_source(&source, ctx, matcher, opt, out);
}

int ghm_video_match_start_source(const GhmVideoMatchSource *source, GhmContext *ctx,
                                 GhmMatcher *matcher, const GhmVideoMatchOptions *opt,
                                 GhmVideoMatch **out)
{
    if (!out)
        return GHM_ERR_INVALID;
    *out = NULL;
    if (!source || !source->next || !ctx || !matcher || !opt || opt->jobs < 0 ||
        opt->jobs > GHM_VIDEO_MATCH_MAX_JOBS || (opt->swap_query && !opt->params) ||
        opt->gpus < 0 || opt->first_gpu < 0 || opt->threads < 0)
        return GHM_ERR_INVALID;
    GhmVideoMatch *vm = calloc(1, sizeof *vm);
    if (!vm)
        return GHM_ERR_NOMEM;
    vm->source = *source;
    vm->ctx = ctx;
    vm->matcher = matcher;
    vm->swap_query = opt->swap_query;
    vm->params = opt->params;
    vm->threads = opt->threads;
    int ret = resolve_workers(vm, opt);
    if (ret < 0) {
        free(vm);
        return ret;
    }
    if (vm->jobs == 1 && opt->first_gpu == 0) { /* on the caller's thread and context */
        vm->inline_match = 1;
        *out = vm;
        return GHM_OK;
    }
    ret = GHM_ERR_NOMEM;
    vm->nslots = SLOTS_PER_JOB * vm->jobs;
    if (!(vm->slots = calloc((size_t)vm->nslots, sizeof *vm->slots)) ||
        !(vm->workers = calloc((size_t)vm->jobs, sizeof *vm->workers)) ||
        (ret = init_sync(vm)) < 0 || (ret = start_workers(vm)) < 0) {
        ghm_video_match_stop(&vm);
        return ret;
    }
    *out = vm;
    return GHM_OK;
}

int ghm_video_match_next(GhmVideoMatch *vm, GhmMatchedFrame *out)
{
    if (!vm || !out)
        return GHM_ERR_INVALID;
    if (vm->inline_match) {
        memset(out, 0, sizeof *out);
        vm->source.next(vm->source.user, &out->item);
        match_item(vm, vm->ctx, vm->matcher, out);
        return out->item.status;
    }
    if (vm->final_seen) {
        *out = vm->final;
        return out->item.status;
    }
    pthread_mutex_lock(&vm->lock);
    Slot *s = &vm->slots[vm->next_out % vm->nslots];
    while (s->state != SLOT_DONE)
        pthread_cond_wait(&vm->done, &vm->lock);
    *out = s->mf;
    memset(&s->mf, 0, sizeof s->mf);
    s->state = SLOT_FREE;
    vm->next_out++;
    pthread_cond_broadcast(&vm->space);
    pthread_mutex_unlock(&vm->lock);
    if (out->item.status == GHM_VIDEO_END || out->item.status < 0) {
        vm->final_seen = 1;
        vm->final = *out;
    }
    return out->item.status;
}

void ghm_video_match_stop(GhmVideoMatch **pvm)
{
    if (!pvm || !*pvm)
        return;
    GhmVideoMatch *vm = *pvm;
    if (vm->sync_ready) {
        pthread_mutex_lock(&vm->lock);
        vm->stopping = 1;
        pthread_cond_broadcast(&vm->space);
        pthread_mutex_unlock(&vm->lock);
        if (vm->source.cancel) /* a worker waiting on the decoder returns */
            vm->source.cancel(vm->source.user);
        for (int i = 0; i < vm->jobs; i++)
            if (vm->workers[i].started)
                pthread_join(vm->workers[i].thread, NULL);
        pthread_cond_destroy(&vm->done);
        pthread_cond_destroy(&vm->space);
        pthread_mutex_destroy(&vm->lock);
    }
    for (int i = 0; vm->slots && i < vm->nslots; i++)
        ghm_image_free(&vm->slots[i].mf.item.frame.image);
    free(vm->workers); /* each worker freed its clone and context on its thread */
    free(vm->slots);
    free(vm);
    *pvm = NULL;
}
