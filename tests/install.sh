#!/usr/bin/env bash
# install.sh TEST - the installed library as a user meets it: `cmake --install` of the build in
# GHM_BUILD into a temporary prefix, then a small program (tests/install/find_pair.c) built
# against it through pkg-config and through find_package, run on a known pair from data/ (it must
# find the match), and every installed public header compiled alone. One ctest case per test_*.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${GHM_BUILD:?}" "${GHM_DATA:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

install_library() {
    cmake --install "$GHM_BUILD" --prefix "$prefix" >/dev/null
    [ -f "$prefix/include/geohash/ghm_match.h" ] && [ -f "$prefix/include/geohash/ghm_version.h" ]
    ! ls "$prefix/include/geohash/" | grep -q internal
    ls "$prefix"/lib*/libgeohash.so.* "$prefix"/lib*/libgeohash.a >/dev/null
}

# The pair and its true matrix from data/pairs/truth.json (dev_00).
pair_args() {
    python3 - "$GHM_DATA/pairs/truth.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1])); p = d['pairs'][0]; base = os.path.dirname(sys.argv[1])
m = p['matrix']
print(os.path.join(base, p['reference']), os.path.join(base, p['query']),
      *m[0], *m[1], 1.0)
PY
}

test_pkg_config() {
    install_library
    local pc libdir
    pc=$(dirname "$(find "$prefix" -name geohash.pc)")
    libdir=$(dirname "$(find "$prefix" -name 'libgeohash.so' | head -1)")
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Werror -o "$tmp/find_pair" "$here/install/find_pair.c" \
        $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs geohash) -lm -Wl,-rpath,"$libdir"
    # shellcheck disable=SC2046
    "$tmp/find_pair" $(pair_args)
}

test_find_package() {
    install_library
    cmake -S "$here/install" -B "$tmp/user" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$tmp/user" >/dev/null
    # shellcheck disable=SC2046
    "$tmp/user/find_pair" $(pair_args)
}

test_headers_alone() {
    install_library
    local n=0
    for h in "$prefix"/include/geohash/*.h; do
        printf '#include <geohash/%s>\ntypedef int one_header;\n' "$(basename "$h")" >"$tmp/one.c"
        cc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$prefix/include" "$tmp/one.c" ||
            { echo "header does not compile alone: $(basename "$h")" >&2; return 1; }
        n=$((n + 1))
    done
    echo "$n public headers compile alone"
    [ "$n" -ge 15 ]
}

# The installed program loads MPI only under a launcher, from the module installed beside the
# library (LIBDIR/geohash-match): two ranks' bench distmap runs, split over both. Skips where
# the build has no MPI or mpirun cannot start two processes here.
test_program_mpi_module() {
    install_library
    local bin=$prefix/bin/geohash-match flags=(--oversubscribe)
    "$bin" --version | grep -q "MPI ranks" || { echo "no MPI in this build: skipped"; return 0; }
    command -v mpirun >/dev/null || { echo "no mpirun: skipped"; return 0; }
    [ "$(id -u)" -ne 0 ] || flags+=(--allow-run-as-root)
    timeout 60 mpirun "${flags[@]}" -n 2 true >/dev/null 2>&1 ||
        { echo "mpirun cannot start two processes: skipped"; return 0; }
    ls "$prefix"/lib*/geohash-match/geohash-match-mpi.so >/dev/null
    ! ldd "$bin" | grep -q libmpi # the program itself links no MPI
    timeout 300 mpirun "${flags[@]}" -n 2 "$bin" bench distmap --backend cpu --threads 1 \
        --quick >"$tmp/out"
    grep -q "over 2 MPI ranks" "$tmp/out"
}

"$1"
