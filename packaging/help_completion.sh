#!/bin/bash
# Bash and zsh completion for a program whose options are listed by its --help, one option a
# line ("  -h, --help  text", "  --export <DIR>  text", "  --gpus N  text"): generated at build
# time from the built program, so it cannot drift from what the program accepts (moe-planner and
# moe-live; moe-plan has its own generator, `moe-plan --completion`, that knows its commands).
# A value named DIR completes directories, one that looks like a file name (OUT.png, B.yaml, PNG)
# completes files, any other value nothing; the positional argument completes .yaml/.yml files.
#
# Usage: help_completion.sh PROGRAM NAME OUT_DIR   (writes OUT_DIR/NAME and OUT_DIR/_NAME)
set -euo pipefail
program=$1 name=$2 out=$3
help=$(QT_QPA_PLATFORM=offscreen ASAN_OPTIONS=detect_leaks=0 "$program" --help 2>/dev/null)

# One line per option: OPTION KIND DESCRIPTION (KIND: flag, dir, file or value). Option lines are
# indented by a few spaces; wrapped description lines are indented further and are skipped
# (mawk, Debian's awk, has no {m,n} intervals: the indentation is measured).
spec=$(awk -v quote="'" '
/^ +-/ && match($0, /^ +/) && RLENGTH <= 6 {
    line = $0
    sub(/^ +/, "", line)
    text = ""
    if (match(line, /  +/)) {
        text = substr(line, RSTART + RLENGTH)
        line = substr(line, 1, RSTART - 1)
    }
    value = ""
    if (match(line, / [^-,][^,]*$/)) {
        value = substr(line, RSTART + 1)
        line = substr(line, 1, RSTART - 1)
    }
    gsub(/[<>]/, "", value)
    kind = value == "" ? "flag" : value == "DIR" ? "dir" : \
           (value ~ /\.[A-Za-z]+$/ || value ~ /^(PNG|FILE)$/) ? "file" : "value"
    # zsh reads the text inside [...] of a single-quoted spec
    gsub(/[\[\]:`$\\]/, "", text)
    gsub(quote, "", text)
    n = split(line, names, /, */)
    for (i = 1; i <= n; i++)
        if (names[i] ~ /^-/)
            print names[i], kind, text
}' <<<"$help")
[ -n "$spec" ] || { echo "help_completion.sh: no options in $name --help" >&2; exit 1; }

options_of() { awk -v k="$1" '$2 == k || k == "" { printf "%s%s", sep, $1; sep = "|" }' <<<"$spec"; }
all=$(awk '{ printf "%s%s", sep, $1; sep = " " }' <<<"$spec")
function=_$(tr -c 'A-Za-z0-9\n' _ <<<"$name")

mkdir -p "$out"
case_line() { [ -z "$(options_of "$1")" ] || echo "        $(options_of "$1")) $2; return ;;"; }
{
    echo "# bash completion for $name, generated from \`$name --help\` by packaging/help_completion.sh; do not edit."
    echo "$function() {"
    cat <<'BASH'
    local cur=${COMP_WORDS[COMP_CWORD]} prev="" IFS=$'\n'
    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
    case "$prev" in
BASH
    case_line dir 'COMPREPLY=($(compgen -d -- "$cur"))'
    case_line file 'COMPREPLY=($(compgen -f -- "$cur"))'
    case_line value 'COMPREPLY=()'
    cat <<BASH
    esac
    if [[ \$cur == -* ]]; then
        COMPREPLY=(\$(IFS=' '; compgen -W "$all" -- "\$cur"))
    else
BASH
    cat <<'BASH'
        COMPREPLY=($(compgen -d -- "$cur"; compgen -f -X '!*.yaml' -- "$cur"; compgen -f -X '!*.yml' -- "$cur"))
    fi
}
BASH
    echo "complete -o filenames -F $function $name"
} >"$out/$name"

{
    echo "#compdef $name"
    echo "# zsh completion for $name, generated from \`$name --help\` by packaging/help_completion.sh; do not edit."
    echo "_arguments \\"
    while read -r option kind text; do
        action=""
        case $kind in
        dir) action=":directory:_files -/" ;;
        file) action=":file:_files" ;;
        value) action=":value: " ;;
        esac
        echo "  '*$option[$text]$action' \\"
    done <<<"$spec"
    echo "  '*:scenario:_files -g \"*.(yaml|yml)\"'"
} >"$out/_$name"
