#!/usr/bin/env bash
# httpd.sh: seed 2's web-server experiment: examples/httpd with a weft user
# thread per connection vs a pthread per connection vs Go net/http, driven by
# wrk on loopback at 100 and 1,000 keep-alive connections. Prints one RESULT
# line per run and a table; medians of REPS runs of DURATION seconds.
# IMPLS picks the servers; weft-trace and go-trace are weft with WEFT_TRACE
# and Go with runtime/trace recording while they serve (the tracing
# overhead; weft's trace is in memory, as the server is killed before
# weft_finalize would write it), each in the same invocation as its
# untraced run.
#
#   bench/scripts/httpd.sh [BUILD_DIR]
#   (env: REPS=3 DURATION=5 CONNS="100 1000" IMPLS="weft pthread go")
#   IMPLS="weft weft-trace go go-trace" CONNS=1000 bench/scripts/httpd.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
reps=${REPS:-3}
dur=${DURATION:-5}
conns=${CONNS:-"100 1000"}
impls=${IMPLS:-"weft pthread go"}
port=18080
# The commit the programs were built from (bench/scripts/commit.cmake), for the RESULT lines.
commit=$(cat "$build/bench/commit.txt" 2>/dev/null || echo unknown)
command -v wrk >/dev/null || { echo "httpd.sh: wrk is missing (apt-get install wrk)"; exit 0; }
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# The Go server is built into the build directory, never into the source
# tree (.gitignore keeps build outputs out of the repository).
gobin=""
if command -v go >/dev/null || [ -x /usr/local/go/bin/go ]; then
    GO=$(command -v go || echo /usr/local/go/bin/go)
    gobin=$build/bench/httpd_go
    (cd "$src/bench/apps/httpd_go" && GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0 "$GO" build -o "$gobin" .) ||
        gobin=""
fi

run_server() { # impl -> pid
    case $1 in
        weft) "$build/examples/example_httpd" -P $port >/dev/null 2>&1 & ;;
        pthread) "$build/examples/example_httpd" -p -P $port >/dev/null 2>&1 & ;;
        go) "$gobin" -P $port >/dev/null 2>&1 & ;;
        weft-trace) WEFT_TRACE="$build/httpd-weft.trace.json" "$build/examples/example_httpd" -P $port >/dev/null 2>&1 & ;;
        go-trace) "$gobin" -P $port -trace "$build/httpd-go.trace" >/dev/null 2>&1 & ;;
    esac
    echo $!
}

declare -A rps p99
for impl in $impls; do
    case $impl in go*) [ -z "$gobin" ] && continue ;; esac
    for c in $conns; do
        vals=(); lats=()
        for r in $(seq "$reps"); do
            pid=$(run_server $impl)
            sleep 0.5
            out=$(wrk -t1 -c"$c" -d"${dur}s" --latency "http://127.0.0.1:$port/" 2>&1)
            kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
            v=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
            l=$(echo "$out" | awk '$1=="99%" {print $2}')
            [ -n "$v" ] && vals+=("$v") && lats+=("$l")
            port=$((port + 1))
        done
        med=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        medl=$(printf '%s\n' "${lats[@]}" | awk '{print $1}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        rps[$impl,$c]=$med; p99[$impl,$c]=$medl
        echo "RESULT bench=httpd impl=$impl workers=0 param=c$c median_rps=$med p99=$medl runs=${#vals[@]} commit=$commit"
    done
done
echo
echo "| connections | weft req/s | pthread req/s | go req/s | weft/pthread | weft/go | p99 weft / pthread / go |"
echo "|---|---|---|---|---|---|---|"
for c in $conns; do
    w=${rps[weft,$c]:-0}; p=${rps[pthread,$c]:-0}; g=${rps[go,$c]:-0}
    printf "| %s | %s | %s | %s | %s | %s | %s / %s / %s |\n" "$c" "$w" "$p" "$g" \
        "$(awk -v a="$w" -v b="$p" 'BEGIN{printf (b>0? "%.2f": "-"), a/b}')" \
        "$(awk -v a="$w" -v b="$g" 'BEGIN{printf (b>0? "%.2f": "-"), a/b}')" \
        "${p99[weft,$c]:-}" "${p99[pthread,$c]:-}" "${p99[go,$c]:-}"
done
for c in $conns; do
    for base in weft go; do
        t=${rps[$base-trace,$c]:-}; u=${rps[$base,$c]:-}
        [ -n "$t" ] && [ -n "$u" ] &&
            awk -v t="$t" -v u="$u" -v b="$base" -v c="$c" \
                'BEGIN { if (u > 0) printf "%s traced at %s connections: %.1f %% of the untraced throughput\n", b, c, t / u * 100 }'
    done
done
