#!/usr/bin/env bash
# s44 call 6: where a 10M-point sweep's time goes between steps (--gpus 1 / 2): step times'
# sum, max, min; --quiet; CPU time of the process.
set -u
export PATH=/usr/local/cuda/bin:$PATH
B=/tmp/bn/geohash-match
[ -x $B ] || { sed -i "s/ -Werror//" CMakeLists.txt; bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >/dev/null 2>&1; }
[ -f /tmp/a10m.ply ] || python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 10000000 /tmp/a10m.ply /tmp/b10m.ply
[ -f /tmp/a160k.ply ] || python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/a160k.ply /tmp/b160k.ply
cat > /tmp/tm.py <<'PY'
import json, resource, subprocess, sys, time
out = sys.argv[1]
t = time.time()
r = subprocess.run(sys.argv[2:], stdout=open(out, "w"), stderr=subprocess.PIPE)
wall = time.time() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
steps = []
for l in open(out):
    try:
        steps.append(json.loads(l)["timings_ms"]["step"])
    except Exception:
        pass
s = f"rc {r.returncode} wall {wall:.3f} s user {ru.ru_utime:.2f} sys {ru.ru_stime:.2f}"
if steps:
    s += f" steps {len(steps)} sum {sum(steps):.0f} ms max {max(steps):.1f} min {min(steps):.1f}"
print(s, r.stderr.decode()[:300])
PY
for g in 1 2; do
  for args in "--json --sweep 100" "--quiet --sweep 100" "--json --sweep 2" "--json --sweep 100 --verbose"; do
    echo "10M grid 1024 $args --gpus $g: $(python3 /tmp/tm.py /tmp/o $B voxel --backend cuda --grid 1024 --rotate-b 0,0,30 $args --gpus $g /tmp/a10m.ply /tmp/b10m.ply)"
  done
  echo "160k grid 256 --json --sweep 1000 --gpus $g: $(python3 /tmp/tm.py /tmp/o $B voxel --backend cuda --grid 256 --rotate-b 0,0,30 --json --sweep 1000 --gpus $g /tmp/a160k.ply /tmp/b160k.ply)"
done
