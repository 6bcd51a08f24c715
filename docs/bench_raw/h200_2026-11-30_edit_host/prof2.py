# finer timing lines for a voxel edit step, patched into a copy of the tree (not committed)
import sys
root = sys.argv[1]
def patch(path, reps):
    p = root + '/' + path
    s = open(p).read()
    for old, new in reps:
        assert old in s, (path, old)
        s = s.replace(old, new, 1)
    if '#include <stdio.h>' not in s:
        s = '#include <stdio.h>\n' + s
    open(p, 'w').write(s)
patch('vision/voxel/edit_probe.c', [
("""    int ret = run(e, &e->alone, &e->none, NULL, pc, &alone, upload_ms);""",
 """    int ret = run(e, &e->alone, &e->none, NULL, pc, &alone, upload_ms);
    double P1 = ghm_now();"""),
("""    if (ret == GHM_OK)
        ret = check_normals(""", """    double P2 = ghm_now();
    if (ret == GHM_OK)
        ret = check_normals("""),
("""    if (ret == GHM_OK)
        ret = make_probe(""", """    double P3 = ghm_now();
    if (ret == GHM_OK && !alone->side[1].normals_estimated && getenv("PROF_CHECK")) {
        int tt[5] = {1, 2, 4, 8, 16};
        for (int i = 0; i < 5; i++) {
            double best = 1e9;
            for (int q = 0; q < 5; q++) {
                GhmVoxelNormalsCheck nc;
                double x0 = ghm_now();
                ghmi_voxel_normals_check(&e->grid, &alone->side[1], tt[i], &nc);
                double x1 = 1e3 * (ghm_now() - x0);
                best = x1 < best ? x1 : best;
            }
            fprintf(stderr, "PROF2 check threads %d best %.3f ms (%zu voxels)\\n", tt[i], best, alone->side[1].voxels);
        }
        P3 = ghm_now();
    }
    if (ret == GHM_OK)
        ret = make_probe("""),
("""    *probe_ms = 1e3 * (ghm_now() - t0);""", """    *probe_ms = 1e3 * (ghm_now() - t0);
    double P4 = ghm_now();"""),
("""    if (ret == GHM_OK && !ghmi_voxel_rows_match(""", """    double P5 = ghm_now();
    if (ret == GHM_OK && !ghmi_voxel_rows_match("""),
("""    if (ret < 0 && why && why_size && !why[0]) /* a failure""", """    fprintf(stderr, "PROF2 alone %.3f (upload %.3f gpu %.3f) zero-check %.3f check %.3f probe %.3f against %.3f (gpu %.3f) match %.3f\\n",
            1e3*(P1-t0), *upload_ms, alone ? alone->time.total_ms : -1.0, 1e3*(P2-P1), 1e3*(P3-P2), 1e3*(P4-P3), 1e3*(P5-P4), *out ? (*out)->time.total_ms : -1.0, 1e3*(ghm_now()-P5));
    if (ret < 0 && why && why_size && !why[0]) /* a failure"""),
])
patch('vision/voxel/edit.c', [
("""    int ret = GHM_OK;
    if (on_device)
        ret = ghmi_edit_inside_erases(e, &v, &r->side[0], &inner);""", """    int ret = GHM_OK;
    double S0 = ghm_now();
    if (on_device)
        ret = ghmi_edit_inside_erases(e, &v, &r->side[0], &inner);"""),
("""    if (ret == GHM_OK)
        ret = erase_at_cloud(e, c, &erased);
    if (ret == GHM_OK)
        ret = changes_alloc(e, &ch, 0, c->voxels);
    if (ret == GHM_OK) {
        cut_at_cloud(c, erased, 1, &ch, st);
        ret = changes_apply(e, &ch, &inner);
    }""", """    double S1 = ghm_now();
    if (ret == GHM_OK)
        ret = erase_at_cloud(e, c, &erased);
    double S2 = ghm_now();
    if (ret == GHM_OK)
        ret = changes_alloc(e, &ch, 0, c->voxels);
    if (ret == GHM_OK) {
        cut_at_cloud(c, erased, 1, &ch, st);
        double S3 = ghm_now();
        ret = changes_apply(e, &ch, &inner);
        fprintf(stderr, "PROF2 subtract inside %.3f erase_at_cloud %.3f alloc+cut %.3f apply %.3f\\n", 1e3*(S1-S0), 1e3*(S2-S1), 1e3*(S3-S2), 1e3*(ghm_now()-S3));
    }"""),
("""    if (ret == GHM_OK && op != GHM_VOXEL_EDIT_ADD)
        ret = ghm_dynmap_gc(e->set, NULL); /* slabs the erases emptied go back */""",
 """    double G0 = ghm_now();
    if (ret == GHM_OK && op != GHM_VOXEL_EDIT_ADD)
        ret = ghm_dynmap_gc(e->set, NULL); /* slabs the erases emptied go back */
    fprintf(stderr, "PROF2 gc %.3f size %.3f\\n", 1e3*(ghm_now()-G0), 0.0);"""),
("""        if (!ghmi_edit_encloses(&e->grid, p, &r->side[1], st.radius)) {""",
 """        double E0 = ghm_now();
        int encl = ghmi_edit_encloses(&e->grid, p, &r->side[1], st.radius);
        fprintf(stderr, "PROF2 encloses %.3f\\n", 1e3*(ghm_now()-E0));
        if (!encl) {"""),
])
