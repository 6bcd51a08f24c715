#!/usr/bin/env bash
# old (HEAD at .dev/old-src.tar.xz) and new (working tree) side by side: CUDA tests, answers, bench match
set -u
t0=$(date +%s)
R=$PWD
mkdir -p /tmp/old && tar xJf .dev/old-src.tar.xz -C /tmp/old
sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn > $OUT/build_new.log 2>&1 &
bash /tmp/old/scripts/device_build.sh $R/.dev/debs /tmp/old /tmp/bo > $OUT/build_old.log 2>&1 &
wait
tail -1 $OUT/build_new.log; tail -1 $OUT/build_old.log
echo "builds $(( $(date +%s) - t0 )) s"
cd /tmp/bn && timeout 200 ctest -R 'geohash_cuda|match\.|context\.cuda|geohash\.pairs|cli\.|edges' -LE slow -j8 --output-on-failure > $OUT/ctest.log 2>&1
echo "ctest rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head -20
cd $R
python3 - > $OUT/answers.txt 2>&1 <<'PY'
import json, subprocess, os
diff = same = 0
R = os.getcwd()
for tier in ("pairs", "hard"):
    d = R + "/data/" + tier
    for p in json.load(open(d + "/truth.json"))["pairs"]:
      for be in ("cuda", "cpu"):
        out = {}
        for s, b in (("old", "/tmp/bo"), ("new", "/tmp/bn")):
            r = subprocess.run([b + "/geohash-match", "--backend", be, "--json",
                                os.path.join(d, p["reference"]), os.path.join(d, p["query"])],
                               capture_output=True, text=True)
            j = json.loads(r.stdout) if r.stdout.strip() else {"rc": r.returncode, "err": r.stderr}
            j.pop("timings_ms", None)
            out[s] = (r.returncode, json.dumps(j, sort_keys=True))
        ok = out["old"] == out["new"]
        same += ok; diff += not ok
        if not ok: print("DIFFERENT", tier, p["id"], be, "\n  old:", out["old"][1], "\n  new:", out["new"][1])
for ref in ("box_in_scene.png", "butterfly.jpg"):
    outs = {}
    for s, b in (("old", "/tmp/bo"), ("new", "/tmp/bn")):
        r = subprocess.run([b + "/geohash-match", "--backend", "cuda", "--json",
                            R + "/data/images/" + ref, R + "/data/images/"], capture_output=True, text=True)
        lines = []
        for l in r.stdout.splitlines():
            j = json.loads(l); j.pop("timings_ms", None); lines.append(json.dumps(j, sort_keys=True))
        outs[s] = lines
    for a, b in zip(outs["old"], outs["new"]):
        ok = a == b
        same += ok; diff += not ok
        if not ok: print("DIFFERENT", ref, "\n  old:", a, "\n  new:", b)
    print(ref, "many queries:", len(outs["new"]), "lines, found", sum('"found": true' in l for l in outs["new"]))
print("answers: %d same, %d different" % (same, diff))
PY
tail -3 $OUT/answers.txt; grep -c DIFF $OUT/answers.txt
echo "answers $(( $(date +%s) - t0 )) s"
for round in 1 2 3 4; do for s in old new; do b=/tmp/bo; [ $s = new ] && b=/tmp/bn
  echo "== round $round $s" >> $OUT/bench.txt
  $b/geohash-match bench match --backend cuda --threads 16 --reps 40 --no-baseline >> $OUT/bench.txt 2>&1
done; done
grep -E "==|total" $OUT/bench.txt | sed -E 's/  +/ /g' | cut -c1-150
echo "bench $(( $(date +%s) - t0 )) s"
cd /tmp/bn
GHM_TEST_SMALL=1 CK_FORK=no timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_geohash_cuda > $OUT/memcheck.txt 2>&1
echo "memcheck rc $?: $(grep 'ERROR SUMMARY' $OUT/memcheck.txt) $(grep -E 'Checks' $OUT/memcheck.txt)"
GHM_TEST_SMALL=1 CK_FORK=no timeout 150 compute-sanitizer --tool racecheck ./check_geohash_cuda > $OUT/racecheck.txt 2>&1
echo "racecheck rc $?: $(grep 'ERROR SUMMARY\|RACECHECK SUMMARY' $OUT/racecheck.txt) $(grep -E 'Checks' $OUT/racecheck.txt)"
echo "all $(( $(date +%s) - t0 )) s"
