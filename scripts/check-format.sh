#!/usr/bin/env bash
# check-format.sh: fails when a C or C++ file under src/ include/ tests/ bench/ examples/ differs from what clang-format makes of it (.clang-format).
#
#   scripts/check-format.sh            check every tracked file; print the diffs, exit 1 on any
#   scripts/check-format.sh --list     only name the files that would change
#   scripts/check-format.sh --fix      format those files in place
#   scripts/check-format.sh [opts] FILE...   the same for the files given
#
# CLANG_FORMAT picks the binary (default: clang-format). The style is checked
# with Debian bookworm's clang-format 14 (scripts/install-deps.sh format
# installs it); another major version may format some lines differently, so
# the script says so when it runs one. Exit: 0 clean, 1 files differ, 2 no
# clang-format or bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."

want_major=14
mode=check
case "${1:-}" in
    --list) mode=list; shift ;;
    --fix) mode=fix; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-format: unknown option $1" >&2; exit 2 ;;
esac

cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null 2>&1; then
    scripts/install-deps.sh format >&2 || true
fi
if ! command -v "$cf" >/dev/null 2>&1; then
    echo "check-format: $cf not found (Debian: clang-format; scripts/install-deps.sh format)" >&2
    exit 2
fi
major=$("$cf" --version | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -n 1)
if [ "$major" != "$want_major" ]; then
    echo "check-format: note: $cf is version ${major:-unknown}, the style is checked with $want_major" >&2
fi

if [ $# -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(git ls-files -- 'src/*.[ch]' 'include/*.h' 'tests/*.[ch]' 'bench/*.[ch]' \
        'bench/*.cpp' 'bench/*.hpp' 'examples/*.[ch]')
fi

bad=0
for f in "${files[@]}"; do
    if ! "$cf" --style=file "$f" | diff -u --label "a/$f" --label "b/$f" "$f" - >"${TMPDIR:-/tmp}/check-format.$$" 2>&1; then
        bad=$((bad + 1))
        case $mode in
            check) cat "${TMPDIR:-/tmp}/check-format.$$" ;;
            list) echo "$f" ;;
            fix) "$cf" --style=file -i "$f" ;;
        esac
    fi
done
rm -f "${TMPDIR:-/tmp}/check-format.$$"

if [ "$mode" = fix ]; then
    echo "check-format: formatted $bad of ${#files[@]} files"
    exit 0
fi
if [ $bad -gt 0 ]; then
    echo "check-format: $bad of ${#files[@]} files differ from .clang-format (scripts/check-format.sh --fix formats them)" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
