import sys
root = sys.argv[1]
p = root + '/vision/voxel/edit_probe.c'
s = open(p).read()
s = s.replace("""    int ret = run(e, &e->alone, &e->none, pc, &alone);""", """    int ret = run(e, &e->alone, &e->none, pc, &alone);
    double ta = ghm_now();""")
s = s.replace("""        ret = make_probe(e, &alone->side[1], alone->side[1].radius - 1, why, why_size);
    *probe_ms""", """        ret = make_probe(e, &alone->side[1], alone->side[1].radius - 1, why, why_size);
    double tb = ghm_now();
    *probe_ms""")
s = s.replace("""        ret = run(e, &e->against, &e->probe, pc, out);
""", """        ret = run(e, &e->against, &e->probe, pc, out);
    double tc = ghm_now();
    if (ret == GHM_OK)
        fprintf(stderr, "PROF alone %.2f (gpu %.2f) checks+probe %.2f against %.2f (gpu total %.2f vox %.2f look %.2f cls %.2f fill %.2f) n=%zu\\n",
                1e3 * (ta - t0), alone->time.total_ms, 1e3 * (tb - ta), 1e3 * (tc - tb), (*out)->time.total_ms,
                (*out)->time.voxelize_ms, (*out)->time.lookup_ms, (*out)->time.classify_ms, (*out)->time.fill_ms, e->probe.n);
""")
assert s.count("PROF") == 1
open(p, 'w').write(s)
p = root + '/vision/voxel/edit.c'
s = open(p).read()
s = s.replace("""    if (ret == GHM_OK && (ret = edit(e, op, r, &st)) < 0)""", """    double te = ghm_now();
    if (ret == GHM_OK && (ret = edit(e, op, r, &st)) < 0)""")
s = s.replace("""    st.classify_ms = 1e3 * (t1 - t0);""", """    fprintf(stderr, "PROF encloses %.2f edit %.2f\\n", 1e3 * (te - t1), 1e3 * (ghm_now() - te));
    st.classify_ms = 1e3 * (t1 - t0);""")
assert s.count("PROF") == 1
open(p, 'w').write(s)
