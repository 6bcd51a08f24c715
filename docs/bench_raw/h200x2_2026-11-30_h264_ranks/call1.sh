#!/usr/bin/env bash
# s53 call 1 (2 x H200): FFmpeg unpacked under /tmp/ffp (kept for call 2); the new tree (static
# libgomp, radix digits) built with FFmpeg, MPI off; its ctest (not slow), video cases included.
set -u
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi -L; nproc; ldd --version | head -1
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu; mkdir -p $L
tar -C $P -xJf .dev/ff/ffdev.tar.xz && tar -C $L --strip-components=1 -xJf .dev/ff/ffl.tar.xz && echo ffmpeg unpacked
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
export LD_LIBRARY_PATH=$L PKG_CONFIG_PATH=$L/pkgconfig
python3 -c "import ctypes; ctypes.CDLL('libavcodec.so.59'); ctypes.CDLL('libavformat.so.59'); ctypes.CDLL('libswscale.so.6'); print('ffmpeg loads')"
el unpack
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_FFMPEG=ON > $OUT/build_new.log 2>&1; echo "new rc $?"
grep -h "GHM_OPENMP_ARCHIVE" /tmp/bn/CMakeCache.txt | head -2
ldd /tmp/bn/geohash-match | grep -c gomp
env -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose /tmp/bn/geohash-match --version 2>&1 | grep -E "SPINCOUNT|WAIT_POLICY"
el build
cd /tmp/bn && timeout 420 ctest -j 16 -LE slow --timeout 400 > $OUT/ctest.txt 2>&1; echo "ctest rc $?"
grep -E "tests passed|\*\*\*Failed|Failed  |Timeout|Skipped" $OUT/ctest.txt | head -20
el ctest
