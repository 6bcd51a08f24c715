export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b -DGEOHASH_TESTS=OFF > /tmp/bl 2>&1 || { tail -30 /tmp/bl; exit 1; }
cd /tmp/b
for v in 0 1 2 3 4 5 0; do
  GHM_PV=$v timeout 100 ./geohash-match bench dynmap --backend cuda --reps 3 > $OUT/pv$v.txt 2>&1
  echo "== pv $v"; sed -n 3,10p $OUT/pv$v.txt | awk '{print $1,$3,$6,$8,$10}' | tr '\n' ';'; echo
done
