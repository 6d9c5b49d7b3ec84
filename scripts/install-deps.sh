#!/usr/bin/env bash
# Installs what vfssim needs to build, test and run its notebooks, from
# Debian's packages only. Idempotent: installs nothing that is there.
set -euo pipefail
packages=(
  g++ cmake ninja-build pkg-config
  clang libclang-rt-dev
  libboost-graph-dev libboost-math-dev libboost-program-options-dev libeigen3-dev
  libsqlite3-dev libyaml-cpp-dev nlohmann-json3-dev pybind11-dev doctest-dev
  librsvg2-dev libcairo2-dev  # vfssim run --plot FILE.png (results/plot_png.cpp)
  python3-dev python3-numpy python3-pandas python3-matplotlib
  python3-nbclient python3-nbconvert python3-nbformat python3-ipykernel python3-pytest python3-tqdm python3-yaml
  python3-distributed
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: all ${#packages[@]} packages present"
