/* check_voxel_fill.c - the CPU fill with its conflict rounds (labels.c's ghmi_voxel_fill) against
 * a plain first-in-first-out breadth-first fill written here, on a cube of voxels whose barrier
 * is a sphere with holes and whose seeds are partly wrong, so that conflicts drop seeds round
 * after round: the rounds after the first fill only the voxels whose seed was dropped (refill),
 * and must end on the labels of a whole fill from the surviving seeds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "voxel_backend_internal.h"
#include "voxel_cpu_internal.h"

enum { N = 40, CUBE = N * N * N, NO_SEED = GHMI_VOXEL_NO_SEED };
#define MID ((N - 1) / 2.0)
#define R 14.0

/* The next number in [0, 1) of test_support.h's seeded generator. */
static double draw(uint64_t *state) { return rng_next(state) / 4294967296.0; }

/* The cube as one cloud: every voxel occupied, a shell of radius R (one voxel in `holes` left
 * out) as barrier, its neighbours as the ring, one in `seeded` of them seeded by its side of
 * the shell, with one seed in `wrong` flipped. */
static void make_side(GhmiSide *s, double holes, double seeded, double wrong)
{
    static const GhmiVoxelRows rows; /* given as rows: a volume, which labels.c refills */
    memset(s, 0, sizeof *s);
    s->rows = &rows;
    s->K = CUBE;
    ghmi_hood_make(1, &s->hood);
    const int nn = s->hood.n;
    s->nbr = malloc((size_t)nn * CUBE * sizeof *s->nbr);
    s->barrier = calloc(CUBE, 1);
    s->ring = calloc(CUBE, 1);
    s->seed = malloc(CUBE);
    s->label = malloc(CUBE);
    s->sid = malloc(CUBE * sizeof *s->sid);
    ck_assert(s->nbr && s->barrier && s->ring && s->seed && s->label && s->sid);
    static double r2[CUBE];
    uint64_t state = 1;
    for (int v = 0; v < CUBE; v++) {
        int x = v % N, y = v / N % N, z = v / (N * N);
        r2[v] = (x - MID) * (x - MID) + (y - MID) * (y - MID) + (z - MID) * (z - MID);
        s->barrier[v] = r2[v] > (R - 0.5) * (R - 0.5) && r2[v] < (R + 0.5) * (R + 0.5) &&
                        draw(&state) >= holes;
        for (int k = 0; k < nn; k++) {
            const int *d = s->hood.step[k];
            int a = x + d[0], b = y + d[1], c = z + d[2];
            int in = a >= 0 && a < N && b >= 0 && b < N && c >= 0 && c < N;
            s->nbr[(size_t)nn * v + k] = in ? (uint32_t)(a + N * (b + N * c)) : GHM_NOT_FOUND;
        }
    }
    for (int v = 0; v < CUBE; v++) {
        s->seed[v] = NO_SEED;
        s->label[v] = s->barrier[v] ? GHM_VOXEL_INTERSECTION : GHM_VOXEL_UNKNOWN;
        for (int k = 0; k < nn && !s->barrier[v]; k++) {
            uint32_t u = s->nbr[(size_t)nn * v + k];
            s->ring[v] |= u != GHM_NOT_FOUND && s->barrier[u];
        }
        if (!s->ring[v] || draw(&state) >= seeded)
            continue;
        int inside = (r2[v] < R * R) != (draw(&state) < wrong);
        s->seed[v] = inside ? GHM_VOXEL_INSIDE : GHM_VOXEL_OUTSIDE;
    }
}

static void free_side(GhmiSide *s)
{
    free(s->nbr);
    free(s->barrier);
    free(s->ring);
    free(s->seed);
    free(s->label);
    free(s->sid);
}

/* One whole fill from the live seeds (ascending ids first), first in first out: each voxel
 * takes the nearest seed, ties to the smallest id. Labels into label[]. */
static void plain_fill(const GhmiSide *s, const uint8_t *seed, uint8_t *label, uint32_t *sid)
{
    static uint32_t dist[CUBE], queue[CUBE];
    size_t head = 0, tail = 0;
    const int nn = s->hood.n;
    for (uint32_t v = 0; v < CUBE; v++) {
        int live = !s->barrier[v] && seed[v] != NO_SEED;
        dist[v] = live ? 0 : UINT32_MAX;
        sid[v] = live ? v : GHM_NOT_FOUND;
        if (live)
            queue[tail++] = v;
    }
    while (head < tail) {
        uint32_t v = queue[head++];
        for (int k = 0; k < nn; k++) {
            uint32_t u = s->nbr[(size_t)nn * v + k];
            if (u == GHM_NOT_FOUND || s->barrier[u])
                continue;
            if (dist[u] == UINT32_MAX) {
                dist[u] = dist[v] + 1;
                sid[u] = sid[v];
                queue[tail++] = u;
            } else if (dist[u] == dist[v] + 1 && sid[v] < sid[u]) {
                sid[u] = sid[v];
            }
        }
    }
    for (uint32_t v = 0; v < CUBE; v++)
        if (!s->barrier[v])
            label[v] = sid[v] == GHM_NOT_FOUND ? GHM_VOXEL_UNKNOWN : seed[sid[v]];
}

/* The rounds of ghm_voxel.h by plain fills; returns the rounds run, *conflicts of the last,
 * each voxel's seed in sid[]. */
static int plain_rounds(const GhmiSide *s, uint8_t *seed, uint8_t *label, uint32_t *sid,
                        int max_rounds, size_t *conflicts)
{
    static uint8_t drop[CUBE];
    memset(drop, 0, sizeof drop);
    const int nn = s->hood.n;
    for (int r = 1;; r++) {
        plain_fill(s, seed, label, sid);
        size_t pairs = 0;
        for (uint32_t v = 0; v < CUBE; v++) {
            uint8_t l = label[v];
            if (s->ring[v] || s->barrier[v] || (l != GHM_VOXEL_INSIDE && l != GHM_VOXEL_OUTSIDE))
                continue;
            for (int k = 0; k < nn; k++) {
                uint32_t u = s->nbr[(size_t)nn * v + k];
                if (u == GHM_NOT_FOUND || s->ring[u] || s->barrier[u] || label[u] == l ||
                    (label[u] != GHM_VOXEL_INSIDE && label[u] != GHM_VOXEL_OUTSIDE))
                    continue;
                drop[sid[v]] = drop[sid[u]] = 1;
                pairs += u > v;
            }
        }
        *conflicts = pairs;
        if (pairs == 0 || r == max_rounds)
            return r;
        for (uint32_t v = 0; v < CUBE; v++)
            if (drop[v])
                seed[v] = NO_SEED;
    }
}

static void check_rounds_match(double holes, double seeded, double wrong, int max_rounds,
                               int threads)
{
    GhmiSide s;
    make_side(&s, holes, seeded, wrong);
    static uint8_t seed[CUBE], label[CUBE];
    static uint32_t sid[CUBE];
    memcpy(seed, s.seed, CUBE);
    memcpy(label, s.label, CUBE);
    size_t conflicts = 0;
    int want = plain_rounds(&s, seed, label, sid, max_rounds, &conflicts);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.max_rounds = max_rounds;
    int rounds = 0;
    ck_assert_int_eq(ghmi_voxel_fill(&s, &opt, threads, &rounds), GHM_OK);
    ck_assert_int_eq(rounds, want);
    ck_assert_uint_eq(s.conflicts, conflicts);
    ck_assert_int_eq(memcmp(s.seed, seed, CUBE), 0);
    ck_assert_int_eq(memcmp(s.label, label, CUBE), 0);
    for (uint32_t v = 0; v < CUBE; v++) /* the nearest seeds, not only their labels */
        ck_assert_uint_eq(s.barrier[v] ? GHM_NOT_FOUND : s.sid[v], sid[v]);
    ck_assert_int_gt(want, 2); /* the refill ran, more than once */
    free_side(&s);
}

START_TEST(test_rounds_one_thread) { check_rounds_match(0.05, 1.0, 0.02, 6, 1); }
END_TEST

START_TEST(test_rounds_threads) { check_rounds_match(0.05, 1.0, 0.02, 6, 4); }
END_TEST

/* Many wrong seeds: most of the volume is orphaned, too much for the passes (the whole fill
 * runs again), and still the same labels. */
START_TEST(test_rounds_mostly_orphaned) { check_rounds_match(0.3, 1.0, 0.45, 4, 2); }
END_TEST

/* The side on a device as a volume (labels.cu's fill kernel for volumes, which it takes for a
 * cloud given as rows, as a voxel edit's probe is: rows_lo is only looked at for that), filled
 * there as one cloud of the pair; its labels, seeds and nearest seeds brought back. */
static void device_fill(const GhmiSide *s, int max_rounds, uint8_t *label, uint8_t *seed,
                        uint32_t *sid, int *rounds, size_t *conflicts)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CUDA);
    const GhmVoxelOps *ops = ghmi_voxel_ops(ctx);
    ck_assert_ptr_nonnull(ops);
    const int nn = s->hood.n;
    uint32_t *nbr = malloc((size_t)nn * CUBE * sizeof *nbr), *mask = calloc(CUBE, sizeof *mask);
    static unsigned long long state[CUBE];
    ck_assert(nbr && mask);
    for (size_t v = 0; v < CUBE; v++) /* step-major, and the fill masks of classify */
        for (int k = 0; k < nn; k++) {
            uint32_t u = s->nbr[(size_t)nn * v + k];
            nbr[(size_t)k * CUBE + v] = u;
            mask[v] |= (uint32_t)(u != GHM_NOT_FOUND && !s->barrier[u]) << k;
        }
    GhmVoxelSideArgs a = {.K = CUBE, .radius = 1};
    GhmVoxelFillControl *ctl = NULL;
    GhmVoxelInfo *info = NULL, got;
    /* the fill's arrays, then the cloud's others (a side has them all; the fill reads none) */
    void **bufs[] = {(void **)&a.nbr,    (void **)&a.mask,   (void **)&a.barrier,
                     (void **)&a.ring,   (void **)&a.seed,   (void **)&a.label,
                     (void **)&a.drop,   (void **)&a.state,  (void **)&a.queue,
                     (void **)&ctl,      (void **)&info,     (void **)&a.keys,
                     (void **)&a.counts, (void **)&a.normals, (void **)&a.cross,
                     (void **)&a.plane};
    const size_t bytes[] = {sizeof *nbr * nn * CUBE, sizeof *mask * CUBE, CUBE, CUBE, CUBE,
                            CUBE, CUBE, sizeof *state * CUBE, sizeof *a.queue * CUBE,
                            sizeof *ctl, sizeof *info, 4 * CUBE, 4 * CUBE, 12 * CUBE, 4 * CUBE,
                            24 * CUBE};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        ck_assert_int_eq(ops->scratch(ctx, bytes[i], bufs[i]), GHM_OK);
    ck_assert_int_eq(ops->upload(ctx, a.nbr, nbr, bytes[0]), GHM_OK);
    ck_assert_int_eq(ops->upload(ctx, a.mask, mask, bytes[1]), GHM_OK);
    ck_assert_int_eq(ops->upload(ctx, a.barrier, s->barrier, CUBE), GHM_OK);
    ck_assert_int_eq(ops->upload(ctx, a.ring, s->ring, CUBE), GHM_OK);
    ck_assert_int_eq(ops->upload(ctx, a.seed, s->seed, CUBE), GHM_OK);
    ck_assert_int_eq(ops->upload(ctx, a.label, s->label, CUBE), GHM_OK);
    ck_assert_int_eq(ops->memset(ctx, a.drop, 0, CUBE), GHM_OK);
    ck_assert_int_eq(ops->memset(ctx, ctl, 0, sizeof *ctl), GHM_OK);
    ck_assert_int_eq(ops->memset(ctx, info, 0, sizeof *info), GHM_OK);
    a.rows_lo = (const int32_t *)a.mask;
    GhmVoxelPair pair = {.s = {a, {.radius = 1}}}; /* the other cloud empty */
    ck_assert_int_eq(ops->fill(ctx, max_rounds, &pair, ctl, info), GHM_OK);
    ck_assert_int_eq(ops->download(ctx, label, a.label, CUBE), GHM_OK);
    ck_assert_int_eq(ops->download(ctx, seed, a.seed, CUBE), GHM_OK);
    ck_assert_int_eq(ops->download(ctx, state, a.state, sizeof state), GHM_OK);
    ck_assert_int_eq(ops->download(ctx, &got, info, sizeof got), GHM_OK);
    ck_assert_int_eq(ghm_context_sync(ctx), GHM_OK);
    for (size_t v = 0; v < CUBE; v++)
        sid[v] = s->barrier[v] || state[v] == UINT64_MAX ? GHM_NOT_FOUND : (uint32_t)state[v];
    *rounds = (int)got.rounds[0];
    *conflicts = (size_t)got.conflicts[0];
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        ops->release(ctx, *bufs[i]);
    free(nbr);
    free(mask);
    ghm_context_free(&ctx);
}

/* The device's fill of the same cube: the same rounds, seeds, labels and nearest seeds. */
static void check_device_rounds_match(double holes, double seeded, double wrong, int max_rounds)
{
    GhmiSide s;
    make_side(&s, holes, seeded, wrong);
    static uint8_t seed[CUBE], label[CUBE], dseed[CUBE], dlabel[CUBE];
    static uint32_t sid[CUBE], dsid[CUBE];
    memcpy(seed, s.seed, CUBE);
    memcpy(label, s.label, CUBE);
    size_t conflicts = 0, dconflicts = 0;
    int want = plain_rounds(&s, seed, label, sid, max_rounds, &conflicts), rounds = 0;
    device_fill(&s, max_rounds, dlabel, dseed, dsid, &rounds, &dconflicts);
    ck_assert_int_eq(rounds, want);
    ck_assert_uint_eq(dconflicts, conflicts);
    ck_assert_int_eq(memcmp(dseed, seed, CUBE), 0);
    ck_assert_int_eq(memcmp(dlabel, label, CUBE), 0);
    ck_assert_int_eq(memcmp(dsid, sid, sizeof sid), 0);
    ck_assert_int_gt(want, 2);
    free_side(&s);
}

START_TEST(test_device_rounds)
{
    GHM_REQUIRE_CUDA();
    check_device_rounds_match(0.05, 1.0, 0.02, 6);
    check_device_rounds_match(0.3, 1.0, 0.45, 4);
}
END_TEST

static Suite *voxel_fill_suite(void)
{
    Suite *s = suite_create("voxel_fill");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_rounds_one_thread);
    tcase_add_test(core, test_rounds_threads);
    tcase_add_test(core, test_rounds_mostly_orphaned);
    suite_add_tcase(s, core);
    TCase *cuda = tcase_create("cuda");
    tcase_add_test(cuda, test_device_rounds);
    suite_add_tcase(s, cuda);
    return s;
}

int main(void) { return ghm_test_main(voxel_fill_suite()); }
