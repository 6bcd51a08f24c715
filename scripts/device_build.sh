#!/usr/bin/env bash
# device_build.sh DEBS SRC BUILD - builds SRC into BUILD on a GPU machine that has the CUDA
# toolkit, CMake and libpng/libjpeg but not jansson or Check: their Debian packages (in DEBS:
# libjansson-dev, libjansson4, check, libsubunit-dev, libsubunit0, fetched with
# `apt-get download`) are unpacked into a private prefix and linked statically, FFmpeg left out
# (unless -DGEOHASH_FFMPEG=ON and a PKG_CONFIG_PATH already in the environment has its .pc files).
# Arguments after BUILD go to CMake as they are (e.g. -DNCCL_ROOT=..., -DMPI_C_COMPILER=...).
set -euo pipefail
DEBS=$1 SRC=$2 BUILD=$3
shift 3
pfx=$(mktemp -d)/deps
mkdir -p "$pfx"
for f in "$DEBS"/*.deb; do dpkg -x "$f" "$pfx"; done
pcdir=$(dirname "$(find "$pfx" -name jansson.pc | head -1)")
sed -i "s|^prefix=.*|prefix=$pfx/usr|" "$pcdir"/*.pc
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
    cmake "${gen[@]}" -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DGEOHASH_FFMPEG=OFF -DGEOHASH_STATIC_DEPS=ON -DGEOHASH_CUDA=ON \
    -DCMAKE_PREFIX_PATH="$pfx/usr" -DCMAKE_LIBRARY_PATH="$(dirname "$pcdir")" "$@" >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
