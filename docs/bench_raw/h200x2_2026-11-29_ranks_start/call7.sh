#!/usr/bin/env bash
# s49 call 7 (2 x H200): CUDA's start and the video mode's start in one process alone and in two at once.
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
F="$F -DGEOHASH_FFMPEG=OFF -DGEOHASH_TESTS=OFF"
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1 &
pn=$!
nvcc -O2 -o /tmp/cuinit .dev/c49/cuinit.c
python3 .dev/c49/mk_y4m.py data/video/Megamind.avi /tmp/clip.y4m /tmp/ref.png 400 > $OUT/mk_y4m.txt 2>&1
wait $pn || { tail -30 $OUT/build_new.log; exit 1; }
el build
B=/tmp/bn/geohash-match
t() { /usr/bin/time -f "%e s wall %U user %S sys" "$@"; }
{
nvidia-smi --query-gpu=persistence_mode,compute_mode --format=csv
for rep in 1 2; do
  echo "== alone"; t /tmp/cuinit
  echo "== two at once, each all GPUs"; (t /tmp/cuinit & t /tmp/cuinit; wait)
  echo "== two at once, a GPU each"; (CUDA_VISIBLE_DEVICES=0 t /tmp/cuinit & CUDA_VISIBLE_DEVICES=1 t /tmp/cuinit; wait)
  echo "== video --end 0 alone"; t $B --json --backend cuda --jobs 8 --end 0 /tmp/ref.png /tmp/clip.y4m > /dev/null
  echo "== video --end 0 two at once, a GPU each"; (CUDA_VISIBLE_DEVICES=0 t $B --json --backend cuda --jobs 8 --end 0 /tmp/ref.png /tmp/clip.y4m > /dev/null & CUDA_VISIBLE_DEVICES=1 t $B --json --backend cuda --jobs 8 --end 0 /tmp/ref.png /tmp/clip.y4m > /dev/null; wait)
  echo "== video --end 0 --jobs 1 alone"; t $B --json --backend cuda --jobs 1 --end 0 /tmp/ref.png /tmp/clip.y4m > /dev/null
  echo "== video --end 0 --jobs 1 two at once"; (CUDA_VISIBLE_DEVICES=0 t $B --json --backend cuda --jobs 1 --end 0 /tmp/ref.png /tmp/clip.y4m > /dev/null & CUDA_VISIBLE_DEVICES=1 t $B --json --backend cuda --jobs 1 --end 0 /tmp/ref.png /tmp/clip.y4m > /dev/null; wait)
  echo "== image pair on the CPU backend alone / two at once"; t $B --backend cpu /tmp/ref.png /tmp/ref.png > /dev/null; (t $B --backend cpu /tmp/ref.png /tmp/ref.png > /dev/null & t $B --backend cpu /tmp/ref.png /tmp/ref.png > /dev/null; wait)
done
} > $OUT/start.txt 2>&1
el done; cat $OUT/start.txt
