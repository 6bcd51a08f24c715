#!/usr/bin/env bash
# Issue 11, peers: build the project (branch peers = main 99f6182 + scripts/peers) and the peers'
# harness side by side, then ours and the peers' in turns at 2^26 keys, twice, on one GPU.
R=$PWD P=$PWD/.dev/peers
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p /tmp/src && tar xJf $P/src.tar.xz -C /tmp/src && sed -i 's/ -Werror//' /tmp/src/CMakeLists.txt
{ date -u; nvidia-smi; nvcc --version; echo "project commit $(cat $P/COMMIT)"; cat $P/VERSIONS; } > $OUT/env.txt 2>&1
t0=$(date +%s)
bash /tmp/src/scripts/device_build.sh $R/.dev/debs /tmp/src /tmp/b > $OUT/build.log 2>&1 & pb=$!
bash /tmp/src/scripts/peers/run.sh build $P /tmp/pb > /tmp/build_peers.log 2>&1; rp=$?
wait $pb; rb=$?
{ echo "== harness build (rc $rp)"; cat /tmp/build_peers.log; } >> $OUT/env.txt
echo "builds: project rc $rb, harness rc $rp, $(( $(date +%s) - t0 )) s"
BP=/tmp/pb/bench_peers
[ $rp = 0 ] || { BP=$P/bench_peers.prebuilt; echo "harness build failed: the one built off-device" | tee -a $OUT/env.txt; tail -5 /tmp/build_peers.log; }
[ $rb = 0 ] || { tail -30 $OUT/build.log; exit 1; }
t0=$(date +%s)
timeout 320 bash /tmp/src/scripts/peers/run.sh measure /tmp/b/geohash-match $BP $OUT 26 2; echo "measure rc $? $(( $(date +%s) - t0 )) s"
for f in $OUT/ours_r1.txt $OUT/peers_r1.txt; do echo "== $(basename $f)"; grep -E "^(bench|map|peer|ceiling)|rror|failed" $f | cut -c1-150; done
