#!/bin/bash
# bench dynmap on the 2-core CPU, old (99a0cc2) and new (3725514: insert, erase in bucket order, gc batched) in turns
for r in 1 2; do
  for v in old new; do
    /tmp/${v}dyn/b/geohash-match bench dynmap --backend cpu --threads 2 --reps 2 \
      --json-out /tmp/dynab3/${v}_$r.json > /tmp/dynab3/${v}_$r.txt 2>&1
  done
done
