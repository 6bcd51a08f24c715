#!/bin/bash
# s37 call 2 (nvidia-h100-x1): issue 14's "100 queries in one run >= 20x faster than 100
# processes", HEAD (clones that copy, a worker per 2 images) against 44ef6fd, default backend:
# 100 copies of a small query (dev_00_query.png, 151x142, against butterfly.jpg) and of a
# 640x480 one (Blender_Suzanne2.jpg against Blender_Suzanne1.jpg); each round one run of old,
# one of new and 100 processes of new, one pair each.
set -u
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi -L; nproc; git log --oneline -1
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_new.txt 2>&1 &
p1=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1 &
p2=$!
wait $p1; echo "new build rc $?"; wait $p2; echo "old build rc $?"
ms() { local t0=$(date +%s%N); "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc lines $(wc -l < /tmp/run.out)"; }
procs() { local t0=$(date +%s%N); for f in $2/*; do /tmp/bn/geohash-match $1 $f > /dev/null; done; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms"; }
mkdir -p /tmp/small /tmp/vga
for i in $(seq -w 1 100); do cp data/pairs/dev_00_query.png /tmp/small/q$i.png; cp data/images/Blender_Suzanne2.jpg /tmp/vga/q$i.jpg; done
for set in small vga; do
  R=data/images/butterfly.jpg; [ $set = vga ] && R=data/images/Blender_Suzanne1.jpg
  /tmp/bn/geohash-match --verbose $R /tmp/$set/q001.* /tmp/$set/q002.* 2>&1 >/dev/null | grep -i "runs on" | head -2
  /tmp/bo/geohash-match --backend cpu --jobs 1 $R /tmp/$set > /tmp/ref_$set.out
  for r in 1 2 3 4 5; do
    echo "$set round $r old: $(ms /tmp/bo/geohash-match $R /tmp/$set)"
    echo "$set round $r new: $(ms /tmp/bn/geohash-match $R /tmp/$set)"
    cmp -s /tmp/run.out /tmp/ref_$set.out && echo "  same lines as old --jobs 1" || echo "  DIFFERENT"
    echo "$set round $r 100 processes (new): $(procs $R /tmp/$set)"
  done
done
cd $OUT && tar -czf logs.tgz build_new.txt build_old.txt && rm -f build_new.txt build_old.txt
