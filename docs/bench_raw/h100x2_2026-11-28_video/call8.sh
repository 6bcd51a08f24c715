#!/usr/bin/env bash
# s35 call 8: video frames allocated without zeroing (the Y4M reader fills them), old = 5ce1c0a
# and new built side by side (no MPI); 9720 1080p frames from one Y4M file, in turns, twice.
# (from call 3:) a 1080p video's frames from a Y4M file on 2 x H100: one GPU, --gpus 2, and 2 MPI
# ranks (one GPU each; the file's frame count now known, each rank seeks to its range), in
# turns, twice; outputs compared; plus glibc malloc tunables on --gpus 2 (contention probe).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; git log --oneline -1; } > $OUT/env.txt
O=/tmp/ompi
mkdir -p $O && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
export OPAL_PREFIX=$O/usr PATH=$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF >"$OUT/build.log" 2>&1 &
bpid=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF >"$OUT/build_old.log" 2>&1 &
opid=$!
python3 .dev/s35/mk_y4m.py .dev/mm1080.mp4 /tmp/mm1080.y4m 9 > $OUT/mk_y4m.txt 2>&1
wait $bpid || { tail -30 "$OUT/build.log"; exit 1; }
wait $opid || { tail -30 "$OUT/build_old.log"; exit 1; }
el "build and clip: $(cat $OUT/mk_y4m.txt)"
B=/tmp/bn/geohash-match REF=.dev/ref1080.png CLIP=/tmp/mm1080.y4m N=9720
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x OPAL_PREFIX -x OMPI_MCA_mca_base_component_path -x PMIX_MCA_mca_base_component_path -x PMIX_MCA_pcompress_base_silence_warning"
now() { date +%s.%N; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])):.1f}')" "$@"; }
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
cat $CLIP > /dev/null
one() { # name, command...
  local name=$1; shift
  local a=$(now); timeout 120 "$@" > /tmp/out.txt 2>/tmp/err.txt; local rc=$? b=$(now)
  echo "$name: rc $rc, $(rate $N $a $b) frames/s, $(wc -l </tmp/out.txt) lines, $(strip /tmp/out.txt | md5sum | cut -c1-12)"
  grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" /tmp/err.txt | head -3
}
{
N=9720
for rep in 1 2; do
  for b in bo bn; do
    one "rep $rep, $b, 1 GPU, --jobs 8" /tmp/$b/geohash-match --json --backend cuda --jobs 8 $REF $CLIP
    one "rep $rep, $b, --gpus 2 --jobs 16" /tmp/$b/geohash-match --json --backend cuda --gpus 2 --jobs 16 $REF $CLIP
  done
done
} 2>&1 | tee "$OUT/video.txt"
el done
