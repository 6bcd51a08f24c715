# timing lines patched into a copy of the tree (not committed code)
import sys
root = sys.argv[1]
p = root + '/vision/voxel/edit_probe.c'
s = open(p).read()
def rep(old, new):
    global s
    assert old in s, old
    s = s.replace(old, new)
rep("""    int ret = run(e, &e->alone, &e->none, NULL, pc, &alone);""", """    int ret = run(e, &e->alone, &e->none, NULL, pc, &alone);
    double ta = ghm_now(), tk = 0;""")
rep("""    if (ret == GHM_OK)
        ret = make_probe(""", """    tk = ghm_now();
    if (ret == GHM_OK)
        ret = make_probe(""")
rep("""    *probe_ms = 1e3 * (ghm_now() - t0);""", """    *probe_ms = 1e3 * (ghm_now() - t0);
    double tb = ghm_now();""")
rep("""        ret = run(e, &e->against, &e->probe, &e->rows, pc, out);
""", """        ret = run(e, &e->against, &e->probe, &e->rows, pc, out);
    double tc = ghm_now();
    if (ret == GHM_OK)
        fprintf(stderr, "PROF alone %.2f (gpu %.2f) check %.2f probe %.2f against %.2f (gpu total %.2f vox %.2f look %.2f cls %.2f fill %.2f) n=%zu\\n",
                1e3 * (ta - t0), alone->time.total_ms, 1e3 * (tk - ta), 1e3 * (tb - tk), 1e3 * (tc - tb), (*out)->time.total_ms,
                (*out)->time.voxelize_ms, (*out)->time.lookup_ms, (*out)->time.classify_ms, (*out)->time.fill_ms, e->probe.n);
""")
rep("""    tk = ghm_now();""", """    tk = ghm_now();
    if (ret == GHM_OK && !alone->side[1].normals_estimated) {
        int tt[4] = {1, 4, 16, ghm_context_threads(e->ctx)};
        for (int i = 0; i < 4; i++) {
            double best = 1e9;
            for (int r = 0; r < 5; r++) {
                GhmVoxelNormalsCheck nc;
                double x0 = ghm_now();
                ghmi_voxel_normals_check(&e->grid, &alone->side[1], tt[i], &nc);
                double x1 = 1e3 * (ghm_now() - x0);
                best = x1 < best ? x1 : best;
            }
            fprintf(stderr, "PROF check threads %d best %.3f ms (%zu voxels)\\n", tt[i], best, alone->side[1].voxels);
        }
    }
    tk = ghm_now();""")
open(p, 'w').write(s)
p = root + '/vision/voxel/edit.c'
s = open(p).read()
rep("""    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = ghm_dynmap_erase(e->set, c[i]->erase, c[i]->n_erase, NULL);
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = ghm_dynmap_insert(e->set, c[i]->insert, c[i]->n_insert, NULL, NULL);""", """    double q0 = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = ghm_dynmap_erase(e->set, c[i]->erase, c[i]->n_erase, NULL);
    double q1 = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = ghm_dynmap_insert(e->set, c[i]->insert, c[i]->n_insert, NULL, NULL);
    fprintf(stderr, "PROF apply erase %zu+%zu %.2f insert %zu+%zu %.2f\\n", c[0]->n_erase, c[1]->n_erase, 1e3*(q1-q0), c[0]->n_insert, c[1]->n_insert, 1e3*(ghm_now()-q1));""")
rep("""    if (ret == GHM_OK && op != GHM_VOXEL_EDIT_ADD)
        ret = ghm_dynmap_gc(e->set, NULL);""", """    double qg = ghm_now();
    if (ret == GHM_OK && op != GHM_VOXEL_EDIT_ADD)
        ret = ghm_dynmap_gc(e->set, NULL);
    fprintf(stderr, "PROF gc %.2f\\n", 1e3*(ghm_now()-qg));""")
rep("""    if (ret == GHM_OK && (ret = edit(e, op, r, &st)) < 0)""", """    double te = ghm_now();
    if (ret == GHM_OK && (ret = edit(e, op, r, &st)) < 0)""")
rep("""    st.classify_ms = 1e3 * (t1 - t0);""", """    fprintf(stderr, "PROF encloses %.2f edit %.2f\\n", 1e3 * (te - t1), 1e3 * (ghm_now() - te));
    st.classify_ms = 1e3 * (t1 - t0);""")
open(p, 'w').write(s)
