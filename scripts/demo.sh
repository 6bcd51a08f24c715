#!/usr/bin/env bash
# demo.sh - installs what is missing, builds, and runs geohash-match on the sample data.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
bin=build/geohash-match
set +e
run() { echo; echo "\$ geohash-match $*"; "$bin" "$@"; echo "(exit status $?)"; }
run data/images/box_in_scene.png data/pairs/dev_02_query.png
run --json data/images/butterfly.jpg data/pairs/dev_00_query.png
run data/images/box_in_scene.png data/images/box.png
run data/images/butterfly.jpg data/images/rubberwhale1.png
run voxel --grid 64 data/pointclouds/bunny.ply data/pointclouds/kitten.ply
exit 0
