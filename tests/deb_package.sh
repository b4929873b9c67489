#!/bin/bash
# Issue 19: `cpack -G DEB` builds the .deb of the installed tree: the three programs, samples,
# desktop entry, icon, MIME type, manual pages and completion, with the library packages it
# needs listed by dpkg-shlibdeps. Exits 77 (CTest: skipped) without dpkg-deb and dpkg-shlibdeps.
#
# Usage: deb_package.sh BUILD_DIR
set -euo pipefail
BUILD=$(realpath "$1")
for tool in dpkg-deb dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not found (apt-get install dpkg-dev)"; exit 77; }
done
T=$(mktemp -d /tmp/moe-deb.XXXXXX)
trap 'rm -rf "$T"' EXIT
cpack -G DEB -B "$T" --config "$BUILD/CPackConfig.cmake" >"$T/cpack.log" 2>&1 ||
    { cat "$T/cpack.log"; exit 1; }
deb=$(ls "$T"/moe-planner_*_*.deb)
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for path in ./usr/bin/moe-plan ./usr/bin/moe-planner ./usr/bin/moe-live \
    ./usr/share/moe-planner/sample_clusters/dgx-h100-8x8-moe16.yaml \
    ./usr/share/moe-planner/resources/catalog.yaml \
    ./usr/share/moe-planner/examples/slurm/sweep-array.sbatch \
    ./usr/share/applications/moe-planner.desktop \
    ./usr/share/icons/hicolor/scalable/apps/moe-planner.svg \
    ./usr/share/mime/packages/moe-planner.xml \
    ./usr/share/bash-completion/completions/moe-plan ./usr/share/zsh/vendor-completions/_moe-plan \
    ./usr/share/bash-completion/completions/moe-planner ./usr/share/zsh/vendor-completions/_moe-planner \
    ./usr/share/bash-completion/completions/moe-live ./usr/share/zsh/vendor-completions/_moe-live; do
    grep -qx "$path" <<<"$contents" || { echo "FAIL: $path is not in $(basename "$deb")"; exit 1; }
done
if command -v help2man >/dev/null; then
    for page in moe-plan moe-planner moe-live; do
        grep -qx "./usr/share/man/man1/$page.1.gz" <<<"$contents" ||
            { echo "FAIL: no compressed manual page $page.1.gz"; exit 1; }
    done
fi
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libqt6widgets6 libyaml-cpp libglfw3; do
    grep -q "$lib" <<<"$depends" || { echo "FAIL: Depends lacks $lib: $depends"; exit 1; }
done
echo "PASS: $(basename "$deb"), $(wc -l <<<"$contents") entries, $(du -k "$deb" | cut -f1) kB"
echo "Depends: $depends"
