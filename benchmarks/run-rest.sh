#!/usr/bin/env bash
# Runs the REST benchmark (issue 6, acceptance 4) against a release build of Canopy with wrk and prints a Markdown
# table: requests/s and latency of GET and PUT of a small value over 64 keep-alive connections.
#
#   benchmarks/run-rest.sh [--skip-build] [--binary PATH] [--duration S] [--connections N] [--rounds R]
#                          [--out DIR] [-- extra canopy serve arguments]
#
# Scenarios, each against a fresh server with an empty data directory (fsync "always", the default):
#   get         GET /bench/item.json (a 22-byte object)
#   put         PUT /bench/item.json with the same object; the answer echoes the stored value
#   put-silent  the same PUT with print=silent (204, what firebase-admin's set() sends)
#   put-pipelined  the same PUT, 32 pipelined at a time on each connection (HTTP/1.1 pipelining; wrk sends a
#               connection's next 32 once the last 32 are answered)
# Rounds alternate the scenarios; the table gives each scenario's median requests/s.
# Environment: BUILD_LOCK (default /tmp/canopy-swift-build.lock) is held for the release build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
canopy_bin="$root/.build/release/canopy"
skip_build=0
duration=10
connections=64
rounds=3
out=""
canopy_extra=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --skip-build) skip_build=1 ;;
        --binary) canopy_bin=$2; shift ;;
        --duration) duration=$2; shift ;;
        --connections) connections=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --out) out=$2; shift ;;
        --) shift; canopy_extra=("$@"); break ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
if [[ $skip_build -eq 0 ]]; then
    flock "${BUILD_LOCK:-/tmp/canopy-swift-build.lock}" swift build -c release --product canopy --package-path "$root" >&2
fi
out=${out:-$(mktemp -d /tmp/canopy-rest-bench.XXXXXX)}
mkdir -p "$out"
source "$here/server-lifecycle.sh"

# run NAME: one wrk run against a fresh server; prints "requests/s p50 p99" (latencies as wrk prints them).
run() {
    local name=$1 url script=()
    start_canopy "$canopy_bin" "$out" "$name" "${canopy_extra[@]}" || exit 1
    url="http://127.0.0.1:$server_port/bench/item.json"
    curl -sf -X PUT -d '{"name":"small","n":1}' "$url" > /dev/null
    case $name in
        put) script=(-s "$here/rest/put.lua") ;;
        put-silent) script=(-s "$here/rest/put.lua"); url="$url?print=silent" ;;
        put-pipelined) script=(-s "$here/rest/put-pipelined.lua") ;;
    esac
    local depth=()
    [[ $name == put-pipelined ]] && depth=(-- 32)
    wrk -t1 -c"$connections" -d"${duration}s" --latency "${script[@]}" "$url" "${depth[@]}" > "$out/$name.wrk" 2>&1
    stop_server
    local rps p50 p99
    rps=$(awk '/^Requests\/sec/ {print $2}' "$out/$name.wrk")
    p50=$(awk '$1 == "50%" {print $2}' "$out/$name.wrk")
    p99=$(awk '$1 == "99%" {print $2}' "$out/$name.wrk")
    [[ $p99 == 0.00us ]] && p99="n/a"  # wrk times a pipelined batch, not each request
    echo "$rps $p50 $p99"
}

declare -A results
for round in $(seq "$rounds"); do
    for name in get put put-silent put-pipelined; do
        line=$(run "$name")
        echo "round $round $name: $line" >&2
        results[$name]+="$line"$'\n'
    done
done

echo "| scenario | requests/s (median of $rounds) | p50 | p99 | all rounds (requests/s) |"
echo "|---|---|---|---|---|"
for name in get put put-silent put-pipelined; do
    sorted=$(printf '%s' "${results[$name]}" | sort -n -k1,1)
    median=$(printf '%s\n' "$sorted" | sed -n "$(( (rounds + 1) / 2 ))p")
    all=$(printf '%s' "${results[$name]}" | awk '{printf "%s%.0f", (NR>1?", ":""), $1}')
    read -r rps p50 p99 <<< "$median"
    printf '| %s | %.0f | %s | %s | %s |\n' "$name" "$rps" "$p50" "$p99" "$all"
done
echo "raw output: $out" >&2
