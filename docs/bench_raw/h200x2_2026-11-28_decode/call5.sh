#!/usr/bin/env bash
# old = this tree (4279c3a), new = it + conv.patch (the luma table applied to a large frame's
# rows on up to 4 threads), built side by side with FFmpeg (carried as in call 1); one GPU,
# 1080p H.264, default 8 decoding threads and --threads 16 (16 decoding threads; on 16 cores
# the matcher's threads are 16 either way), rounds in turns; then the same on two GPUs when
# the machine has them.
exec > >(tee "$OUT/log5.txt") 2>&1
nvidia-smi -L; nproc
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu; mkdir -p $L
tar -C $P -xJf .dev/ff/ffdev.tar.xz
tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig NCCL_NVLS_ENABLE=0
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/new && tar --exclude=./.dev -cf - . | tar -C /tmp/new -xf -
(cd /tmp/new && patch -s -p1 < $OLDPWD/.dev/ff/conv.patch) || echo "patch failed"
B="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF"
t0=$(date +%s)
(bash scripts/device_build.sh .dev/debs . /tmp/bo $B > $OUT/build_o.txt 2>&1; echo "old rc $?") &
(bash scripts/device_build.sh .dev/debs /tmp/new /tmp/bn $B > $OUT/build_n.txt 2>&1; echo "new rc $?") &
wait; echo "built in $(( $(date +%s) - t0 )) s"
N=/tmp/bn/geohash-match O=/tmp/bo/geohash-match V=.dev/ff/mm1080.mp4 R=.dev/ff/ref050.jpg
G=$(nvidia-smi -L | wc -l)
ms() { local t0=$(date +%s%N); timeout 60 "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc $(grep -c '"found":true' /tmp/run.out) found"; }
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//'; }
for b in O N; do timeout 60 ${!b} --json --backend cuda --jobs 8 $R $V 2>/dev/null | strip > /tmp/l_$b.txt; done
cmp /tmp/l_O.txt /tmp/l_N.txt && echo "old and new lines identical, $(wc -l < /tmp/l_N.txt)"
for r in 1 2 3; do
  for b in O N; do
    echo "r$r $b 1gpu: $(ms ${!b} --json --backend cuda --jobs 8 $R $V)"
    echo "r$r $b 1gpu t16: $(ms ${!b} --json --backend cuda --jobs 8 --threads 16 $R $V)"
    [ $G -ge 2 ] && echo "r$r $b 2gpu: $(ms ${!b} --json --backend cuda --gpus 2 --jobs 16 $R $V)"
    [ $G -ge 2 ] && echo "r$r $b 2gpu t16: $(ms ${!b} --json --backend cuda --gpus 2 --jobs 16 --threads 16 $R $V)"
  done
done
for b in O N; do for t in 0 16; do echo "$b bench decode threads $t"; timeout 120 ${!b} bench video --backend cuda --video $V --reference $R --frames 40 $( [ $t -gt 0 ] && echo --threads $t ) 2>&1 | grep -E "decode|end-to-end"; done; done
