#!/bin/bash
# s37 call 3 (nvidia-h100-x1): the committed tree (check_hash_cuda.c split into the maps and
# check_tables_cuda.c, ghmi_copy_of shared): the CUDA suites and memcheck of the tables' one.
set -u
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi -L; nproc
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > $OUT/build_new.txt 2>&1; echo "build rc $?"
export GHM_TEST_DATA=$PWD/data
ctest --test-dir /tmp/bn -R 'cuda|match|multimap|index|geohash|faults|cli\.(auto|multi|search|pair)' -j8 --output-on-failure > $OUT/ctest.txt 2>&1; echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*|Test +#" $OUT/ctest.txt | grep -E "cuda|passed|Failed|\*\*\*" | head -20
cd /tmp/bn
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 280 compute-sanitizer --tool memcheck --leak-check full ./check_tables_cuda > $OUT/memcheck_tables.log 2>&1; echo "memcheck tables rc $?"; tail -3 $OUT/memcheck_tables.log
cd $OUT && tar -czf logs.tgz build_new.txt ctest.txt memcheck_*.log && rm -f build_new.txt ctest.txt memcheck_*.log
