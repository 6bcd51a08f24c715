# call 2, right after call 1 on the same machine (its builds kept in /tmp): the runs alone,
# each command bounded by timeout (call 1 ran out of its 600 s in the video ctests after the
# two builds). The command as it ran, one line there, split here for reading.
exec > >(tee $OUT/log2.txt) 2>&1; L=/tmp/ffp/usr/lib/x86_64-linux-gnu; export LD_LIBRARY_PATH=$L
N=/tmp/bn/geohash-match O=/tmp/bo/geohash-match V=.dev/ff/mm1080.mp4 R=.dev/ff/ref050.jpg; ls -la $N $O
ms() { local t0=$(date +%s%N); timeout 60 "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc $(grep -c '"found":true' /tmp/run.out) found"; }
for b in O N; do echo "$b bench"; timeout 120 ${!b} bench video --backend cuda --video $V --reference $R --frames 40 2>&1 | tail -8; done
for r in 1 2 3; do
  for b in O N; do echo "r$r $b cuda j8: $(ms ${!b} --json --backend cuda --jobs 8 $R $V)"; done
  echo "r$r N cuda j8 t32: $(ms $N --json --backend cuda --jobs 8 --threads 32 $R $V)"
  echo "r$r N cuda j8 t4: $(ms $N --json --backend cuda --jobs 8 --threads 4 $R $V)"
done
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//'; }
for b in O N; do timeout 60 ${!b} --json --backend cuda --jobs 8 $R $V 2>/dev/null | strip > /tmp/l_$b.txt; done
cmp /tmp/l_O.txt /tmp/l_N.txt && echo "lines identical $(wc -l < /tmp/l_N.txt)"
for r in 1 2; do for b in O N; do echo "r$r $b cpu: $(ms ${!b} --json --backend cpu $R $V)"; done; done
timeout 30 $N --verbose --json --backend cuda --jobs 8 $R $V 2>&1 >/dev/null | tail -2
(cd /tmp/bn && timeout 150 ctest -R 'video' -LE slow -j8 --timeout 60 > $OUT/ctest_video.txt 2>&1; tail -15 $OUT/ctest_video.txt)
