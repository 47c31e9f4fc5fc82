#!/usr/bin/env bash
# install-deps.sh: installs the Debian packages a target needs, only the missing ones.
#
#   scripts/install-deps.sh build   compiler, CMake, liburing, valgrind headers, libdw, gdb, MPICH,
#                                   and the servers posix tests run under the drop-in: civetweb,
#                                   wrk, mariadb-server, sysbench, apache2 (under a minute)
#   scripts/install-deps.sh bench   build + the peers' packages and OpenBLAS/LAPACKE (Cholesky)
#   scripts/install-deps.sh format  clang-format, for scripts/check-format.sh
#
# Idempotent and quiet when everything is present (dpkg -s only). Needs root
# or password-less sudo to install; otherwise it says what is missing and
# goes on: the build leaves out optional parts and says so.
set -u

build_pkgs=(gcc g++ make cmake ninja-build pkg-config liburing-dev valgrind libdw-dev gdb mpich libmpich-dev civetweb wrk
            mariadb-server sysbench apache2)
bench_pkgs=(libtbb-dev liblapacke-dev libopenblas-dev libboost-fiber-dev libboost-context-dev python3 python3-matplotlib sysbench strace)

want=("${build_pkgs[@]}")
case "${1:-build}" in
    build) ;;
    bench) want+=("${bench_pkgs[@]}")
           command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || want+=(golang-go) ;;
    format) want=(clang-format) ;;
    *) echo "usage: $0 build|bench|format" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: missing: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
    sudo_cmd=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo_cmd=(sudo -n)
else
    echo "install-deps: not root and no password-less sudo; install them by hand (optional parts are left out)"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt or dpkg (unattended upgrades, a second make) instead
# of failing on its lock.
apt=(apt-get -o DPkg::Lock::Timeout=300)
"${sudo_cmd[@]}" "${apt[@]}" update -qq || { echo "install-deps: apt-get update failed; going on"; exit 0; }
# One by one, so a package this release lacks does not stop the others.
for p in "${missing[@]}"; do
    "${sudo_cmd[@]}" "${apt[@]}" install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
        echo "install-deps: could not install $p; going on without it"
done
exit 0
