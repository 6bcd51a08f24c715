# Inserts host timers (GHM_PROF=1) into the working tree; git diff gives the patch.
def ins(path, pairs):
    s = open(path).read()
    for anchor, new, where in pairs:
        assert s.count(anchor) == 1, (path, anchor, s.count(anchor))
        s = s.replace(anchor, new + anchor if where == 'before' else anchor + new)
    open(path, 'w').write(s)
ins('vision/voxel/voxel_internal.h', [('#include "ghm_voxel.h"\n', '''#include <stdio.h>
#include <stdlib.h>
static inline void ghmi_prof(const char *what)
{
    static __thread double last;
    static int on = -1;
    if (on < 0)
        on = getenv("GHM_PROF") != NULL;
    if (!on)
        return;
    double t = ghm_now();
    if (what)
        fprintf(stderr, "PROF %-24s %7.3f ms\\n", what, 1e3 * (t - last));
    last = t;
}
''', 'after')])
ins('vision/voxel/edit_probe.c', [
 ('    int ret = run(e, &e->alone, &e->none, NULL, pc, GHMI_VOXEL_NO_LABELS, &alone, upload_ms);\n', '    ghmi_prof(NULL);\n', 'before'),
 ('    int ret = run(e, &e->alone, &e->none, NULL, pc, GHMI_VOXEL_NO_LABELS, &alone, upload_ms);\n', '    ghmi_prof("alone run");\n', 'after'),
 ('    *probe_ms = 1e3 * (ghm_now() - t0);\n', '    ghmi_prof("make_probe");\n', 'after'),
 ('        ret = check_and_run(e, &alone->side[1], pc, probe_ret, out, why, why_size);\n', '    ghmi_prof("check_and_run");\n', 'after'),
 ('    if (ret < 0 && why && why_size && !why[0]) /* a failure that said nothing of its own */\n', '    ghmi_prof("rows_match");\n', 'before'),
 ('        ret = ghmi_voxel_sweep_rebind(*sw, a, a_rows, b, flags);\n', '    ghmi_prof(" rebind");\n', 'after'),
 ('    NormalsCheck *n = arg;\n', '    ghmi_prof(NULL);\n', 'after'),
 ('    n->ret = check_normals(n->grid, n->c, n->threads, n->why, n->why_size);\n', '    ghmi_prof("check_normals (thread)");\n', 'after'),
 ('    if (beside)\n        ghmi_edit_worker_wait(e->worker);\n', '    ghmi_prof("against run");\n', 'before'),
])
ins('vision/voxel/voxel_device.c', [
 ('    int ret = ops->timer_mark(ctx, d->timer, 0);\n', '    ghmi_prof(NULL);\n', 'after'),
 ('        ret = voxel_table(d, &g, &pose, K, first, &runs);\n', '    ghmi_prof(" dev voxel_table");\n', 'after'),
 ('        ret = size_arrays(d, &L, K, first);\n', '    ghmi_prof(" dev size_arrays");\n', 'after'),
 ('        ret = widen_first ? download_histograms(d) : label_and_download(d, &L, &g, opt, 1);\n', '    ghmi_prof(" dev launches");\n', 'before'),
 ('        ret = widen_first ? download_histograms(d) : label_and_download(d, &L, &g, opt, 1);\n', '    ghmi_prof(" dev label_and_download");\n', 'after'),
 ('        ret = hand_over(d, &L, r);\n', '    ghmi_prof(" dev sparse+hand_over");\n', 'after'),
])
ins('vision/voxel/edit.c', [
 ('        ret = ghmi_edit_subtract_cuts(e, &v, &r->side[0], c->voxels, &ch);\n', '        ghmi_prof("sub subtract_cuts");\n', 'after'),
 ('        ret = ghmi_edit_add_changes(e, &v, &r->side[0], c->voxels, &ch);\n', '        ghmi_prof("add add_changes");\n', 'after'),
 ('        ret = ghmi_edit_outside_erases(e, &v, &outer);\n', '        ghmi_prof("int outside_erases");\n', 'after'),
 ('            ret = ghmi_edit_cloud_cuts(e, &v, c->voxels, 0, &ch);\n', '        ghmi_prof("int cloud_cuts");\n', 'after'),
 ('    for (int i = 0; i < batches && ret == GHM_OK; i++)\n        ret = ghm_dynmap_insert(', '    ghmi_prof("apply erases");\n', 'before'),
 ('        ret = ghm_dynmap_insert(e->set, c[i]->insert, c[i]->n_insert, NULL, NULL);\n', '    ghmi_prof("apply inserts");\n', 'after'),
 ('        ret = ghm_dynmap_gc(e->set, NULL); /* slabs the erases emptied go back */\n', '    ghmi_prof("gc");\n', 'after'),
 ('    int ret = ghmi_edit_classify(e, pc, &r, &st.probe_ms, &st.upload_ms, why, why_size);\n', '    ghmi_prof(NULL);\n', 'after'),
 ('    if (ret == GHM_OK && (ret = edit(e, op, r, &st)) < 0)\n', '    ghmi_prof("step stats+encloses");\n', 'before'),
])

ins('vision/voxel/edit_device.c', [
 ('    int ret = counts ? ghm_dynmap_erase(e->set, keys, K + more, erased) : GHM_ERR_NOMEM;\n', '    ghmi_prof("  cut bufs");\n', 'before'),
 ('    int ret = counts ? ghm_dynmap_erase(e->set, keys, K + more, erased) : GHM_ERR_NOMEM;\n', '    ghmi_prof("  cut erase");\n', 'after'),
 ('        ret = read_counts(e, counts, room, got);\n    if (ret == GHM_OK)\n        *ch = (Changes){.insert', '    ghmi_prof("  cut kernel");\n', 'before'),
 ('    int ret = cloud_keys(e, v, K, p->label_count[GHM_VOXEL_INSIDE], keys);\n', '    ghmi_prof("  cloud keys");\n', 'after'),
])

ins('vision/voxel/normals_check.c', [
 ('    int ret = coarse_side(g, s, s->radius, threads, &cg, &cs);\n', '    ghmi_prof(NULL);\n', 'before'),
 ('    int ret = coarse_side(g, s, s->radius, threads, &cg, &cs);\n', '    ghmi_prof("  nc coarse_side");\n', 'after'),
 ('        judge(&cg, &cs, threads, out);\n', '    ghmi_prof("  nc judge");\n', 'after'),
 ('        ret = ghmi_cpu_sort_pairs(threads, cell, voxel, n);\n', '        ghmi_prof("  nc coords");\n', 'before'),
 ('        ret = ghmi_cpu_sort_pairs(threads, cell, voxel, n);\n', '        ghmi_prof("  nc sort");\n', 'after'),
])
ins('vision/voxel/edit_device.c', [
 ('    int ret = counts ? ghm_dynmap_items(e->set, items, NULL, n, &n) : GHM_ERR_NOMEM;\n', '    ghmi_prof("  out bufs");\n', 'before'),
 ('    int ret = counts ? ghm_dynmap_items(e->set, items, NULL, n, &n) : GHM_ERR_NOMEM;\n', '    ghmi_prof("  out items");\n', 'after'),
])
