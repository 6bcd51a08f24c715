# Run in a callN folder: every bench dynmap row of each build (o, n, y: dyn_<build>_<k>.json),
# the rounds' range, and each build's best against o's best.
import collections, glob, json, sys
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob('dyn_*.json')):
    v = f.split('_')[1]
    d = json.load(open(f))
    for r in d['buckets']:
        k = ('b', r['variant'], r['buckets'])
        for m in ('insert_ms', 'find50_ms', 'erase_ms', 'fill_ms', 'gc_ms', 'find25_ms', 'find75_ms'):
            rows[k + (m,)][v].append(r[m])
    for r in d['sizes']:
        k = ('s', r['variant'], r['item_words'])
        for m in ('insert_ms', 'find50_ms', 'fill_ms'):
            rows[k + (m,)][v].append(r[m])
only = sys.argv[1:]
for k in sorted(rows):
    if only and k[-1] not in only:
        continue
    o = rows[k].get('o', [])
    out = [str(k)]
    for v in sorted(rows[k]):
        a = rows[k][v]
        rel = " %+.1f%%" % (100 * (min(a) / min(o) - 1)) if o and v != 'o' else ""
        out.append("%s %.3f-%.3f%s" % (v, min(a), max(a), rel))
    print('  '.join(out))
