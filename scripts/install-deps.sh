#!/usr/bin/env bash
# Installs every Debian package Tessel's build, tests and benchmarks need.
# Idempotent: returns at once when everything is present.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libisl-dev libgtest-dev googletest nlohmann-json3-dev libcli11-dev
  libomp-dev clang clang-format
  clang-14 libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes for `make fuzz-parser`
  libdnnl-dev libopenblas-dev libxnnpack-dev libpthreadpool-dev libhalide14-0-dev  # peers of `tessel bench` (optional at build time)
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
