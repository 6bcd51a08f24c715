#!/usr/bin/env bash
# One call on the one-GPU kind (the two-GPU kind was not lent): FFmpeg's libraries (Debian 12's, carried: the machine has none)
# under a private prefix, old (0f560e0: one decoding thread) and new built side by side with
# FFmpeg, the new tree's video ctests, then 1080p H.264 end to end, old / new in turns.
exec > >(tee "$OUT/log.txt") 2>&1
set -x
nvidia-smi -L; ldd --version | head -1; nproc
P=/tmp/ffp; mkdir -p $P/usr/lib/x86_64-linux-gnu
tar -C $P -xJf .dev/ff/ffdev.tar.xz
tar -C $P/usr/lib/x86_64-linux-gnu --strip-components=1 -xJf .dev/ff/ffl.tar.xz
L=$P/usr/lib/x86_64-linux-gnu
glibc=$(ldd --version | head -1 | grep -o '[0-9]*\.[0-9]*$')
[ "$(printf '%s\n2.36\n' "$glibc" | sort -V | head -1)" = 2.36 ] || rm -f $L/libexpat.so.1
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig
python3 -c "import ctypes; ctypes.CDLL('libavcodec.so.59'); ctypes.CDLL('libavformat.so.59'); ctypes.CDLL('libswscale.so.6'); print('ffmpeg loads')"
# old = this tree with the change (new.patch = git diff 0f560e0, what travels being limited) undone
mkdir -p /tmp/old && tar --exclude=./.dev -cf - . | tar -C /tmp/old -xf -
(cd /tmp/old && patch -R -s -p1 < $OLDPWD/.dev/ff/new.patch) || echo "reverse patch failed"
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
B="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_FFMPEG=ON"
(bash scripts/device_build.sh .dev/debs . /tmp/bn $B > $OUT/build_new.txt 2>&1; echo "new rc $?") &
(bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $B -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1; echo "old rc $?") &
wait
N=/tmp/bn/geohash-match O=/tmp/bo/geohash-match V=.dev/ff/mm1080.mp4 R=.dev/ff/ref050.jpg
(cd /tmp/bn && ctest -R 'video' -LE slow -j8 > $OUT/ctest_video.txt 2>&1; tail -4 $OUT/ctest_video.txt)
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//'; }
ms() { local t0=$(date +%s%N); "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc"; }
for b in O N; do ${!b} --json --backend cuda --jobs 8 $R $V 2>/dev/null | strip > /tmp/lines_$b.txt; done
cmp /tmp/lines_O.txt /tmp/lines_N.txt && echo "old and new lines identical: $(wc -l < /tmp/lines_N.txt) frames, $(grep -c '"found":true' /tmp/lines_N.txt) found"
$N --json --backend cuda --jobs 8 --threads 1 $R $V 2>/dev/null | strip | cmp - /tmp/lines_N.txt && echo "one decoding thread identical"
for r in 1 2 3; do
  for b in O N; do
    echo "round $r $b 1gpu jobs8: $(ms ${!b} --json --backend cuda --jobs 8 $R $V)"
  done
  echo "round $r N 1gpu jobs8 threads32(16 decoders): $(ms $N --json --backend cuda --jobs 8 --threads 32 $R $V)"
  echo "round $r N 1gpu jobs8 threads4 (4 decoders): $(ms $N --json --backend cuda --jobs 8 --threads 4 $R $V)"
  echo "round $r O cpu: $(ms $O --json --backend cpu $R $V)"
  echo "round $r N cpu: $(ms $N --json --backend cpu $R $V)"
done
for b in O N; do ${!b} bench video --backend cuda --video $V --reference $R --frames 40 > $OUT/bench_video_$b.txt 2>&1; done
$N bench video --backend cuda --video $V --reference $R --frames 40 --threads 16 > $OUT/bench_video_N16.txt 2>&1
$N --verbose --backend cuda --jobs 8 $R $V 2>&1 >/dev/null | tail -3
cat $OUT/bench_video_*.txt
