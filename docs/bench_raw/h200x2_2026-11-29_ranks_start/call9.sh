#!/usr/bin/env bash
# s49 call 9 (2 x H200): which half of call 8's two processes is slow: each half of the clip
# alone on each GPU, the whole clip on each GPU.
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
  grep -v "pmix_mca_base\|dlopen error\|Perhaps a missing" /tmp/err.txt | tr "\n" " " | head -c 300; echo
}
B=/tmp/bn/geohash-match
A="--json --backend cuda --jobs 8 /tmp/ref.png /tmp/clip.y4m"
H=$((N / 2))
T="/usr/bin/time -f %e_s_%U_user"
{
for rep in 1 2; do
  for g in 0 1; do
    one "rep $rep, GPU $g, first half alone" $T env CUDA_VISIBLE_DEVICES=$g $B $A --end $((H - 1))
    one "rep $rep, GPU $g, second half alone" $T env CUDA_VISIBLE_DEVICES=$g $B $A --start $H
    one "rep $rep, GPU $g, all frames" $T env CUDA_VISIBLE_DEVICES=$g $B $A
  done
  one "rep $rep, second half alone, --start $H --end $((N - 1))" $T $B $A --start $H --end $((N - 1))
done
} 2>&1 | tee "$OUT/video.txt"
el done
