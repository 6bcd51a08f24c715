/*
 * dist_map_ranks.c - a GhmDistMap over several processes (ghm_dist_map_create_ranked): this
 * rank holds one part, every call is made by every rank, and the ranks meet at the exchanges.
 *
 * A bulk call is the one-process call (dist_map.c) seen from one rank: count this shard's keys
 * per part; swap the counts with every rank (all_to_all), which gives the plan; group the keys
 * by part; exchange the pieces (NCCL on CUDA where built, else host memory); build or find on
 * what arrived; for a find, exchange the answers back and put them in the queries' order.
 *
 * Two ranks on GPUs of one machine map each other's windows (CUDA IPC, GhmDistOps.window_*)
 * and run the calls as one process does: a find probes the other rank's keys where they lie
 * (no split, no exchange, no unsplit), a build's copy engines carry the pieces into the other
 * rank's window while each part inserts its own. On two H200s at 2^28 keys (docs/BENCHMARKS.md)
 * the ranks' build is 1.00-1.03x of one process's `--gpus 2` (through NCCL 0.90-0.92x) and their
 * finds 1.00-1.01x where the keys and answers lie in the map's arrays (ghm_dist_map_alloc_array,
 * probed and answered in place), 0.88-0.91x where they are copied through the window (through
 * NCCL 0.66-0.89x of a slower one-process find).
 *
 * No rank may stop while another waits for it in an exchange, so every step that can fail on
 * one rank alone (an allocation, a copy, a build) is followed by a vote (agree): each rank
 * sends its status to every other, and all go on or all stop with the lowest rank's error.
 */
#include <stdlib.h>
#include <string.h>

#include "dist_map_internal.h"
#include "hash_family.h"
#include "log_internal.h"

#define MAX_PARTS GHM_DIST_MAP_MAX_PARTS

int ghmi_dist_gather_word(const GhmDistRanks *r, uint64_t word, uint64_t *all)
{
    uint64_t send[MAX_PARTS];
    for (int q = 0; q < r->ranks; q++)
        send[q] = word;
    return r->all_to_all(r->user, send, all) < 0 ? GHM_ERR_IO : GHM_OK;
}

/* Every rank's status; the first failure in rank order, or GHM_OK when every rank is fine. A
 * failed vote is every rank's GHM_ERR_IO. */
static int agree(const GhmDistMap *m, int status)
{
    uint64_t all[MAX_PARTS];
    if (ghmi_dist_gather_word(&m->ranks, (uint64_t)(int64_t)status, all) < 0)
        return GHM_ERR_IO;
    for (int q = 0; q < m->ranks.ranks; q++)
        if ((int64_t)all[q] < 0)
            return (int)(int64_t)all[q];
    return GHM_OK;
}

static int valid_ranks(const GhmDistRanks *r)
{
    return r && r->ranks >= 1 && r->ranks <= MAX_PARTS && r->rank >= 0 && r->rank < r->ranks &&
           r->all_to_all && r->all_to_all_v && r->broadcast;
}

/* GHM_ERR_INVALID on every rank unless every rank's context is of ctx's backend (the ranks
 * must take the same way through each call, votes included). */
static int same_backend(const GhmDistMap *m, const GhmContext *ctx)
{
    uint64_t mine = (uint64_t)ghm_context_backend(ctx), all[MAX_PARTS];
    if (ghmi_dist_gather_word(&m->ranks, mine, all) < 0)
        return GHM_ERR_IO;
    for (int q = 0; q < m->ranks.ranks; q++)
        if (all[q] != mine)
            return GHM_ERR_INVALID;
    return GHM_OK;
}

/* The part hash every rank uses: rank 0's, since each process's contexts draw their own seed. */
static int share_consts(GhmDistMap *m, GhmContext *ctx)
{
    uint32_t c[2] = {0, 0};
    GhmiDistConsts mine = ghmi_dist_consts(ctx->seed, m->ranks.ranks);
    if (m->ranks.rank == 0) {
        c[0] = mine.a;
        c[1] = mine.b;
    }
    if (m->ranks.broadcast(m->ranks.user, c, sizeof c, 0) < 0)
        return GHM_ERR_IO;
    m->c = (GhmiDistConsts){c[0], c[1], (uint32_t)m->ranks.ranks};
    return GHM_OK;
}

/* A way between the ranks (NCCL, the IPC windows) that this rank opened with status ret, kept
 * only where every rank could open it (an opening may fail on one rank alone): else each rank
 * closes its own, says why in the log, and the calls take the slower way. GHM_ERR_IO when the
 * vote itself failed (the way is then freed with the map). */
static int keep_if_every_rank(GhmDistMap *m, int ret, void **way,
                              void (*close_way)(GhmContext *ctx, void *way), const char *failed,
                              const char *instead)
{
    int all = agree(m, ret);
    if (all == GHM_ERR_IO)
        return all;
    if (all < 0) {
        if (*way)
            close_way(m->ctx[0], *way);
        *way = NULL;
        ghmi_log(GHM_LOG_INFO, "dist map: %s (%s); %s", failed, ghm_strerror(all), instead);
    }
    return GHM_OK;
}

/* NCCL where the backend has it; where any rank cannot join (two ranks on one GPU, say),
 * every rank goes through host memory instead. */
static int connect_ranks(GhmDistMap *m)
{
    if (!m->ops->rank_link || m->ranks.ranks == 1)
        return GHM_OK;
    int ret = m->ops->rank_link(m->ctx[0], &m->ranks, &m->link);
    return keep_if_every_rank(m, ret, &m->link, m->ops->rank_unlink,
                              "not every rank could join NCCL",
                              "the data goes through host memory");
}

/* Windows where the backend has them and there are two ranks: probing every window's keys, a
 * rank reads all the ranks' keys, which past two parts costs more than the all-to-all saves
 * (measured in one process, dist_map.c's can_find_in_place). Where any rank cannot map the
 * others' memory, every rank goes without. */
static int open_windows(GhmDistMap *m)
{
    if (!m->ops->window_open || m->ranks.ranks != 2)
        return GHM_OK;
    int ret = m->ops->window_open(m->ctx[0], &m->ranks, &m->window);
    return keep_if_every_rank(m, ret, &m->window, m->ops->window_close,
                              "the ranks cannot map each other's memory",
                              "builds and finds exchange their pieces");
}

int ghm_dist_map_create_ranked(GhmContext *ctx, const GhmDistRanks *ranks,
                               const GhmMapOptions *opt, GhmDistMap **out)
{
    if (!out)
        return GHM_ERR_INVALID;
    *out = NULL;
    if (!ctx || !opt || !valid_ranks(ranks))
        return GHM_ERR_INVALID;
    GhmDistMap *m = calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->parts = 1;
    m->ctx[0] = ctx;
    m->ranked = 1;
    m->ranks = *ranks;
    m->ops = ctx->backend->dist;
    int ret = m->ops ? ghm_map_create(ctx, opt, &m->map[0]) : GHM_ERR_UNSUPPORTED;
    ret = agree(m, ret);
    if (ret == GHM_OK)
        ret = same_backend(m, ctx);
    if (ret == GHM_OK)
        ret = share_consts(m, ctx);
    if (ret == GHM_OK)
        ret = connect_ranks(m);
    if (ret == GHM_OK)
        ret = open_windows(m);
    if (ret < 0) {
        ghm_dist_map_free(&m);
        return ret;
    }
    *out = m;
    return GHM_OK;
}

void ghmi_dist_ranked_free(GhmDistMap *m)
{
    if (m->window)
        m->ops->window_close(m->ctx[0], m->window);
    m->window = NULL;
    if (m->link)
        m->ops->rank_unlink(m->ctx[0], m->link);
    m->link = NULL;
}

int ghmi_dist_ranked_alloc_array(GhmDistMap *m, int status, size_t bytes, void **out)
{
    if (m->window)
        return m->ops->window_alloc_array(m->ctx[0], m->window, &m->ranks, status, bytes, out);
    void *p = NULL;
    int ret = agree(m, status < 0 ? status : ghm_buffer_alloc(m->ctx[0], bytes, &p));
    if (ret < 0)
        ghm_buffer_free(m->ctx[0], &p);
    else
        *out = p;
    return ret;
}

void ghmi_dist_ranked_free_array(GhmDistMap *m, void *p)
{
    if (m->window)
        (void)m->ops->window_free_array(m->ctx[0], m->window, &m->ranks, p);
    else
        ghm_buffer_free(m->ctx[0], &p);
}

int ghm_dist_map_uses_nccl(const GhmDistMap *m) { return m && m->link != NULL; }

int ghm_dist_map_uses_ipc(const GhmDistMap *m) { return m && m->window != NULL; }

/* ------------------------------------------------------------------------- one bulk call */

/* One call on this rank: its shard, the plan, the temporaries (this context's memory). */
typedef struct RankCall {
    const GhmDistMap *m;
    GhmContext *ctx;
    int ranks;
    const uint32_t *keys, *values; /* the shard, in backend memory */
    size_t n;
    void *owned[2];                /* copies of a shard given in host memory */
    size_t count[MAX_PARTS], start[MAX_PARTS];       /* this shard's keys of each part */
    size_t send_n[MAX_PARTS];                        /* what it sends each rank */
    size_t sent; /* the send arrays' words: all n for a find, the others' pieces for a build */
    size_t recv_n[MAX_PARTS], recv_at[MAX_PARTS];    /* what it receives from each rank */
    size_t received;
    uint32_t *way_back, *send_keys, *send_values, *back, *answers;
    uint32_t *recv_keys, *recv_values, *recv_out;
} RankCall;

static size_t offsets(const size_t *n, int parts, size_t *at)
{
    size_t total = 0;
    for (int q = 0; q < parts; q++) {
        at[q] = total;
        total += n[q];
    }
    return total;
}

/* The shard in backend memory and its count per part; then the vote, and every rank's counts
 * for this one. The piece for this rank's own part is never exchanged: a find probes it where
 * the split put it (in the send arrays, whose order the answers come back in), and a build's
 * split puts it straight into the receive arrays, so a build's send arrays (c->start) hold the
 * other pieces alone. */
static int plan_call(RankCall *c, int find)
{
    const GhmDistMap *m = c->m;
    int ret = ghmi_dist_shard_input(c->ctx, c->keys, c->n, &c->keys, &c->owned[0]);
    if (ret == GHM_OK)
        ret = ghmi_dist_shard_input(c->ctx, c->values, c->n, &c->values, &c->owned[1]);
    if (ret == GHM_OK && c->n)
        ret = m->ops->count(c->ctx, c->keys, c->n, m->c, c->count);
    if ((ret = agree(m, ret)) < 0)
        return ret;
    uint64_t send[MAX_PARTS], recv[MAX_PARTS];
    int self = m->ranks.rank;
    for (int q = 0; q < c->ranks; q++)
        c->send_n[q] = send[q] = q == self ? 0 : c->count[q];
    if (m->ranks.all_to_all(m->ranks.user, send, recv) < 0)
        return GHM_ERR_IO;
    for (int p = 0; p < c->ranks; p++)
        c->recv_n[p] = (size_t)recv[p];
    c->sent = offsets(find ? c->count : c->send_n, c->ranks, c->start);
    c->received = offsets(c->recv_n, c->ranks, c->recv_at);
    if (!find)
        c->received += c->count[self];
    return GHM_OK;
}

static int alloc_call(RankCall *c, uint32_t *out)
{
    const GhmDistMap *m = c->m;
    int find = out != NULL;
    size_t way_back_words = c->n ? m->ops->way_back_words(c->n, m->c.parts) : 0;
    int ret = ghmi_dist_alloc_u32(m, c->ctx, c->sent, &c->send_keys);
    if (ret == GHM_OK)
        ret = find ? ghmi_dist_alloc_u32(m, c->ctx, way_back_words, &c->way_back)
                   : ghmi_dist_alloc_u32(m, c->ctx, c->sent, &c->send_values);
    if (ret == GHM_OK && find)
        ret = ghmi_dist_alloc_u32(m, c->ctx, c->n, &c->back);
    if (ret == GHM_OK)
        ret = ghmi_dist_alloc_u32(m, c->ctx, c->received, &c->recv_keys);
    if (ret == GHM_OK)
        ret = ghmi_dist_alloc_u32(m, c->ctx, c->received, find ? &c->recv_out : &c->recv_values);
    if (ret == GHM_OK && find && c->n && !ghm_buffer_in_place(c->ctx, out))
        ret = ghmi_dist_alloc_u32(m, c->ctx, c->n, &c->answers);
    return agree(m, ret);
}

/* send's pieces to every rank, recv's from every rank, through host memory: the CPU backend's
 * arrays as they are, a device's through host copies (each rank's download voted on before any
 * rank waits in the exchange). */
static int exchange_by_host(const RankCall *c, const uint32_t *send, const size_t *send_n,
                            const size_t *send_at, uint32_t *recv, const size_t *recv_n,
                            const size_t *recv_at, size_t send_total, size_t recv_total)
{
    const GhmDistRanks *r = &c->m->ranks;
    if (ghm_context_backend(c->ctx) == GHM_BACKEND_CPU)
        return r->all_to_all_v(r->user, send, send_n, send_at, recv, recv_n, recv_at) < 0
                   ? GHM_ERR_IO
                   : GHM_OK;
    /* host images of send and recv; only the pieces move (recv's other words, a find's answers
     * for its own piece among them, are not overwritten) */
    uint32_t *hs = malloc((send_total ? send_total : 1) * 4);
    uint32_t *hr = malloc((recv_total ? recv_total : 1) * 4);
    int ret = hs && hr ? GHM_OK : GHM_ERR_NOMEM;
    for (int q = 0; q < c->ranks && ret == GHM_OK; q++)
        if (send_n[q])
            ret = ghm_buffer_download(c->ctx, hs + send_at[q], send + send_at[q], send_n[q] * 4);
    ret = agree(c->m, ret);
    if (ret == GHM_OK && r->all_to_all_v(r->user, hs, send_n, send_at, hr, recv_n, recv_at) < 0)
        ret = GHM_ERR_IO;
    for (int q = 0; q < c->ranks && ret == GHM_OK; q++)
        if (recv_n[q])
            ret = ghm_buffer_upload(c->ctx, recv + recv_at[q], hr + recv_at[q], recv_n[q] * 4);
    free(hs);
    free(hr);
    return ret;
}

/* The all-to-all of one array: NCCL's where the ranks are linked (queued beside this context's
 * later work, until join), else through the host (done on return). */
static int exchange(const RankCall *c, const uint32_t *send, const size_t *send_n,
                    const size_t *send_at, uint32_t *recv, const size_t *recv_n,
                    const size_t *recv_at, size_t send_total, size_t recv_total)
{
    const GhmDistMap *m = c->m;
    int ret = m->link ? m->ops->rank_exchange(c->ctx, m->link, c->ranks, send, send_n, send_at,
                                              recv, recv_n, recv_at)
                      : exchange_by_host(c, send, send_n, send_at, recv, recv_n, recv_at,
                                         send_total, recv_total);
    return agree(m, ret);
}

/* This context's later work waits for the exchanges queued so far. */
static int join(const RankCall *c)
{
    const GhmDistMap *m = c->m;
    return m->link ? m->ops->rank_join(c->ctx, m->link) : GHM_OK;
}

/* Keys (and a build's values) grouped by part and sent (in flight until join). */
static int split_and_send(RankCall *c, int find)
{
    const GhmDistMap *m = c->m;
    int ret = GHM_OK;
    if (c->n) {
        GhmiDistDest dest;
        int self = m->ranks.rank;
        ghmi_dist_dest_local(&dest, m->ranks.ranks, c->start, c->send_keys,
                             find ? NULL : c->send_values);
        if (!find && c->count[self]) { /* the own piece, last in the receive arrays */
            size_t own_at = c->received - c->count[self];
            dest.keys[self] = c->recv_keys + own_at;
            dest.values[self] = c->recv_values + own_at;
        }
        ret = m->ops->split(c->ctx, c->keys, find ? NULL : c->values, c->n, m->c, &dest,
                            c->way_back);
    }
    if ((ret = agree(m, ret)) < 0)
        return ret;
    ret = exchange(c, c->send_keys, c->send_n, c->start, c->recv_keys, c->recv_n, c->recv_at,
                   c->sent, c->received);
    if (ret == GHM_OK && !find)
        ret = exchange(c, c->send_values, c->send_n, c->start, c->recv_values, c->recv_n,
                       c->recv_at, c->sent, c->received);
    return ret;
}

/* Every temporary, once the context's stream has passed every use of them; then the last
 * vote, so that every rank returns the same status. */
static int end_call(RankCall *c, int ret)
{
    int sync = join(c); /* an exchange still in flight after an error reads the temporaries */
    int synced = ghm_context_sync(c->ctx);
    sync = sync < 0 ? sync : synced;
    void **arrays[] = {&c->owned[0], &c->owned[1], (void **)&c->way_back, (void **)&c->send_keys,
                       (void **)&c->send_values, (void **)&c->back, (void **)&c->answers,
                       (void **)&c->recv_keys, (void **)&c->recv_values, (void **)&c->recv_out};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        ghm_buffer_free(c->ctx, arrays[i]);
    return agree(c->m, ret < 0 ? ret : sync);
}

/* The call's checks, on this rank alone and then by vote (a rank with bad arguments must not
 * leave the others waiting). */
static int begin_call(RankCall *c, const GhmDistMap *m, const uint32_t *keys,
                      const uint32_t *values, size_t n, int find, const uint32_t *out)
{
    memset(c, 0, sizeof *c);
    c->m = m;
    c->ctx = m->ctx[0];
    c->ranks = m->ranks.ranks;
    c->keys = n ? keys : NULL;
    c->values = n && !find ? values : NULL;
    c->n = n;
    int ret = GHM_OK;
    if (n && (!keys || (!find && !values) || (find && !out) ||
              (find && ghmi_dist_overlap(keys, n, out, n))))
        ret = GHM_ERR_INVALID;
    else if (n >= GHM_NOT_FOUND)
        ret = GHM_ERR_TOO_LARGE;
    return agree(m, ret);
}

/* The part's build waits for the whole exchange: inserting its own piece while NCCL's kernels
 * carry the others (as one process's parts do beside their copy engines, dist_map.c) made the
 * two ranks' build slower on two H200s (24.6-24.7 -> 23.9-24.2 G keys/s), the insert and
 * NCCL's kernels sharing the SMs. The windows' copy engines do not (build_in_windows). */
static int build_by_exchanges(RankCall *c)
{
    const GhmDistMap *m = c->m;
    int ret = plan_call(c, 0);
    if (ret == GHM_OK)
        ret = alloc_call(c, NULL);
    if (ret == GHM_OK)
        ret = split_and_send(c, 0);
    if (ret == GHM_OK)
        ret = agree(m, join(c));
    if (ret == GHM_OK)
        ret = agree(m, ghm_map_build(m->map[0], c->recv_keys, c->recv_values, c->received));
    return end_call(c, ret);
}

/* The answers that came back, in the queries' order, in out. */
static int unsplit(RankCall *c, uint32_t *out)
{
    if (c->n == 0)
        return GHM_OK;
    uint32_t *to = c->answers ? c->answers : out;
    int ret = c->m->ops->unsplit(c->ctx, c->keys, c->back, c->way_back, c->n, c->m->c, to);
    if (ret == GHM_OK && c->answers)
        ret = ghm_buffer_download(c->ctx, out, to, c->n * 4);
    return ret;
}

/* Keys [from, to) of this rank's own piece, found where the split put it, the answers straight
 * into their order. */
static int find_own(RankCall *c, size_t from, size_t to)
{
    size_t at = c->start[c->m->ranks.rank];
    return to > from ? ghm_map_find(c->m->map[0], c->send_keys + at + from, to - from,
                                    c->back + at + from)
                     : GHM_OK;
}

/* The find's probes around the two exchanges, so that each runs beside probes: the first half
 * of the own piece while the other ranks' keys arrive, their keys, then the second half while
 * their answers go back. (Through host memory the exchanges are done on return: the same
 * order, nothing beside.) */
static int find_around_exchanges(RankCall *c)
{
    const GhmDistMap *m = c->m;
    size_t own = c->count[m->ranks.rank];
    int ret = agree(m, find_own(c, 0, own / 2));
    if (ret == GHM_OK)
        ret = agree(m, join(c));
    if (ret == GHM_OK && c->received)
        ret = ghm_map_find(m->map[0], c->recv_keys, c->received, c->recv_out);
    if ((ret = agree(m, ret)) < 0)
        return ret;
    ret = exchange(c, c->recv_out, c->recv_n, c->recv_at, c->back, c->send_n, c->start,
                   c->received, c->n);
    if (ret == GHM_OK)
        ret = agree(m, find_own(c, own / 2, own));
    if (ret == GHM_OK)
        ret = agree(m, join(c));
    return ret;
}

/* ------------------------------------------------------------- through the ranks' windows */

/* The end of a call through the windows: this context's work waits for every rank's copies
 * first, so that none still reads an array that end_call frees (a call may fail before its
 * own wait). */
static int end_in_windows(RankCall *c, int ret)
{
    int joined = c->m->ops->window_join(c->ctx, c->m->window);
    return end_call(c, ret < 0 ? ret : joined);
}

static int wait_for_windows(void *arg)
{
    RankCall *c = arg;
    return c->m->ops->window_join(c->ctx, c->m->window);
}

/* Where this rank's piece lands in each other rank's window (to[q]): a window holds its own
 * rank's piece first (inserted while the others arrive), then the others' in rank order. */
static int landing_places(const RankCall *c, uint64_t *to)
{
    const GhmDistRanks *r = &c->m->ranks;
    uint64_t at[MAX_PARTS];
    for (int p = 0; p < c->ranks; p++)
        at[p] = c->count[r->rank] + c->recv_at[p];
    return r->all_to_all(r->user, at, to) < 0 ? GHM_ERR_IO : GHM_OK;
}

/* A build as one process's overlapped build (dist_map.c): this rank's split puts its own piece
 * first in its window and the others in its send arrays, the copy engines carry those into the
 * other ranks' windows, and the part inserts its own piece meanwhile, the rest once every
 * rank's copies are in. The vote after the copies are queued is the barrier that lets the
 * parts wait for the others' marks. */
static int build_in_windows(RankCall *c)
{
    const GhmDistMap *m = c->m;
    const GhmDistOps *ops = m->ops;
    int self = m->ranks.rank;
    uint64_t to[MAX_PARTS];
    uint32_t *keys = NULL, *values = NULL;
    int ret = plan_call(c, 0);
    if (ret == GHM_OK)
        ret = landing_places(c, to);
    if (ret == GHM_OK)
        ret = ops->window_reserve(c->ctx, m->window, &m->ranks, c->received, NULL, NULL, &keys,
                                  &values);
    if (ret == GHM_OK)
        ret = ghmi_dist_alloc_u32(m, c->ctx, c->sent, &c->send_keys);
    if (ret == GHM_OK)
        ret = ghmi_dist_alloc_u32(m, c->ctx, c->sent, &c->send_values);
    if (ret == GHM_OK && c->n) {
        GhmiDistDest dest;
        ghmi_dist_dest_local(&dest, c->ranks, c->start, c->send_keys, c->send_values);
        dest.keys[self] = keys;
        dest.values[self] = values;
        ret = ops->split(c->ctx, c->keys, c->values, c->n, m->c, &dest, NULL);
    }
    if ((ret = agree(m, ret)) == GHM_OK)
        ret = agree(m, ops->window_send(c->ctx, m->window, c->send_keys, c->send_values,
                                        c->send_n, c->start, to));
    if (ret == GHM_OK)
        ret = agree(m, ghmi_map_build_after(m->map[0], keys, values, c->count[self],
                                            c->received, wait_for_windows, c));
    return end_in_windows(c, ret);
}

/* A find in the ranks' windows: the keys copied into this rank's window, every rank's part of
 * every window probed where it lies, the answers copied out. The votes between the steps are
 * also the barriers that let a rank wait for the others' marks. */
static int find_in_windows(RankCall *c, uint32_t *out)
{
    const GhmDistMap *m = c->m;
    const GhmDistOps *ops = m->ops;
    void *w = m->window;
    uint32_t *keys, *answers;
    int ret = agree(m, ops->window_reserve(c->ctx, w, &m->ranks, c->n, c->keys, out, &keys,
                                           &answers));
    if (ret == GHM_OK)
        ret = agree(m, ops->window_fill(c->ctx, w, c->keys));
    if (ret == GHM_OK)
        ret = agree(m, ops->window_probe(c->ctx, w, m->map[0], m->c));
    if (ret == GHM_OK)
        ret = ops->window_answers(c->ctx, w, out);
    return end_in_windows(c, ret);
}

/* Where the map's scheme cannot probe in place, every rank (the same scheme) takes the
 * exchanges. */
static int can_find_in_windows(const GhmDistMap *m)
{
    const uint32_t *no_keys[1] = {NULL};
    uint32_t *no_out[1] = {NULL};
    size_t none[1] = {0};
    return m->window && m->ops->in_place_ok(m->ctx, m->map, 1, no_keys, no_out, none);
}

int ghmi_dist_ranked_build(GhmDistMap *m, const uint32_t *keys, const uint32_t *values,
                           size_t n)
{
    RankCall c;
    int ret = begin_call(&c, m, keys, values, n, 0, NULL);
    if (ret < 0) /* nothing started: the map is unchanged */
        return ret;
    ret = m->window ? build_in_windows(&c) : build_by_exchanges(&c);
    if (ret < 0) /* no part keeps what it had, none what it may have built */
        (void)ghm_map_build(m->map[0], NULL, NULL, 0);
    return ret;
}

int ghmi_dist_ranked_find(const GhmDistMap *m, const uint32_t *keys, size_t n, uint32_t *out)
{
    RankCall c;
    int ret = begin_call(&c, m, keys, NULL, n, 1, out);
    if (ret < 0)
        return ret;
    if (can_find_in_windows(m))
        return find_in_windows(&c, out);
    ret = plan_call(&c, 1);
    if (ret == GHM_OK)
        ret = alloc_call(&c, out);
    if (ret == GHM_OK)
        ret = split_and_send(&c, 1);
    if (ret == GHM_OK)
        ret = find_around_exchanges(&c);
    if (ret == GHM_OK)
        ret = unsplit(&c, out);
    return end_call(&c, ret);
}
