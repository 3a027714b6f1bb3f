#!/usr/bin/env bash
# Installs the Debian 12 packages convsel needs to build and test. Idempotent:
# packages already present are not touched, and apt-get runs only when one is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libcjson-dev        # model runtime: JSON parsing of frugally-deep files
  libsqlite3-dev      # performance database
  libopenblas-dev libblis-pthread-dev  # bench/bench_sgemm compares convsel's GEMM with them
  libxsmm-dev         # bench/bench_sgemm: libxsmm beside them (static libraries)
  libdnnl-dev         # oneDNN 2.6: the oneDNN-backed solvers and the bench baseline
  python3-torch       # tests/test_torch_reference.c, the Python package's tests
  python3-numpy python3-torchvision python3-pytest  # python/tests (pytest, by make test)
  python3-setuptools python3-venv python3-pip       # python/tests/test_install.py: pip install
  clang-14 libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
