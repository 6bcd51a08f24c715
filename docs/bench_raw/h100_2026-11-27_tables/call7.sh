#!/usr/bin/env bash
# Same warm machine as call 6 (its /tmp/bold and /tmp/bnew): is the coherent experiment's 4 %
# a property of the prime size or of seed 1's offsets? Old and new with seeds 2 and 3.
set -u
for seed in 2 3; do
  for s in old new; do
    echo "== seed $seed $s" >> $OUT/coherent_seeds.txt
    timeout 120 /tmp/b$s/geohash-match bench hash --backend cuda --seed $seed --scheme robin-hood --min-log2 26 --max-log2 26 --reps 3 2>&1 | grep -E "^coherent|0.99" >> $OUT/coherent_seeds.txt
  done
done
sed -E "s/  +/ /g" $OUT/coherent_seeds.txt
