#!/usr/bin/env bash
# issue 10 item 4 (host waits of an image query): old main 9f2ef71 and the waits branch built
# side by side; the new build's CUDA match suites; both builds' answers on data/pairs and
# data/hard (JSON without timings, diffed); bench match old/new in turns.
set -u
t0=$(date +%s)
R=$PWD
mkdir -p /tmp/old /tmp/new
tar xJf .dev/waits/old.tar.xz -C /tmp/old; tar xJf .dev/waits/new.tar.xz -C /tmp/new
sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt /tmp/new/CMakeLists.txt
bash /tmp/new/scripts/device_build.sh $R/.dev/debs /tmp/new /tmp/bn > $OUT/build_new.log 2>&1 &
bash /tmp/old/scripts/device_build.sh $R/.dev/debs /tmp/old /tmp/bo > $OUT/build_old.log 2>&1 &
wait
tail -1 $OUT/build_new.log; tail -1 $OUT/build_old.log
echo "builds $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# waits per query: the test prints them (old and new)
for s in old new; do b=/tmp/bo; [ $s = new ] && b=/tmp/bn
  echo "== $s waits: $(cd $b && CK_RUN_CASE=cuda CK_FORK=no ./check_geohash_cuda 2>&1 | grep -E 'host waits|Checks|FAIL|fail' | tr '\n' ' ')"
done 2>&1 | tee $OUT/waits.txt
cd /tmp/bn && timeout 200 ctest -R 'geohash_cuda|match\.|context\.cuda|geohash\.pairs|cli\.' -LE slow -j8 --output-on-failure > $OUT/ctest.log 2>&1
echo "ctest rc $? $(( $(date +%s) - t0 )) s"; grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head -20
cd $R
# the same answers: every pair of data/pairs and data/hard, old and new, timings dropped
python3 - > $OUT/answers.txt 2>&1 <<'PY'
import json, subprocess, os
diff = same = 0
for tier in ("pairs", "hard"):
    d = "/tmp/new/data/" + tier
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
        print(tier, p["id"], be, "same" if ok else "DIFFERENT", out["new"][1][:160])
        if not ok: print("  old:", out["old"][1]); print("  new:", out["new"][1])
# every image of data/images as a query against two references (many queries in one run)
for ref in ("box_in_scene.png", "butterfly.jpg"):
    outs = {}
    for s, b in (("old", "/tmp/bo"), ("new", "/tmp/bn")):
        r = subprocess.run([b + "/geohash-match", "--backend", "cuda", "--json",
                            "/tmp/new/data/images/" + ref, "/tmp/new/data/images/"],
                           capture_output=True, text=True)
        lines = []
        for l in r.stdout.splitlines():
            j = json.loads(l); j.pop("timings_ms", None); lines.append(json.dumps(j, sort_keys=True))
        outs[s] = lines
    for a, b in zip(outs["old"], outs["new"]):
        ok = a == b
        same += ok; diff += not ok
        if not ok: print("DIFFERENT", ref, "\n  old:", a, "\n  new:", b)
    print(ref, "many queries:", len(outs["new"]), "lines,", sum(a == b for a, b in zip(outs["old"], outs["new"])), "same", "found", sum('"found": true' in l for l in outs["new"]))
print("answers: %d same, %d different" % (same, diff))
PY
tail -1 $OUT/answers.txt; grep DIFF $OUT/answers.txt | head
echo "answers $(( $(date +%s) - t0 )) s"
for round in 1 2 3; do for s in old new; do b=/tmp/bo; [ $s = new ] && b=/tmp/bn
  echo "== round $round $s" >> $OUT/bench.txt
  $b/geohash-match bench match --backend cuda --threads 16 --reps 40 --no-baseline >> $OUT/bench.txt 2>&1
done; done
grep -E "==|total" $OUT/bench.txt | sed -E 's/  +/ /g' | cut -c1-200
echo "bench $(( $(date +%s) - t0 )) s"
if [ $(( $(date +%s) - t0 )) -lt 250 ]; then
  cd /tmp/bn && GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 120 compute-sanitizer --tool memcheck --leak-check full ./check_geohash_cuda > $OUT/memcheck.txt 2>&1
  echo "memcheck rc $?: $(grep 'ERROR SUMMARY' $OUT/memcheck.txt)"; grep -E 'host waits|Checks' $OUT/memcheck.txt
fi
# where the time of a new query goes (for the next step), if nsys is here and time is left
if command -v nsys >/dev/null && [ $(( $(date +%s) - t0 )) -lt 280 ]; then
  timeout 90 nsys profile -o /tmp/prof --force-overwrite true /tmp/bn/geohash-match bench match --backend cuda --threads 16 --reps 20 --no-baseline > /dev/null 2>&1
  timeout 60 nsys stats --report cuda_api_sum --report cuda_gpu_kern_sum --report nvtx_sum --format csv /tmp/prof.nsys-rep > $OUT/nsys.txt 2>&1
  echo "nsys rc $?"; head -c 3000 $OUT/nsys.txt
fi
echo "all $(( $(date +%s) - t0 )) s"
