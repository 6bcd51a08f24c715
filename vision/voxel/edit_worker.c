/*
 * edit_worker.c - a voxel edit's helper thread (edit_internal.h): it runs one job at a time
 * beside the calling thread (on a device: the loading of later calls' code while the first
 * apply runs, then each apply's normals check, on its OpenMP threads, while the calling thread
 * runs the probe's labels) and stays from apply to apply. A thread started
 * for each apply made its OpenMP threads anew each time: the check then took 0.85-1.07 ms of
 * the run's 1.2, at times more than the run (H200 host, 2026-11-30).
 */
#include <pthread.h>
#include <stdlib.h>

#include "edit_internal.h"

struct GhmiEditWorker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a job given, or quit */
    pthread_cond_t done; /* the job finished */
    void *(*job)(void *);
    void *arg;
    int busy, quit;
};

static void *worker_main(void *p)
{
    GhmiEditWorker *w = p;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->busy && !w->quit)
            pthread_cond_wait(&w->wake, &w->lock);
        if (w->quit)
            break;
        pthread_mutex_unlock(&w->lock);
        w->job(w->arg);
        pthread_mutex_lock(&w->lock);
        w->busy = 0;
        pthread_cond_signal(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int ghmi_edit_worker_create(GhmiEditWorker **out)
{
    *out = NULL;
    GhmiEditWorker *w = calloc(1, sizeof *w);
    if (!w)
        return GHM_ERR_NOMEM;
    int made = 0; /* how many of lock, wake and done are made */
    if (pthread_mutex_init(&w->lock, NULL) == 0)
        made = 1;
    if (made == 1 && pthread_cond_init(&w->wake, NULL) == 0)
        made = 2;
    if (made == 2 && pthread_cond_init(&w->done, NULL) == 0)
        made = 3;
    if (made == 3 && pthread_create(&w->thread, NULL, worker_main, w) == 0) {
        *out = w;
        return GHM_OK;
    }
    if (made >= 3)
        pthread_cond_destroy(&w->done);
    if (made >= 2)
        pthread_cond_destroy(&w->wake);
    if (made >= 1)
        pthread_mutex_destroy(&w->lock);
    free(w);
    return GHM_ERR_NOMEM; /* no memory or threads left */
}

void ghmi_edit_worker_start(GhmiEditWorker *w, void *(*job)(void *), void *arg)
{
    pthread_mutex_lock(&w->lock);
    while (w->busy) /* the job before (a create's preload) has not finished */
        pthread_cond_wait(&w->done, &w->lock);
    w->job = job;
    w->arg = arg;
    w->busy = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void ghmi_edit_worker_wait(GhmiEditWorker *w)
{
    pthread_mutex_lock(&w->lock);
    while (w->busy)
        pthread_cond_wait(&w->done, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

void ghmi_edit_worker_free(GhmiEditWorker **pw)
{
    GhmiEditWorker *w = pw ? *pw : NULL;
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->quit = 1; /* a running job ends first; a check's apply waits for it anyway, and a
                  * create's preload not yet begun is of no use any more */
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
    *pw = NULL;
}
