#!/bin/sh
# bench/posix/apache.sh BUILD [rounds] [seconds]: Debian's Apache 2.4 with
# mpm_worker (16 children x 64 threads, all started up front, one Listen on
# 127.0.0.1 and a free port; a private configuration, PidFile, ErrorLog and
# runtime directory in a temporary directory, apache2 -DFOREGROUND) serving
# a 140-byte static file, loaded by wrk (2 threads, --latency) at 100 and
# 1,000 connections, natively and under libweft-pthread (LD_PRELOAD, as
# bin/weft-run), rounds interleaved. Each run reports req/s, p99, and the
# RSS and kernel threads of the parent and its children together, sampled
# mid-run; then the medians. Loopback only; each run is bounded by
# [seconds] (default 5). Skipped (77) without apache2 or wrk.
set -eu
B=${1:?usage: apache.sh BUILD [rounds] [seconds]}
R=${2:-3}
D=${3:-5}
. "$(dirname "$0")/lib.sh"
MODS=/usr/lib/apache2/modules
PATH=$PATH:/usr/sbin
command -v apache2 >/dev/null && [ -f $MODS/mod_mpm_worker.so ] && command -v wrk >/dev/null || {
    echo "apache.sh: needs apache2 and wrk (apt-get install apache2 wrk)" >&2
    exit 77
}
ulimit -n 8192 2>/dev/null || true
dir=$(mktemp -d /tmp/weft_apacheXXXXXX)
chmod 755 "$dir"
out=$dir/results
srv=
stop() {
    [ -n "$srv" ] || return 0
    kill -TERM -"$srv" 2>/dev/null || true
    wait_gone "$srv" 30
    kill -KILL -"$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    wait_gone -"$srv" 50
    srv=
}
trap 'stop; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM
wrk_file
conf() { # port
    cat <<EOF
ServerRoot $dir
ServerName 127.0.0.1
Listen 127.0.0.1:$1
LoadModule mpm_worker_module $MODS/mod_mpm_worker.so
LoadModule authz_core_module $MODS/mod_authz_core.so
LoadModule mime_module $MODS/mod_mime.so
TypesConfig /etc/mime.types
PidFile $dir/httpd.pid
ErrorLog $dir/error.log
LogLevel warn
DefaultRuntimeDir $dir
DocumentRoot $dir
StartServers 16
ServerLimit 16
ThreadsPerChild 64
MaxRequestWorkers 1024
MinSpareThreads 64
MaxSpareThreads 1024
KeepAliveTimeout 5
MaxKeepAliveRequests 0
<Directory $dir>
  Require all granted
</Directory>
EOF
    [ "$(id -u)" -ne 0 ] || printf 'User nobody\nGroup nogroup\n'
}
run() { # mode conns
    pre=$(preload "$1")
    port=$(free_port)
    conf "$port" >"$dir/httpd.conf"
    setsid sh -c "LD_PRELOAD=$pre exec apache2 -f $dir/httpd.conf -DFOREGROUND" >/dev/null 2>&1 &
    srv=$!
    up "$port" || { echo "apache2 did not start" >&2; tail "$dir/error.log" >&2; exit 1; }
    sleep 1 # the children start their threads
    wrk_load "$2" "$port"
    sample $srv $(cat "/proc/$srv/task/$srv/children" 2>/dev/null)
    wait $w
    stop
    wrk_row apache "$1" "$2"
}
rounds wrk_round
wrk_medians apache 'RSS KiB (all processes) | kernel threads (all processes)'
