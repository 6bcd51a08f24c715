#!/usr/bin/env bash
set -u
t0=$(date +%s)
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn > $OUT/build.log 2>&1; echo "build rc $? $(( $(date +%s) - t0 )) s"
GHM_PROF=1 /tmp/bn/geohash-match bench match --backend cuda --threads 16 --reps 30 --no-baseline > $OUT/bench.txt 2> $OUT/prof.txt
sed -E 's/  +/ /g' $OUT/bench.txt | cut -c1-150
python3 - <<'PY'
import statistics, collections, os
d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(os.environ["OUT"] + "/prof.txt"):
    if "PROF" not in l[:6]: continue
    t = l.split()
    for i in range(2, len(t) - 1, 2):
        d[t[0] + t[1]][t[i]].append(float(t[i + 1]))
for k, v in d.items():
    print(k, " ".join("%s %.3f" % (n, statistics.median(x)) for n, x in v.items() if n not in ("nb","m","n","nr","nv","na")), " ".join("%s %d" % (n, statistics.median(x)) for n, x in v.items() if n in ("nb","m","n","nr","nv","na")))
PY
for k in 0 2; do
GHM_PROFILE_CASE=$k timeout 150 ncu --profile-from-start off --metrics gpu__time_duration.sum --csv /tmp/bn/geohash-match bench match --backend cuda --threads 16 --reps 3 --no-baseline > $OUT/ncu_case$k.csv 2>$OUT/ncu$k.err
echo "ncu $k rc $? $(( $(date +%s) - t0 )) s"
done
python3 - <<'PY'
import csv, os, collections
for k in (0, 2):
    rows = [r for r in csv.reader(open(os.environ["OUT"] + "/ncu_case%d.csv" % k)) if len(r) > 10]
    if not rows: print("no rows", k); continue
    h = rows[0]; rows = rows[1:]
    ki = h.index("Kernel Name"); vi = h.index("Metric Value"); si = h.index("Stream") if "Stream" in h else None
    tot = 0; agg = collections.defaultdict(lambda: [0, 0.0])
    for r in rows:
        try: v = float(r[vi].replace(",", ""))
        except: continue
        name = r[ki][:60]; agg[name][0] += 1; agg[name][1] += v; tot += v
    print("case", k, "kernels", len(rows), "sum gpu time us %.1f" % (tot / 1000))
    for n, (c, v) in sorted(agg.items(), key=lambda x: -x[1][1])[:25]:
        print("  %6.1f us  x%-3d %s" % (v / 1000, c, n))
PY
echo "all $(( $(date +%s) - t0 )) s"
