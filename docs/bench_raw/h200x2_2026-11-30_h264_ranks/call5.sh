#!/usr/bin/env bash
# s53 call 5 (2 x H200, the machine of call 4 kept warm: FFmpeg in /tmp/ffp): the tree with
# FFmpeg, MPI (carried OpenMPI) and NCCL; a 2134-frame 1080p H.264 clip end to end on one GPU,
# --gpus 2, and 2 MPI ranks, three rounds in turns; lines compared.
set -u
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P=/tmp/ffp; L=$P/usr/lib/x86_64-linux-gnu
[ -f $L/libavcodec.so.59 ] || { echo "no FFmpeg in /tmp/ffp: call 4's machine was not kept"; exit 3; }
for l in avcodec avformat avutil swscale swresample; do ln -sf $(cd $L && ls lib$l.so.[0-9]* | head -1) $L/lib$l.so; done
sed -i "s|=/usr|=$P/usr|" $L/pkgconfig/*.pc
O=/tmp/ompi
mkdir -p $O /tmp/mpibin && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
ln -sf $O/usr/bin/mpirun.openmpi /tmp/mpibin/mpirun
export OPAL_PREFIX=$O/usr PATH=/tmp/mpibin:$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
export PMIX_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_mca_base_component_show_load_errors=0
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$L:$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
export PKG_CONFIG_PATH=$L/pkgconfig
python3 -c "import ctypes; ctypes.CDLL('libavcodec.so.59'); ctypes.CDLL('libavformat.so.59'); ctypes.CDLL('libswscale.so.6'); print('ffmpeg loads')"
sed -i "s/ -Werror//" CMakeLists.txt
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi -DGEOHASH_FFMPEG=ON -DGEOHASH_TESTS=OFF"
bash scripts/device_build.sh .dev/debs . /tmp/bv $F > $OUT/build_video.log 2>&1 || { tail -30 $OUT/build_video.log; exit 1; }
el build
N=/tmp/bv/geohash-match V=.dev/ff3/mm1080long.mp4 REF=.dev/ff3/ref050.jpg
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
ms() { local a=$(date +%s%N); "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - a) / 1000000 )) ms rc $rc"; }
for r in 1 2 3; do
  echo "round $r 1gpu: $(ms $N --json --backend cuda --jobs 8 $REF $V)"; strip /tmp/run.out > /tmp/l1
  echo "round $r --gpus 2: $(ms $N --json --backend cuda --jobs 8 --gpus 2 $REF $V)"; strip /tmp/run.out > /tmp/l2
  echo "round $r 2 ranks: $(ms $MPI -n 2 $N --json --backend cuda --jobs 8 $REF $V)"; strip /tmp/run.out > /tmp/l3; tail -c 300 /tmp/run.err
  cmp -s /tmp/l1 /tmp/l2 && cmp -s /tmp/l1 /tmp/l3 && echo "  lines identical ($(wc -l < /tmp/l1) frames, $(grep -c '"found":true' /tmp/l1) found)" || echo "  LINES DIFFER $(wc -l < /tmp/l1) $(wc -l < /tmp/l2) $(wc -l < /tmp/l3)"
done | tee $OUT/h264_long.txt
el done
