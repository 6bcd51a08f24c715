#!/usr/bin/env bash
# setup.sh - installs what a fresh Debian 12 machine lacks to build and test geohash-match.
# Idempotent: asks apt only for packages that are missing. Works as root or through sudo.
# The CUDA toolkit is optional (the build uses nvcc when it is on PATH) and is not installed here.
set -euo pipefail

packages=(
    build-essential cmake pkg-config            # compiler, build
    libpng-dev libjpeg62-turbo-dev              # images
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev ffmpeg  # video (ffmpeg: test fixtures)
    libjansson-dev                              # JSON output
    check libsubunit-dev                        # unit tests
    libopenmpi-dev openmpi-bin                  # MPI ranks (optional at build time; tested)
    python3 python3-numpy python3-scipy         # test helpers, voxel truth script
    python3-venv python3-pip                    # the Python binding's test environment (below)
    locales                                     # de_DE source for the decimal-comma test
    clang libclang-rt-14-dev                    # libFuzzer (scripts/fuzz.sh)
)

# The Python binding's tests run in a virtual environment inside the checkout (build-py/venv,
# ignored by git) holding what they need from PyPI: NumPy, pytest, and scikit-build-core, which
# builds the package (scripts/test.sh installs it with `pip install --no-build-isolation .`).
python_env() {
    local venv=build-py/venv
    "$venv/bin/python" -c 'import numpy, pytest, scikit_build_core' 2>/dev/null && return 0
    echo "setup: creating $venv (numpy, pytest, scikit-build-core)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check numpy pytest 'scikit-build-core>=0.10'
}

apt_packages() {
    missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "setup: all ${#packages[@]} packages present"
        return 0
    fi

    if [ "$(id -u)" -eq 0 ]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        echo "setup: missing packages (${missing[*]}) and neither root nor sudo to install them" >&2
        return 1
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -qq
    "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

cd "$(dirname "$0")/.."
apt_packages
python_env
