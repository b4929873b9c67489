#!/usr/bin/env bash
# Installs the Debian packages MoE Planner needs, only those that are missing.
# Used by `make` (quick start) and by CI. Works as root or through sudo.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config clang-format
    qt6-base-dev qt6-svg-dev libqcustomplot-dev
    libimgui-dev libglfw3-dev libgl-dev libstb-dev libyaml-cpp-dev
    nlohmann-json3-dev libpugixml-dev libcli11-dev
    xvfb xauth libgl1-mesa-dri
    poppler-utils chromium
    python3 python3-jsonschema python3-pandas
    slurm-wlm munge
    help2man dpkg-dev desktop-file-utils shared-mime-info
    clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
fi
echo "Installing missing Debian packages: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
