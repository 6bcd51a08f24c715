/* check_dist_map_ranks.c - the ranked GhmDistMap with processes as its ranks: this program run
 * twice more (GHM_TEST_RANK set), the two talking over a socket pair as GhmDistRanks; on the
 * CPU (host messages) and on CUDA, where the two map each other's memory (CUDA IPC windows) on
 * two GPUs, or both on one, probing keys and writing answers where they lie in the map's arrays.
 * Every answer is the single map's; one rank's error is both ranks'; a failed build leaves both
 * parts empty. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dist_map_cases.h"
#include "ghm_dist_map.h"
#include "test_support.h"

/* Two ranks' host messages over a socket pair (non-blocking): each sends its bytes while it
 * reads the other's (poll), so that large messages cannot block both writers. 0, or -1. */
static int swap_bytes(int fd, const void *out, size_t out_n, void *in, size_t in_n)
{
    const char *o = out;
    char *i = in;
    while (out_n || in_n) {
        struct pollfd p = {fd, (short)((in_n ? POLLIN : 0) | (out_n ? POLLOUT : 0)), 0};
        if (poll(&p, 1, 60000) <= 0)
            return -1;
        if ((p.revents & POLLOUT) && out_n) {
            ssize_t k = write(fd, o, out_n);
            if (k < 0 && errno != EINTR && errno != EAGAIN)
                return -1;
            o += k > 0 ? k : 0;
            out_n -= k > 0 ? (size_t)k : 0;
        }
        if ((p.revents & (POLLIN | POLLHUP)) && in_n) {
            ssize_t k = read(fd, i, in_n);
            if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
                return -1;
            i += k > 0 ? k : 0;
            in_n -= k > 0 ? (size_t)k : 0;
        }
    }
    return 0;
}

typedef struct Link {
    int rank, fd;
} Link;

static int link_all_to_all(void *user, const uint64_t *send, uint64_t *recv)
{
    Link *l = user;
    recv[l->rank] = send[l->rank];
    return swap_bytes(l->fd, &send[1 - l->rank], 8, &recv[1 - l->rank], 8);
}

static int link_all_to_all_v(void *user, const uint32_t *send, const size_t *send_n,
                             const size_t *send_at, uint32_t *recv, const size_t *recv_n,
                             const size_t *recv_at)
{
    Link *l = user;
    int me = l->rank, peer = 1 - me;
    uint64_t mine = send_n[peer], theirs = 0;
    if (send_n[me] != recv_n[me] || swap_bytes(l->fd, &mine, 8, &theirs, 8) < 0 ||
        theirs != recv_n[peer])
        return -1;
    if (send_n[me])
        memcpy(recv + recv_at[me], send + send_at[me], send_n[me] * 4);
    return swap_bytes(l->fd, send + send_at[peer], send_n[peer] * 4, recv + recv_at[peer],
                      recv_n[peer] * 4);
}

static int link_broadcast(void *user, void *buf, size_t bytes, int root)
{
    Link *l = user;
    return l->rank == root ? swap_bytes(l->fd, buf, bytes, NULL, 0)
                           : swap_bytes(l->fd, NULL, 0, buf, bytes);
}

#define CHILD_CHECK(cond)                                                                    \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "rank %d: line %d: %s\n", rank, __LINE__, #cond);                \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* Where a child's find takes its keys and puts its answers. */
enum Arrays {
    HOST,       /* host memory */
    CONTEXT,    /* ghm_buffer_alloc */
    MAP,        /* ghm_dist_map_alloc_array: probed and answered in place where ranks map them */
    MAP_MIXED,  /* rank 0's keys and rank 1's answers in the map's arrays, the rest CONTEXT */
    ARRAY_KINDS
};

/* Finds nq queries from arrays of the given kind on this rank and compares with want. */
static int child_find(GhmContext *ctx, GhmDistMap *dm, const uint32_t *q, size_t nq,
                      const uint32_t *want, enum Arrays kind, int rank)
{
    uint32_t *got = malloc((nq + 1) * 4);
    void *dq = NULL, *dout = NULL;
    int map_keys = kind == MAP || (kind == MAP_MIXED && rank == 0);
    int map_out = kind == MAP || (kind == MAP_MIXED && rank == 1);
    int ret = got ? GHM_OK : GHM_ERR_NOMEM;
    if (ret == GHM_OK && kind != HOST)
        ret = map_keys ? ghm_dist_map_alloc_array(dm, 0, nq * 4, &dq)
                       : ghm_buffer_alloc(ctx, nq * 4, &dq);
    if (ret == GHM_OK && kind != HOST)
        ret = map_out ? ghm_dist_map_alloc_array(dm, 0, nq * 4, &dout)
                      : ghm_buffer_alloc(ctx, nq * 4, &dout);
    if (ret == GHM_OK && kind != HOST)
        ret = ghm_buffer_upload(ctx, dq, q, nq * 4);
    const uint32_t *keys = kind == HOST ? q : dq;
    uint32_t *out = kind == HOST ? got : dout;
    if (ret == GHM_OK)
        ret = ghm_dist_map_find(dm, &keys, &nq, &out);
    if (ret == GHM_OK && kind != HOST)
        ret = ghm_buffer_download(ctx, got, dout, nq * 4);
    for (size_t i = 0; ret == GHM_OK && i < nq; i++)
        if (got[i] != want[i])
            ret = -1000;
    if (map_keys) /* every rank frees its map arrays together */
        ghm_dist_map_free_array(dm, 0, &dq);
    if (map_out)
        ghm_dist_map_free_array(dm, 0, &dout);
    ghm_buffer_free(ctx, &dq);
    ghm_buffer_free(ctx, &dout);
    free(got);
    return ret;
}

/* The map's arrays: a bad call on one rank fails on both; past 16 at once an IPC map refuses
 * (on both ranks), other maps give as many as asked; every array freed, the map still finds. */
static void child_arrays(GhmDistMap *dm, int rank, int cuda)
{
    void *a[17] = {NULL}, *none = NULL;
    CHILD_CHECK(ghm_dist_map_alloc_array(dm, rank, 64, &none) == GHM_ERR_INVALID && !none);
    for (int i = 0; i < 17; i++)
        CHILD_CHECK(ghm_dist_map_alloc_array(dm, 0, 64, &a[i]) ==
                    (cuda && i == 16 ? GHM_ERR_TOO_LARGE : GHM_OK));
    for (int i = 16; i >= 0; i--)
        ghm_dist_map_free_array(dm, 0, &a[i]);
    CHILD_CHECK(a[0] == NULL && a[15] == NULL);
}

/* A rank of check_processes (this program run again, GHM_TEST_RANK set): the calls of
 * check_dist_map.c's rank_main, on CUDA through the windows, with finds of growing size (the
 * windows grow and are mapped again) from host, context and map arrays (each kind with each
 * size). Exit 0 when every answer was right. */
static int rank_child(int rank, int fd, GhmBackendKind backend)
{
    Link link = {rank, fd};
    CHILD_CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
    GhmDistRanks dr = {rank, 2, &link, link_all_to_all, link_all_to_all_v, link_broadcast};
    GhmContextOptions co = ghm_context_defaults();
    int cuda = backend == GHM_BACKEND_CUDA;
    co.backend = backend;
    co.device = cuda ? rank % ghm_cuda_device_count() : 0;
    co.seed = 1000 + (uint64_t)rank;
    GhmContext *ctx = NULL, *cpu = NULL;
    CHILD_CHECK(ghm_context_create(&co, &ctx) == GHM_OK);
    co.backend = GHM_BACKEND_CPU;
    CHILD_CHECK(ghm_context_create(&co, &cpu) == GHM_OK);
    enum { COPIES = 5 };
    Pairs *c = malloc(sizeof *c);
    uint32_t *queries = malloc(COPIES * 2 * N * 4), *want = malloc(COPIES * 2 * N * 4);
    CHILD_CHECK(c && queries && want);
    ghm_test_fill_pairs(c, 13);
    for (int k = 0; k < COPIES; k++)
        memcpy(queries + k * 2 * N, c->queries, 2 * N * 4);
    size_t size = 0;
    CHILD_CHECK(ghm_test_map_answers(cpu, c->keys, c->values, N, queries, COPIES * 2 * N, want, &size) ==
                GHM_OK);
    GhmMapOptions mo = ghm_map_defaults();
    GhmDistMap *dm = NULL;
    CHILD_CHECK(ghm_dist_map_create_ranked(ctx, &dr, &mo, &dm) == GHM_OK);
    CHILD_CHECK(ghm_dist_map_uses_ipc(dm) == cuda);
    size_t first[2], len[2];
    ghm_test_cut(N, 2, first, len);
    const uint32_t *k = c->keys + first[rank], *v = c->values + first[rank];
    CHILD_CHECK(ghm_dist_map_build(dm, &k, &v, &len[rank]) == GHM_OK);
    uint64_t mine[2], parts[2];
    mine[0] = mine[1] = ghm_dist_map_part_size(dm, 0);
    CHILD_CHECK(link_all_to_all(&link, mine, parts) == 0 && parts[0] + parts[1] == size);
    const size_t counts[] = {2 * N, 2 * N * COPIES, 7, 2 * N * COPIES, 2 * N, 2 * N * COPIES};
    for (size_t t = 0; t < sizeof counts / sizeof counts[0] * ARRAY_KINDS; t++) {
        size_t qfirst[2], qlen[2], count = counts[t % (sizeof counts / sizeof counts[0])];
        ghm_test_cut(count, 2, qfirst, qlen);
        CHILD_CHECK(child_find(ctx, dm, queries + qfirst[rank], qlen[rank], want + qfirst[rank],
                               (enum Arrays)(t % ARRAY_KINDS), rank) == GHM_OK);
    }
    child_arrays(dm, rank, cuda);
    uint32_t answer, *out = &answer;
    const uint32_t *bad = rank == 1 ? NULL : queries; /* one rank's error is both ranks' */
    size_t one = 1;
    CHILD_CHECK(ghm_dist_map_find(dm, &bad, &one, &out) == GHM_ERR_INVALID);
    uint32_t both[2] = {queries[0], queries[1]}, *answers_over_keys = rank == 0 ? both : &answer;
    const uint32_t *keys_both = both;
    CHILD_CHECK(ghm_dist_map_find(dm, &keys_both, &one, &answers_over_keys) == GHM_ERR_INVALID);
    CHILD_CHECK(child_find(ctx, dm, queries, 2 * N, want, MAP, rank) == GHM_OK);
    ghm_dist_map_free(&dm);
    mo.layout = GHM_MAP_THESIS; /* as rank_main: a build that fails in some part */
    mo.hash_functions = 2;
    mo.load_factor = 0.99;
    mo.max_rebuilds = 0;
    CHILD_CHECK(ghm_dist_map_create_ranked(ctx, &dr, &mo, &dm) == GHM_OK);
    CHILD_CHECK(ghm_dist_map_build(dm, &k, &k, &len[rank]) == GHM_ERR_BUILD_FAILED);
    CHILD_CHECK(ghm_dist_map_size(dm) == 0);
    ghm_dist_map_free(&dm);
    free(want);
    free(queries);
    free(c);
    ghm_context_free(&cpu);
    ghm_context_free(&ctx);
    return 0;
}

/* Two processes of this program (run afresh, so that each starts its own CUDA) as the two
 * ranks of a map: on the CPU (the host messages of the test's socket pair), and on CUDA, on
 * two GPUs where there are two, else both on one. */
static void check_processes(GhmBackendKind backend)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        pid[r] = fork();
        ck_assert_int_ge(pid[r], 0);
        if (pid[r] == 0) {
            char env[64];
            close(sv[1 - r]);
            snprintf(env, sizeof env, "%d,%d,%d", r, sv[r], (int)backend);
            setenv("GHM_TEST_RANK", env, 1);
            execl("/proc/self/exe", "check_dist_map_ranks", (char *)NULL);
            _exit(127);
        }
    }
    close(sv[0]);
    close(sv[1]);
    for (int r = 0; r < 2; r++) {
        int status = 0;
        ck_assert_int_eq(waitpid(pid[r], &status, 0), pid[r]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rank %d: status %d", r,
                      status);
    }
}

START_TEST(test_ranked_cpu_processes)
{
    check_processes(GHM_BACKEND_CPU);
}
END_TEST

START_TEST(test_ranked_cuda_processes)
{
    GHM_REQUIRE_CUDA();
    check_processes(GHM_BACKEND_CUDA);
}
END_TEST

static Suite *dist_map_ranks_suite(void)
{
    Suite *s = suite_create("dist_map_ranks");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, test_ranked_cpu_processes);
    suite_add_tcase(s, core);
    TCase *cuda = tcase_create("cuda");
    tcase_set_timeout(cuda, 120);
    tcase_add_test(cuda, test_ranked_cuda_processes);
    suite_add_tcase(s, cuda);
    return s;
}

int main(void)
{
    int rank, fd, backend;
    const char *child = getenv("GHM_TEST_RANK");
    if (child && sscanf(child, "%d,%d,%d", &rank, &fd, &backend) == 3)
        return rank_child(rank, fd, (GhmBackendKind)backend);
    return ghm_test_main(dist_map_ranks_suite());
}
