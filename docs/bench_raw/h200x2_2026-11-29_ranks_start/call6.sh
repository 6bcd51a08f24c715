#!/usr/bin/env bash
# s49 call 6 (2 x H200): why two processes of the video mode are slower than one GPU (call 5):
# ranks under OpenMP and launcher settings, two processes by hand, half the frames alone.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
O=/tmp/ompi
mkdir -p $O /tmp/mpibin && for f in .dev/ompi/*.deb; do dpkg -x "$f" $O; done
ln -sf $O/usr/bin/mpirun.openmpi /tmp/mpibin/mpirun
export OPAL_PREFIX=$O/usr PATH=/tmp/mpibin:$O/usr/bin:$PATH
ML=$O/usr/lib/x86_64-linux-gnu
export OMPI_MCA_mca_base_component_path=$ML/openmpi/lib/openmpi3
export PMIX_MCA_mca_base_component_path=$ML/pmix2/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi"
sed -i "s/ -Werror//" CMakeLists.txt
F="$F -DGEOHASH_FFMPEG=OFF -DGEOHASH_TESTS=OFF"
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1 &
pn=$!
python3 .dev/c49/mk_y4m.py data/video/Megamind.avi /tmp/clip.y4m /tmp/ref.png 4000 > $OUT/mk_y4m.txt 2>&1
wait $pn || { tail -30 $OUT/build_new.log; exit 1; }
el "build and clip: $(cat $OUT/mk_y4m.txt)"
N=$(awk '{print $1}' $OUT/mk_y4m.txt)
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
now() { date +%s.%N; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])):.1f}')" "$@"; }
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
cat /tmp/clip.y4m > /dev/null
one() { # name, command...
  local name=$1; shift
  local a=$(now); timeout 120 "$@" > /tmp/out.txt 2>/tmp/err.txt; local rc=$? b=$(now)
  echo "$name: rc $rc, $(python3 -c "print(f'{$b - $a:.2f}')") s, $(rate $N $a $b) frames/s, $(wc -l </tmp/out.txt) lines, $(strip /tmp/out.txt | grep -v '"summary"' | md5sum | cut -c1-12)"
  grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" /tmp/err.txt | head -3
}
B=/tmp/bn/geohash-match
A="--json --backend cuda --jobs 8 /tmp/ref.png /tmp/clip.y4m"
H=$((N / 2))
{
for rep in 1 2; do
  one "rep $rep, --gpus 2 --jobs 16" $B --json --backend cuda --gpus 2 --jobs 16 /tmp/ref.png /tmp/clip.y4m
  one "rep $rep, ranks" $MPI -n 2 $B $A
  one "rep $rep, ranks OMP_WAIT_POLICY=passive" $MPI -n 2 -x OMP_WAIT_POLICY=passive $B $A
  one "rep $rep, ranks OMP_NUM_THREADS=4" $MPI -n 2 -x OMP_NUM_THREADS=4 $B $A
  one "rep $rep, ranks --jobs 4" $MPI -n 2 $B --json --backend cuda --jobs 4 /tmp/ref.png /tmp/clip.y4m
  one "rep $rep, ranks --bind-to socket --map-by socket" mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to socket --map-by socket -n 2 $B $A
  one "rep $rep, half the frames alone, GPU 0" $B --json --backend cuda --jobs 8 --end $((H - 1)) /tmp/ref.png /tmp/clip.y4m
  one "rep $rep, two processes by hand, a GPU and half each" sh -c "CUDA_VISIBLE_DEVICES=0 $B $A --end $((H - 1)) > /tmp/o1.txt & CUDA_VISIBLE_DEVICES=1 $B $A --start $H > /tmp/o2.txt; wait; cat /tmp/o1.txt /tmp/o2.txt"
done
N=1
one "fixed: one GPU, --end 0" $B --json --backend cuda --jobs 8 --end 0 /tmp/ref.png /tmp/clip.y4m
one "fixed: ranks, --end 1" $MPI -n 2 $B --json --backend cuda --jobs 8 --end 1 /tmp/ref.png /tmp/clip.y4m
nproc; lscpu | grep -i "numa\|socket\|model name"; nvidia-smi topo -m
} 2>&1 | tee "$OUT/video.txt"
el done
