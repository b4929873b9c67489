#!/bin/bash
# Issue 19: `cmake --install` into a temporary prefix, the prefix moved elsewhere (the programs
# must find their data next to themselves, not where they were installed to), then every
# installed program run with the source and build trees hidden (a private mount namespace with
# an empty tmpfs over each): moe-plan on the installed samples, moe-planner's sample list and a
# screenshot (offscreen), moe-live's version and, under xvfb-run, a screenshot; the manual pages
# (gzip-compressed), the three programs' completions, the .desktop entry and the MIME type are
# checked as installed. Where no mount namespace can be made (no root, no user namespaces) the
# trees stay visible and it says so.
#
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$(realpath "$1")
SOURCE=$(realpath "$2")

# As root, or as a user where user namespaces are allowed; a container without either runs the
# programs with the trees in place (they still run from a prefix they were not installed to).
hide="unshare --mount --propagation private"
if ! $hide true 2>/dev/null; then
    hide="unshare --map-root-user --mount --propagation private"
    $hide true 2>/dev/null || hide=""
fi

T=$(mktemp -d /tmp/moe-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
cmake --install "$BUILD" --prefix "$T/installed" >/dev/null
mv "$T/installed" "$T/moved"
cd "$T"

cat >"$T/check.sh" <<'CHECK'
set -euo pipefail
P=$1 T=$2 SOURCE=$3 BUILD=$4
fail() { echo "FAIL: $*"; exit 1; }
if [ "${HIDDEN:-1}" = 1 ]; then
    [ ! -e "$SOURCE/CMakeLists.txt" ] || fail "the source tree is still visible"
    [ ! -e "$BUILD/CMakeCache.txt" ] || fail "the build tree is still visible"
fi
export PATH="$P/bin:/usr/bin:/bin" MOE_PLAN_PROGRESS=never QT_QPA_PLATFORM=offscreen
unset MOE_SAMPLES_DIR
DATA=$P/share/moe-planner

moe-plan --version | grep -x "moe-plan [0-9.]*" >/dev/null || fail "moe-plan --version"
moe-plan validate "$DATA"/sample_clusters/*.yaml "$DATA"/sample_clusters/*/*.yaml >/dev/null
moe-plan evaluate "$DATA/sample_clusters/mixtral-8x7b-32xh100.yaml" | grep "^MoE Planner report: " >/dev/null ||
    fail "moe-plan evaluate on an installed sample"
moe-plan evaluate | grep "^MoE Planner report: " >/dev/null || fail "moe-plan evaluate (built-in default)"
echo "moe-plan: version, validate and evaluate on the installed samples"

moe-planner --version | grep -x "moe-planner [0-9.]*" >/dev/null || fail "moe-planner --version"
listed=$(moe-planner --list-samples)
expected=$(ls "$DATA"/sample_clusters/*.yaml)
[ "$listed" = "$expected" ] || fail "moe-planner --list-samples gave: $listed"
moe-planner --screenshot "$T/planner.png" --size 1000x700 \
    "$DATA/sample_clusters/dgx-h100-8x8-moe16.yaml" 2>/dev/null
[ "$(head -c 4 "$T/planner.png" | tail -c 3)" = PNG ] || fail "moe-planner --screenshot"
echo "moe-planner: version, $(wc -l <<<"$listed") installed samples listed, screenshot"

moe-live --version | grep -x "moe-live [0-9.]*" >/dev/null || fail "moe-live --version"
if command -v xvfb-run >/dev/null; then
    # Sanitizer builds: Mesa's driver is unloaded before LeakSanitizer runs and its allocations
    # look like leaks from an unknown module (as in test_moe_live); address and UB checks stay on.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" xvfb-run -a --server-args="-screen 0 1024x768x24" moe-live --size 800x600 \
        --screenshot "$T/live.png" "$DATA/sample_clusters/dgx-h100-8x8-moe16.yaml" >/dev/null 2>&1
    [ "$(head -c 4 "$T/live.png" | tail -c 3)" = PNG ] || fail "moe-live --screenshot"
    echo "moe-live: version, screenshot under xvfb-run"
else
    echo "moe-live: version (no xvfb-run for a screenshot)"
fi

# Compressed with gzip -9n, as Debian installs manual pages (the .deb's lintian would flag
# uncompressed ones).
for page in moe-plan moe-planner moe-live; do
    gzip -t "$P/share/man/man1/$page.1.gz" 2>/dev/null || fail "man page $page.1.gz is not gzip"
    zcat "$P/share/man/man1/$page.1.gz" | grep -q "^\.TH \"*${page^^}" || fail "man page $page.1.gz"
    [ ! -e "$P/share/man/man1/$page.1" ] || fail "uncompressed $page.1 installed too"
done
if command -v man >/dev/null; then
    grep -q "^moe-plan sweep:" <<<"$(man -l "$P/share/man/man1/moe-plan.1.gz" 2>/dev/null | sed 's/^ *//')" ||
        fail "moe-plan.1 lacks the sweep command"
fi
# Each program's bash completion completes one of its options from a prefix, and its zsh
# completion is a #compdef file (zsh -n checks its syntax where zsh is installed).
complete_word() { # PROGRAM WORD...: what bash completion offers for the last word
    bash -c 'source "$1/share/bash-completion/completions/$2" && shift 2 &&
        COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && $(complete -p "${COMP_WORDS[0]}" |
        sed "s/.*-F \([^ ]*\) .*/\1/") && echo "${COMPREPLY[*]}"' _ "$P" "$@"
}
[ "$(complete_word moe-plan moe-plan swe)" = sweep ] || fail "moe-plan bash completion"
[ "$(complete_word moe-planner moe-planner --scr)" = --screenshot ] || fail "moe-planner bash completion"
[ "$(complete_word moe-live moe-live --met)" = --metric ] || fail "moe-live bash completion"
for program in moe-plan moe-planner moe-live; do
    zsh_file="$P/share/zsh/vendor-completions/_$program"
    head -n 1 "$zsh_file" | grep -qx "#compdef $program" || fail "zsh completion of $program"
    if command -v zsh >/dev/null; then zsh -n "$zsh_file" || fail "zsh syntax of _$program"; fi
done
echo "manual pages (gzip), bash and zsh completion of the three programs"

if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$P/share/applications/moe-planner.desktop"
fi
grep -qx "Icon=moe-planner" "$P/share/applications/moe-planner.desktop"
[ -s "$P/share/icons/hicolor/scalable/apps/moe-planner.svg" ] || fail "icon"
if command -v update-mime-database >/dev/null; then
    update-mime-database "$P/share/mime" >"$T/mime.log" 2>&1 || { cat "$T/mime.log"; fail "MIME"; }
    grep -q "application/x-moe-planner-scenario" "$P/share/mime/globs2" || fail "MIME glob"
    if command -v gio >/dev/null; then
        cp "$DATA/sample_clusters/dgx-h100-8x8-moe16.yaml" "$T/study.moe.yaml"
        cp "$DATA/sample_clusters/dgx-h100-8x8-moe16.yaml" "$T/unnamed"
        for f in study.moe.yaml unnamed; do
            type=$(XDG_DATA_DIRS="$P/share" gio info -a standard::content-type "$T/$f" |
                sed -n 's/.*standard::content-type: //p')
            [ "$type" = application/x-moe-planner-scenario ] || fail "$f is $type"
        done
    fi
fi
echo "desktop entry, icon, MIME type (by name *.moe.yaml and by content)"
CHECK
if [ -z "$hide" ]; then
    echo "NOTE: no mount namespace here (needs root or user namespaces): the source and build"
    echo "      trees stay visible; the programs still run from the moved prefix"
    HIDDEN=0 bash "$T/check.sh" "$T/moved" "$T" "$SOURCE" "$BUILD"
    echo "PASS: installed to a prefix, moved, and run (trees not hidden)"
    exit 0
fi
# shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
$hide bash -c 'mount -t tmpfs none "$3" 2>/dev/null || true; mount -t tmpfs none "$2" &&
    bash "$1/check.sh" "$1/moved" "$1" "$2" "$3"' _ "$T" "$SOURCE" "$BUILD"
echo "PASS: installed to a prefix, moved, and run with the source and build trees hidden"
