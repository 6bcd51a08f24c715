# timing lines in the voxel edit's set part (intersect, add, erase/insert, gc)
import sys
root = sys.argv[1]
p = root + '/vision/voxel/edit.c'
s = open(p).read()
def rep(old, new):
    global s
    assert old in s, old
    s = s.replace(old, new, 1)
rep('#include "why_internal.h"', '#include "why_internal.h"\n#define T() ghm_now()\n#define P(name, t) fprintf(stderr, "PROF2 %s %.2f\\n", name, 1e3 * (ghm_now() - (t)))')
rep("""    int ret = items ? ghm_dynmap_items(e->set, items, NULL, n, &n) : GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = find_cloud(e, c, &found);""", """    double t = T();
    int ret = items ? ghm_dynmap_items(e->set, items, NULL, n, &n) : GHM_ERR_NOMEM;
    P("items", t); t = T();
    if (ret == GHM_OK)
        ret = find_cloud(e, c, &found);
    P("find_cloud", t); t = T();""")
rep("""        cut_at_cloud(c, found, 0, &ch, st);
        ret = changes_apply(e, &ch);""", """        cut_at_cloud(c, found, 0, &ch, st);
        P("changes", t); t = T();
        ret = changes_apply(e, &ch);
        P("apply", t);""")
rep("""    int ret = ghm_dynmap_erase(e->set, c->erase, c->n_erase, NULL);
    if (ret == GHM_OK)
        ret = ghm_dynmap_insert(e->set, c->insert, c->n_insert, NULL, NULL);""", """    double t = T();
    int ret = ghm_dynmap_erase(e->set, c->erase, c->n_erase, NULL);
    fprintf(stderr, "PROF2 erase %zu %.2f\\n", c->n_erase, 1e3 * (ghm_now() - t)); t = T();
    if (ret == GHM_OK)
        ret = ghm_dynmap_insert(e->set, c->insert, c->n_insert, NULL, NULL);
    fprintf(stderr, "PROF2 insert %zu %.2f\\n", c->n_insert, 1e3 * (ghm_now() - t));""")
rep("""    if (ret == GHM_OK && op != GHM_VOXEL_EDIT_ADD)
        ret = ghm_dynmap_gc(e->set, NULL); /* slabs the erases emptied go back */""", """    double t = T();
    if (ret == GHM_OK && op != GHM_VOXEL_EDIT_ADD)
        ret = ghm_dynmap_gc(e->set, NULL); /* slabs the erases emptied go back */
    P("gc", t);""")
rep("""    if (ret == GHM_OK)
        ret = find_items(e, inside, ni, EDIT_BUF_IN_FOUND, &in_found);""", """    double t = T();
    if (ret == GHM_OK)
        ret = find_items(e, inside, ni, EDIT_BUF_IN_FOUND, &in_found);
    P("add find inside", t);""")
open(p, 'w').write(s)
