#!/usr/bin/env bash
# s50 call 1 (2 x H200): stop 49's last commits (735d6a6 overlap refusal, 6b544c6 review mends)
# on the device: the dist and MPI ctests (the voxel MPI test with OpenMPI's component-load
# warnings off), memcheck, bench distmap 2^28 one process / ranks; then where two GPUs' video
# time goes (Y4M, 4000 frames): halves alone and together, pinned halves, stage times.
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
export PMIX_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_mca_base_component_show_load_errors=0
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$ML:$ML/openmpi/lib:$NC/lib:${LD_LIBRARY_PATH:-}
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=ON -DMPI_C_COMPILER=$O/usr/bin/mpicc.openmpi"
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1 &
pn=$!
python3 .dev/c49/mk_y4m.py data/video/Megamind.avi /tmp/clip.y4m /tmp/ref.png 4000 > $OUT/mk_y4m.txt 2>&1
wait $pn || { tail -30 $OUT/build_new.log; exit 1; }
el "build and clip: $(cat $OUT/mk_y4m.txt)"
MPI="mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none"
{
cd /tmp/bn
timeout 200 ./check_dist_map_ranks 2>&1 | tail -2; el check_dist_map_ranks
timeout 200 ./check_dist_map 2>&1 | tail -2; el check_dist_map
timeout 300 ctest -R 'bench_distmap|dist_map|mpi' 2>&1 | grep "tests passed\|Failed\|\*\*\*\|Not Run"; el ctest
cd - > /dev/null
cd /tmp/bn; CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --leak-check no ./check_dist_map_ranks > $OUT/memcheck_check_ranks.txt 2>&1; grep "ERROR SUMMARY\|Checks" $OUT/memcheck_check_ranks.txt
timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --leak-check no ./check_dist_map > $OUT/memcheck_check.txt 2>&1; grep "ERROR SUMMARY\|Checks" $OUT/memcheck_check.txt; cd - > /dev/null
timeout 200 $MPI -n 2 compute-sanitizer --tool memcheck --report-api-errors no --leak-check no /tmp/bn/geohash-match bench distmap --log2 18 --reps 1 > $OUT/memcheck_ranks.txt 2>&1
grep "ERROR SUMMARY" $OUT/memcheck_ranks.txt
el memcheck
for rep in 1 2; do
  echo "== one process --gpus 2, round $rep"; timeout 90 /tmp/bn/geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
  echo "== 2 MPI ranks, round $rep"; timeout 90 $MPI -n 2 /tmp/bn/geohash-match bench distmap --log2 28 | grep -E "split|one map"
done
el distmap
} 2>&1 | tee $OUT/tests.txt
N=$(awk '{print $1}' $OUT/mk_y4m.txt)
now() { date +%s.%N; }
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
cat /tmp/clip.y4m > /dev/null
k=0
one() { # name, command...
  local name=$1; shift; k=$((k + 1))
  local a=$(now); timeout 120 "$@" > /tmp/out.txt 2>/tmp/err.txt; local rc=$? b=$(now)
  echo "$name: rc $rc, $(python3 -c "print(f'{$b - $a:.2f}')") s, $(wc -l </tmp/out.txt) lines, $(strip /tmp/out.txt | grep -v '"summary"' | md5sum | cut -c1-12) | $(grep _user /tmp/err.txt | tr '\n' ' ')"
  cp /tmp/out.txt $OUT/v$k.jsonl
  grep -v "_user" /tmp/err.txt | tr "\n" " " | head -c 300; echo
  python3 .dev/c50/stages.py /tmp/out.txt | cut -c1-400
}
B=/tmp/bn/geohash-match
A="--json --backend cuda --jobs 8 /tmp/ref.png /tmp/clip.y4m"
H=$((N / 2))
T="/usr/bin/time -f %e_s_%U_user_%S_sys"
{
for rep in 1 2; do
  one "rep $rep, 1 GPU whole" $T $B $A
  one "rep $rep, --gpus 2 --jobs 16" $T $B --json --backend cuda --gpus 2 --jobs 16 /tmp/ref.png /tmp/clip.y4m
  one "rep $rep, ranks" $T $MPI -n 2 $B $A
  one "rep $rep, 1st half alone GPU0" $T $B $A --end $((H - 1))
  one "rep $rep, 2nd half alone GPU1" env CUDA_VISIBLE_DEVICES=1 $T $B $A --start $H
  one "rep $rep, 1st half alone, cores 0-15" $T taskset -c 0-15 $B $A --threads 16 --end $((H - 1))
  one "rep $rep, halves by hand, cores 0-15 / 16-31" sh -c "CUDA_VISIBLE_DEVICES=0 $T taskset -c 0-15 $B $A --threads 16 --end $((H - 1)) > /tmp/o1.txt & CUDA_VISIBLE_DEVICES=1 $T taskset -c 16-31 $B $A --threads 16 --start $H > /tmp/o2.txt; wait; cat /tmp/o1.txt /tmp/o2.txt"
  one "rep $rep, halves by hand, all cores each" sh -c "CUDA_VISIBLE_DEVICES=0 $T $B $A --end $((H - 1)) > /tmp/o1.txt & CUDA_VISIBLE_DEVICES=1 $T $B $A --start $H > /tmp/o2.txt; wait; cat /tmp/o1.txt /tmp/o2.txt"
done
nproc; lscpu | grep -i "model name\|socket\|numa"
} 2>&1 | tee "$OUT/video.txt"
el done
