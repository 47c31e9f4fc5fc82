#!/usr/bin/env bash
# deps.sh: installs the Debian packages the benchmarks and their peer baselines need, only those missing.
#
# Idempotent: with everything present it runs dpkg -s and exits (well under a
# second). Needs root or sudo to install; otherwise it lists what is missing and
# exits 0 so that the demo can still run the benchmarks it can build.
# Usage: bench/scripts/deps.sh [--with-plot]   (--with-plot adds python3-matplotlib)
set -u

pkgs=(libtbb-dev libboost-fiber-dev libboost-context-dev valgrind python3 g++ cmake)
if [ "${1:-}" = "--with-plot" ]; then
    pkgs+=(python3-matplotlib)
fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg -s "$p" >/dev/null 2>&1; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all present (${pkgs[*]})"
    exit 0
fi

echo "deps: missing: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
    sudo_cmd=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo_cmd=(sudo -n)
else
    echo "deps: not root and no password-less sudo: install them by hand; benchmarks needing them are skipped"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if ! "${sudo_cmd[@]}" apt-get update -qq; then
    echo "deps: apt-get update failed; continuing without ${missing[*]}"
    exit 0
fi
if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    echo "deps: apt-get install failed; benchmarks needing ${missing[*]} are skipped"
    exit 0
fi
echo "deps: installed ${missing[*]}"
