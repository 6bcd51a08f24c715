/*
 * dist_map.c - GhmDistMap (ghm_dist_map.h): the parts' maps, the plan of a bulk call (how many
 * keys each shard sends to each part, and where they land), and the steps each context runs:
 * on CUDA those that wait for a device (the count, a build, the answers' last pass) on a host
 * thread per context, those that only queue work on the contexts' streams (a find's probes
 * too: ghmi_map_find_queued) on the calling thread. The split, the copies and the reordering
 * are the backend's (GhmDistOps: dist_map_cpu.c, kernels/hashing/dist_map.cu).
 *
 * A bulk call: (1) every shard counts its keys per part; (2) the host plans; (3) every shard
 * groups its keys by part; (4) every shard sends each part its piece; (5) every part builds or
 * finds on what it received; for a find, (6) every part sends the answers back and (7) every
 * shard puts them in its queries' order. A find's piece for its own part is not sent: the part
 * probes it where the split put it. Every step is queued for every part before the next step
 * starts, so a step's copies are queued before the next step's work on the receiving context.
 * On CUDA every part has a side stream (GhmDistOps.side_open): the copies into a part's memory
 * run there, after the sender's work up to its last mark, while the part probes its own piece
 * on its own stream (half of it while the keys arrive, half while the answers go back), as a
 * rank's exchanges do (dist_map_ranks.c). Without side streams (the CPU) a copy is done in the
 * receiver's order (GhmDistOps.copy). Every temporary is freed only after each context has
 * joined its side stream and waited for its own (steps 5 and 7 wait), so no copy reads an
 * array that is gone.
 *
 * Where every context may write every other's memory (GhmDistOps.reach: the CPU's host memory, GPUs
 * whose pools grant each other access) a call other than an overlapped build (below) is direct:
 * step 3 writes each piece straight into its part's receive arrays and a part's finds write their
 * answers straight into the shard's, so steps 4 and 6 copy nothing. The pieces still cross the link
 * once, as the split's stores, but no copy waits for the split to end, and a part's own piece is
 * not copied at all. A context's stream waits for the others' marks three times: for their
 * allocations before it splits into their arrays, for their splits before it builds or probes what
 * they wrote, and for their probes before it puts the answers in order.
 *
 * A build over side streams (CUDA, several parts) is overlapped instead: each shard's split puts
 * its own part's piece first in that part's receive arrays and the others in its send arrays,
 * the copy engines carry those on the parts' side streams, and each part's map inserts its own
 * piece meanwhile (ghmi_map_build_after), the rest once its side stream's copies are in. On two
 * H200s the link's 1.4 ms so hide under the insert: 1.58x -> 1.70x one GPU's build
 * (docs/BENCHMARKS.md). A direct split keeps the SMs waiting on its stores to the other GPU
 * before the insert can start, and a direct split on a few blocks an SM beside the insert
 * (tried) was bound by those few SMs.
 *
 * A find over two parts that can probe every shard where it lies (GhmDistOps.in_place_ok: CUDA
 * devices that reach each other's memory, cuckoo parts) skips steps 1-4, 6 and 7: every part
 * probes both shards' keys, in one pass, for those of its part and writes their answers in
 * place (find_in_place), and each shard's stream waits for every part's marked work before its
 * answers are downloaded or the call returns. The split's passes, the copies both ways and the
 * gather cost about a fifth of the find on two H100s; what is left is the probes and the keys
 * read over the link.
 */
#include "ghm_dist_map.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_map_internal.h"
#include "log_internal.h"

#define MAX_PARTS GHM_DIST_MAP_MAX_PARTS

static int force_copies; /* tests: ghmi_dist_map_force_copies */

void ghmi_dist_map_force_copies(int on) { force_copies = on; }

/* Who sends how many keys to whom: shard p sends count[p][q] keys to part q, from start[p][q]
 * in its send arrays to offset[p][q] in part q's receive arrays; part q receives received[q]. */
typedef struct Plan {
    size_t count[MAX_PARTS][MAX_PARTS];
    size_t start[MAX_PARTS][MAX_PARTS];
    size_t offset[MAX_PARTS][MAX_PARTS];
    size_t received[MAX_PARTS];
} Plan;

/* One bulk call: its arguments, plan and temporaries (each in the memory of the context that
 * reads it: shard arrays in ctx[p]'s, part arrays in ctx[q]'s). */
typedef struct Call {
    GhmDistMap *m;
    const uint32_t *keys[MAX_PARTS], *values[MAX_PARTS]; /* the shards, in backend memory */
    size_t n[MAX_PARTS];
    uint32_t *const *out;        /* the caller's answer arrays (find) */
    void *owned[MAX_PARTS][2];   /* copies of shards the caller gave in host memory */
    Plan *plan;
    uint32_t *way_back[MAX_PARTS], *send_keys[MAX_PARTS], *send_values[MAX_PARTS];
    uint32_t *back[MAX_PARTS], *answers[MAX_PARTS];
    uint32_t *recv_keys[MAX_PARTS], *recv_values[MAX_PARTS], *recv_out[MAX_PARTS];
    int direct; /* splits write into the parts' memory, parts write answers into the shards' */
    int overlapped; /* a build whose parts insert their own pieces while the others' copies
                     * run on their side streams */
    char timings[256]; /* "step ms, ..." for the verbose log */
} Call;

typedef int (*Step)(Call *call, int p);

typedef struct Task {
    Call *call;
    Step step;
    int p;
    int ret;
} Task;

static void *run_task(void *arg)
{
    Task *t = arg;
    t->ret = t->step(t->call, t->p);
    return NULL;
}

static int for_each_part(Call *call, Step step);

/* Runs step for every part on this thread, one after another: the steps that only queue work
 * on the contexts' streams (CUDA) gain nothing from a thread per context and would pay for
 * starting them. The first error wins. */
static int each_part_in_turn(Call *call, Step step)
{
    int ret = GHM_OK;
    for (int p = 0; p < call->m->parts; p++) {
        int r = step(call, p);
        ret = ret == GHM_OK ? r : ret;
    }
    return ret;
}

enum { ON_THREADS, IN_TURN };

/* for_each_part (ON_THREADS: a step that waits for its device) or each_part_in_turn (IN_TURN: a
 * step that only queues work), timed into call->timings under name (logged with --verbose 2). */
static int timed(Call *call, Step step, const char *name, int how)
{
    if (ghm_context_verbose(call->m->ctx[0]) < 2)
        return how == IN_TURN ? each_part_in_turn(call, step) : for_each_part(call, step);
    double t0 = ghm_now();
    int ret = how == IN_TURN ? each_part_in_turn(call, step) : for_each_part(call, step);
    size_t used = strlen(call->timings);
    snprintf(call->timings + used, sizeof call->timings - used, "%s%s %.2f", used ? ", " : "",
             name, 1e3 * (ghm_now() - t0));
    return ret;
}

/* Runs step for every context: at once on CUDA (each context's work waits for its device, so a
 * thread per context keeps every device busy); one after another on the CPU, where each step
 * already uses the context's threads. The first error wins. */
static int for_each_part(Call *call, Step step)
{
    GhmDistMap *m = call->m;
    Task task[MAX_PARTS];
    pthread_t thread[MAX_PARTS];
    int started[MAX_PARTS] = {0};
    int threads = ghm_context_backend(m->ctx[0]) == GHM_BACKEND_CUDA;
    for (int p = 0; p < m->parts; p++) {
        task[p] = (Task){call, step, p, GHM_OK};
        if (!threads || p == 0 || pthread_create(&thread[p], NULL, run_task, &task[p]) != 0)
            continue; /* done below, on this thread */
        started[p] = 1;
    }
    for (int p = 0; p < m->parts; p++)
        if (!started[p])
            task[p].ret = step(call, p);
    int ret = GHM_OK;
    for (int p = 0; p < m->parts; p++) {
        if (started[p])
            pthread_join(thread[p], NULL);
        if (ret == GHM_OK && task[p].ret < 0)
            ret = task[p].ret;
    }
    return ret;
}

/* ------------------------------------------------------------------------- the steps */

int ghmi_dist_shard_input(GhmContext *ctx, const uint32_t *src, size_t n, const uint32_t **dev,
                          void **owned)
{
    *dev = src;
    *owned = NULL;
    if (n == 0 || !src || ghm_buffer_in_place(ctx, src))
        return GHM_OK;
    int ret = ghm_buffer_alloc(ctx, n * 4, owned);
    if (ret == GHM_OK)
        ret = ghm_buffer_upload(ctx, *owned, src, n * 4);
    *dev = *owned;
    return ret;
}

/* Shard p in its context's memory (a copy where the caller gave host memory), and its keys
 * counted per part (a wait for the device). */
static int step_count(Call *call, int p)
{
    GhmDistMap *m = call->m;
    GhmContext *ctx = m->ctx[p];
    int ret = ghmi_dist_shard_input(ctx, call->keys[p], call->n[p], &call->keys[p],
                                    &call->owned[p][0]);
    if (ret == GHM_OK)
        ret = ghmi_dist_shard_input(ctx, call->values[p], call->n[p], &call->values[p],
                                    &call->owned[p][1]);
    if (ret < 0 || call->n[p] == 0)
        return ret;
    return m->ops->count(ctx, call->keys[p], call->n[p], m->c, call->plan->count[p]);
}

/* A find's own piece stays where the split put it (find_own probes it there), so a part
 * receives only the other shards' pieces; a build's part receives every piece, its own first
 * (an overlapped build inserts it while the others arrive), for one build over them all. */
static void make_plan(Plan *pl, int parts, int find)
{
    for (int q = 0; q < parts; q++) {
        pl->received[q] = find ? 0 : pl->count[q][q];
        pl->offset[q][q] = 0;
        for (int p = 0; p < parts; p++)
            if (p != q) {
                pl->offset[p][q] = pl->received[q];
                pl->received[q] += pl->count[p][q];
            }
    }
    for (int p = 0; p < parts; p++) {
        size_t at = 0;
        for (int q = 0; q < parts; q++) {
            pl->start[p][q] = at;
            at += pl->count[p][q];
        }
    }
}

void ghmi_dist_dest_local(GhmiDistDest *dest, int parts, const size_t *start, uint32_t *keys,
                          uint32_t *values)
{
    for (int q = 0; q < parts; q++) {
        dest->keys[q] = keys ? keys + start[q] : NULL;
        dest->values[q] = values ? values + start[q] : NULL;
        dest->start[q] = start[q];
    }
}

int ghmi_dist_overlap(const uint32_t *keys, size_t n_keys, const uint32_t *out, size_t n_out)
{
    uintptr_t k = (uintptr_t)keys, o = (uintptr_t)out;
    return n_keys && n_out && keys && out && k < o + n_out * 4 && o < k + n_keys * 4;
}

int ghmi_dist_alloc_u32(const GhmDistMap *m, GhmContext *ctx, size_t n, uint32_t **out)
{
    *out = NULL;
    return n ? m->ops->alloc(ctx, n * 4, (void **)out) : GHM_OK;
}

/* Marks part p's work so far as what copies out of its memory (and, on a direct call, the other
 * parts' work) wait for (side streams only). */
static int mark(const GhmDistMap *m, int p)
{
    return m->side[p] ? m->ops->side_mark(m->ctx[p], m->side[p]) : GHM_OK;
}

/* The arrays of context p: its shard's send side and its part's receive side. No wait: every
 * copy into them is queued after p's work so far (on its stream, or on its side stream after
 * its mark: GhmDistOps.copy and side_copy both wait for the receiver). */
static int step_alloc(Call *call, int p)
{
    const GhmDistMap *m = call->m;
    GhmContext *ctx = m->ctx[p];
    size_t n = call->n[p], r = call->plan->received[p];
    int find = call->out != NULL, copies = !call->direct;
    size_t way_back_words = n ? m->ops->way_back_words(n, m->c.parts) : 0;
    int ret = GHM_OK;
    if (find || copies) /* a direct build's pieces go straight to the parts */
        ret = ghmi_dist_alloc_u32(m, ctx, n, &call->send_keys[p]);
    if (ret == GHM_OK && !find && copies)
        ret = ghmi_dist_alloc_u32(m, ctx, n, &call->send_values[p]);
    if (ret == GHM_OK && find)
        ret = ghmi_dist_alloc_u32(m, ctx, way_back_words, &call->way_back[p]);
    if (ret == GHM_OK && find)
        ret = ghmi_dist_alloc_u32(m, ctx, n, &call->back[p]);
    if (ret == GHM_OK)
        ret = ghmi_dist_alloc_u32(m, ctx, r, &call->recv_keys[p]);
    if (ret == GHM_OK && !find)
        ret = ghmi_dist_alloc_u32(m, ctx, r, &call->recv_values[p]);
    if (ret == GHM_OK && find && copies) /* a direct find's answers go straight back */
        ret = ghmi_dist_alloc_u32(m, ctx, r, &call->recv_out[p]);
    if (ret == GHM_OK && find && !ghm_buffer_in_place(ctx, call->out[p]))
        ret = ghmi_dist_alloc_u32(m, ctx, n, &call->answers[p]);
    /* the other parts write into these arrays after the allocation, in this stream's order */
    return ret == GHM_OK && call->direct ? mark(m, p) : ret;
}

/* Copies into part q's memory from part p's: beside q's work where q has a side stream (after
 * p's work up to its last mark), else in q's stream order. */
static int copy_in(const GhmDistMap *m, int q, void *dst, int p, const void *src, size_t bytes)
{
    if (!m->side[q])
        return m->ops->copy(m->ctx[q], dst, m->ctx[p], src, bytes);
    return m->ops->side_copy(m->ctx[q], m->side[q], dst, m->ctx[p], m->side[p], src, bytes);
}

/* Part q's later work waits for the copies into its memory queued so far. */
static int join_side(const GhmDistMap *m, int q)
{
    return m->side[q] ? m->ops->side_join(m->ctx[q], m->side[q]) : GHM_OK;
}

/* Part p's later work waits for every other part's work up to that part's last mark (no wait
 * without side streams: the CPU's steps are done on return). */
static int wait_for_others(const GhmDistMap *m, int p)
{
    int ret = GHM_OK;
    for (int q = 0; q < m->parts && ret == GHM_OK; q++)
        if (q != p && m->side[q])
            ret = m->ops->side_wait(m->ctx[p], m->side[q]);
    return ret;
}

/* Where shard p's split puts each part's piece: straight into the part's receive arrays on a
 * direct call (a find's own piece stays in the shard's memory), else its own send arrays. */
static void split_dest(const Call *call, int p, GhmiDistDest *d)
{
    const Plan *pl = call->plan;
    int find = call->out != NULL;
    ghmi_dist_dest_local(d, call->m->parts, pl->start[p], call->send_keys[p],
                         find ? NULL : call->send_values[p]);
    if (call->overlapped) { /* its own piece first in its receive arrays (make_plan) */
        d->keys[p] = call->recv_keys[p];
        d->values[p] = call->recv_values[p];
    }
    for (int q = 0; q < call->m->parts && call->direct; q++)
        if (pl->count[p][q] && !(find && q == p)) {
            d->keys[q] = call->recv_keys[q] + pl->offset[p][q];
            d->values[q] = find ? NULL : call->recv_values[q] + pl->offset[p][q];
        }
}

/* The other parts' arrays that a direct split writes were allocated in their streams' order. */
static int step_meet(Call *call, int p) { return wait_for_others(call->m, p); }

static int step_split(Call *call, int p)
{
    GhmDistMap *m = call->m;
    int ret = GHM_OK;
    if (call->n[p]) {
        GhmiDistDest dest;
        split_dest(call, p, &dest);
        ret = m->ops->split(m->ctx[p], call->keys[p], call->out ? NULL : call->values[p],
                            call->n[p], m->c, &dest, call->way_back[p]);
    }
    return ret == GHM_OK ? mark(m, p) : ret;
}

/* Keys [from, to) of part q's own piece, found where the split put it, the answers straight into
 * the shard's answer order (no copy either way). */
static int find_own(Call *call, int q, size_t from, size_t to)
{
    size_t at = call->plan->start[q][q];
    return to > from ? ghmi_map_find_queued(call->m->map[q], call->send_keys[q] + at + from,
                                            to - from, call->back[q] + at + from)
                     : GHM_OK;
}

/* Every shard's piece for part q into q's memory: the keys, and for a build the values (on a
 * direct call the splits wrote them there: q's later work waits for the splits); a find's own
 * piece stays, and its first half is probed while the others arrive. */
static int step_send(Call *call, int q)
{
    GhmDistMap *m = call->m;
    const Plan *pl = call->plan;
    int ret = call->direct ? wait_for_others(m, q) : GHM_OK;
    for (int p = 0; p < m->parts && ret == GHM_OK && !call->direct; p++) {
        size_t k = pl->count[p][q], from = pl->start[p][q], to = pl->offset[p][q];
        if (k == 0 || (p == q && (call->out || call->overlapped)))
            continue;
        ret = copy_in(m, q, call->recv_keys[q] + to, p, call->send_keys[p] + from, k * 4);
        if (ret == GHM_OK && !call->out)
            ret = copy_in(m, q, call->recv_values[q] + to, p, call->send_values[p] + from, k * 4);
    }
    if (ret == GHM_OK && call->out)
        ret = find_own(call, q, 0, pl->count[q][q] / 2);
    return ret;
}

typedef struct SideOf {
    const GhmDistMap *m;
    int q;
} SideOf;

static int join_side_of(void *arg)
{
    const SideOf *o = arg;
    return join_side(o->m, o->q);
}

/* Part q's build over every piece; an overlapped one inserts q's own piece (first in the
 * receive arrays) while the others' copies run on its side stream, then the rest. */
static int step_build(Call *call, int q)
{
    GhmDistMap *m = call->m;
    if (call->overlapped) {
        SideOf side = {m, q};
        return ghmi_map_build_after(m->map[q], call->recv_keys[q], call->recv_values[q],
                                    call->plan->count[q][q], call->plan->received[q],
                                    join_side_of, &side);
    }
    int ret = join_side(m, q);
    return ret == GHM_OK ? ghm_map_build(m->map[q], call->recv_keys[q], call->recv_values[q],
                                         call->plan->received[q])
                         : ret;
}

/* Part q's finds of the other shards' pieces, once they are in its memory; on a direct call
 * the answers go straight into each shard's memory, where its own piece's answers are. */
static int step_find(Call *call, int q)
{
    const Plan *pl = call->plan;
    int ret = join_side(call->m, q);
    for (int p = 0; p < call->m->parts && ret == GHM_OK; p++) {
        size_t k = pl->count[p][q];
        uint32_t *to = call->direct ? call->back[p] + pl->start[p][q]
                                    : call->recv_out[q] + pl->offset[p][q];
        if (k && p != q)
            ret = ghmi_map_find_queued(call->m->map[q], call->recv_keys[q] + pl->offset[p][q], k,
                                       to);
    }
    return ret == GHM_OK ? mark(call->m, q) : ret;
}

/* Every part's answers for shard p back into p's memory, where p's pieces were sent from (on a
 * direct call the parts wrote them there), while p probes the second half of its own piece
 * (whose answers are in place). */
static int step_return(Call *call, int p)
{
    GhmDistMap *m = call->m;
    const Plan *pl = call->plan;
    int ret = GHM_OK;
    for (int q = 0; q < m->parts && ret == GHM_OK && !call->direct; q++) {
        size_t k = pl->count[p][q];
        if (k && p != q)
            ret = copy_in(m, p, call->back[p] + pl->start[p][q], q,
                          call->recv_out[q] + pl->offset[p][q], k * 4);
    }
    if (ret == GHM_OK)
        ret = find_own(call, p, pl->count[p][p] / 2, pl->count[p][p]);
    return ret;
}

static int step_unsplit(Call *call, int p)
{
    GhmDistMap *m = call->m;
    size_t n = call->n[p];
    int ret = call->direct ? wait_for_others(m, p) : join_side(m, p);
    if (n == 0 || ret < 0)
        return ret;
    uint32_t *to = call->answers[p] ? call->answers[p] : call->out[p];
    ret = m->ops->unsplit(m->ctx[p], call->keys[p], call->back[p], call->way_back[p], n, m->c,
                          to);
    if (ret == GHM_OK && call->answers[p])
        ret = ghm_buffer_download(m->ctx[p], call->out[p], to, n * 4);
    return ret == GHM_OK ? ghm_context_sync(m->ctx[p]) : ret;
}

/* Every temporary of context p, freed in its stream's order. */
static int step_release(Call *call, int p)
{
    GhmContext *ctx = call->m->ctx[p];
    void **arrays[] = {&call->owned[p][0], &call->owned[p][1], (void **)&call->way_back[p],
                       (void **)&call->send_keys[p], (void **)&call->send_values[p],
                       (void **)&call->back[p], (void **)&call->answers[p],
                       (void **)&call->recv_keys[p], (void **)&call->recv_values[p],
                       (void **)&call->recv_out[p]};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        ghm_buffer_free(ctx, arrays[i]);
    return ghm_context_sync(ctx); /* the caller may reuse its arrays on return */
}

/* Checks the shards and starts a call; GHM_ERR_INVALID for a missing array, TOO_LARGE for a
 * shard whose positions do not fit the 32-bit order arrays. call->plan is NULL or the call's. */
static int begin_call(Call *call, GhmDistMap *m, const uint32_t *const *keys,
                      const uint32_t *const *values, const size_t *n, uint32_t *const *out)
{
    memset(call, 0, sizeof *call);
    call->m = m;
    call->out = out;
    for (int p = 0; p < m->parts; p++) {
        if (n[p] && (!keys[p] || (values && !values[p]) || (out && !out[p])))
            return GHM_ERR_INVALID;
        if (n[p] >= GHM_NOT_FOUND)
            return GHM_ERR_TOO_LARGE;
        call->keys[p] = n[p] ? keys[p] : NULL;
        call->values[p] = n[p] && values ? values[p] : NULL;
        call->n[p] = n[p];
    }
    for (int p = 0; out && p < m->parts; p++)
        for (int q = 0; q < m->parts; q++)
            if (ghmi_dist_overlap(call->keys[p], call->n[p], out[q], call->n[q]))
                return GHM_ERR_INVALID;
    call->overlapped = !out && m->side[0];
    call->direct = !call->overlapped && !force_copies && m->ops->reach &&
                   m->ops->reach(m->ctx, m->parts);
    call->plan = calloc(1, sizeof *call->plan);
    return call->plan ? GHM_OK : GHM_ERR_NOMEM;
}

/* Steps 1 to 4, shared by build and find: after the count, only work queued on the contexts'
 * streams (a find's probes of its own piece included), so this thread queues it for every part. */
static int plan_and_send(Call *call)
{
    int ret = timed(call, step_count, "count", ON_THREADS);
    if (ret == GHM_OK) {
        make_plan(call->plan, call->m->parts, call->out != NULL);
        ret = timed(call, step_alloc, "alloc", IN_TURN);
    }
    if (ret == GHM_OK && call->direct) /* every wait queued before a split marks again */
        ret = timed(call, step_meet, "meet", IN_TURN);
    if (ret == GHM_OK)
        ret = timed(call, step_split, "split", IN_TURN);
    if (ret == GHM_OK)
        ret = timed(call, step_send, "send", IN_TURN);
    return ret;
}

static int step_sync(Call *call, int p)
{
    int joined = join_side(call->m, p), synced = ghm_context_sync(call->m->ctx[p]);
    return joined < 0 ? joined : synced;
}

/* Frees the call's temporaries once no context's queued copy can still read one (after an
 * error a part's copies may be pending when the call stops). The contexts' streams are idle
 * after a call that did not fail, so this thread waits for each in turn. */
static void end_call(Call *call, const char *what, int *ret)
{
    int rel = timed(call, step_sync, "sync", IN_TURN);
    int freed = timed(call, step_release, "free", IN_TURN);
    rel = rel < 0 ? rel : freed;
    if (*ret == GHM_OK)
        *ret = rel;
    free(call->plan);
    if (ghm_context_verbose(call->m->ctx[0]) >= 2)
        ghmi_log(GHM_LOG_INFO, "dist map %s, ms: %s", what, call->timings);
}

static int empty_parts(Call *call, int q)
{
    return ghm_map_build(call->m->map[q], NULL, NULL, 0);
}

int ghm_dist_map_build(GhmDistMap *m, const uint32_t *const *keys,
                       const uint32_t *const *values, const size_t *n)
{
    if (!m || !keys || !values || !n)
        return GHM_ERR_INVALID;
    if (m->ranked)
        return ghmi_dist_ranked_build(m, keys[0], values[0], n[0]);
    Call call;
    int ret = begin_call(&call, m, keys, values, n, NULL);
    if (ret < 0) { /* nothing started: the map is unchanged */
        free(call.plan);
        return ret;
    }
    ret = plan_and_send(&call);
    if (ret == GHM_OK)
        ret = timed(&call, step_build, "build", ON_THREADS);
    end_call(&call, "build", &ret);
    if (ret < 0) /* no part keeps what it had, none what it may have built */
        (void)for_each_part(&call, empty_parts);
    return ret;
}

/* ---------------------------------------------- a find in place (GhmDistOps.find_in_place) */

/* Shard p's keys in its context's memory, and an array for its answers where the caller's is
 * not; marked, for the parts that read and write them. */
static int step_inputs(Call *call, int p)
{
    const GhmDistMap *m = call->m;
    GhmContext *ctx = m->ctx[p];
    int ret = ghmi_dist_shard_input(ctx, call->keys[p], call->n[p], &call->keys[p],
                                    &call->owned[p][0]);
    if (ret == GHM_OK && call->n[p] && !ghm_buffer_in_place(ctx, call->out[p]))
        ret = ghmi_dist_alloc_u32(m, ctx, call->n[p], &call->answers[p]);
    return ret == GHM_OK ? mark(m, p) : ret;
}

static uint32_t *answers_of(const Call *call, int p)
{
    return call->answers[p] ? call->answers[p] : call->out[p];
}

/* Part q probes both shards' keys for those of its part in one pass, after the other shard's
 * marked work (its keys, its answer array). */
static int step_probe_in_place(Call *call, int q)
{
    const GhmDistMap *m = call->m;
    const uint32_t *keys[2];
    size_t n[2];
    uint32_t *out[2];
    int ret = GHM_OK;
    for (int i = 0; i < 2 && ret == GHM_OK; i++) { /* two parts (can_find_in_place) */
        int p = (q + i) % 2;
        keys[i] = call->keys[p];
        n[i] = call->n[p];
        out[i] = answers_of(call, p);
        if (p != q)
            ret = m->ops->side_wait(m->ctx[q], m->side[p]);
    }
    return ret == GHM_OK ? m->ops->find_in_place(m->ctx[q], m->map[q], m->c, (uint32_t)q, 2,
                                                 keys, n, out)
                         : ret;
}

static int step_mark(Call *call, int q) { return mark(call->m, q); }

/* Shard p's answers, once every part has written its own: downloaded where the caller's array
 * is host memory. */
static int step_collect(Call *call, int p)
{
    const GhmDistMap *m = call->m;
    int ret = wait_for_others(m, p);
    if (ret == GHM_OK && call->answers[p])
        ret = ghm_buffer_download(m->ctx[p], call->out[p], call->answers[p], call->n[p] * 4);
    return ret == GHM_OK ? ghm_context_sync(m->ctx[p]) : ret;
}

/* Whether this find can run in place: two parts on a backend that can, a direct call (devices
 * that write each other's memory, where host arrays are copied), side streams to order the
 * devices, and arrays every device reaches.
 * Two parts only: every part reads every other shard's keys, so each GPU reads (G - 1) / G of
 * all the keys over its links where the split path moves each key once; measured at 2^28 keys
 * (2026-11-28, docs/BENCHMARKS.md): 2 H100s 35 -> 41 G keys/s in place, 4 H100s 54 -> 45. */
static int can_find_in_place(const Call *call)
{
    const GhmDistMap *m = call->m;
    if (!m->ops->find_in_place || !m->ops->in_place_ok || m->parts != 2 || !call->direct)
        return 0;
    const uint32_t *keys[MAX_PARTS];
    uint32_t *out[MAX_PARTS];
    for (int p = 0; p < m->parts; p++) {
        if (!m->side[p])
            return 0;
        keys[p] = ghm_buffer_in_place(m->ctx[p], call->keys[p]) ? call->keys[p] : NULL;
        out[p] = ghm_buffer_in_place(m->ctx[p], call->out[p]) ? call->out[p] : NULL;
    }
    return m->ops->in_place_ok(m->ctx, m->map, m->parts, keys, out, call->n);
}

static int find_in_place(Call *call)
{
    int ret = timed(call, step_inputs, "inputs", IN_TURN);
    if (ret == GHM_OK)
        ret = timed(call, step_probe_in_place, "probe", IN_TURN);
    if (ret == GHM_OK)
        ret = timed(call, step_mark, "mark", IN_TURN);
    if (ret == GHM_OK) /* the answers' download and the wait: a thread per device */
        ret = timed(call, step_collect, "collect", ON_THREADS);
    end_call(call, "find in place", &ret);
    return ret;
}

int ghm_dist_map_find(const GhmDistMap *m, const uint32_t *const *keys, const size_t *n,
                      uint32_t *const *out)
{
    if (!m || !keys || !n || !out)
        return GHM_ERR_INVALID;
    if (m->ranked)
        return ghmi_dist_ranked_find(m, keys[0], n[0], out[0]);
    Call call;
    int ret = begin_call(&call, (GhmDistMap *)m, keys, NULL, n, out);
    if (ret < 0) {
        free(call.plan);
        return ret;
    }
    if (can_find_in_place(&call))
        return find_in_place(&call);
    ret = plan_and_send(&call);
    if (ret == GHM_OK)
        ret = timed(&call, step_find, "find", IN_TURN);
    if (ret == GHM_OK)
        ret = timed(&call, step_return, "return", IN_TURN);
    if (ret == GHM_OK) /* the answers' download and the wait: a thread per device */
        ret = timed(&call, step_unsplit, "unsplit", ON_THREADS);
    end_call(&call, "find", &ret);
    return ret;
}
