#!/usr/bin/env bash
# Runs the gateway benchmark suite with `canopy bench` against fresh release servers and prints a Markdown report
# (issue 7): Canopy over the Firebase wire protocol, and the same fan-out against mosquitto's WebSocket listener
# (MQTT, QoS 0) and the SwiftNIO broadcast server, with Canopy's ratio to each.
#
#   benchmarks/run-gateway.sh [options] [-- extra canopy serve arguments]
#
# Scenarios (each starts a fresh server with an empty data directory; 64-byte JSON objects per write):
#   fanout        1 writer -> 1,000 and -> 10,000 subscribers of one path, writes within a window of unacknowledged
#                 writes (target >= 2 M deliveries/s to 10,000), against Canopy and the SwiftNIO broadcast server
#                 (benchmarks/nio-broadcast, raw WebSocket) in alternating rounds; the report takes medians
#   lat500k       500,000 deliveries/s at a fixed rate: 100 subscribers x 5,000 writes/s, 1,000 x 500/s and
#                 10,000 x 50/s (target p99 <= 5 ms)
#   rooms         100 rooms x 100 subscribers, 1 writer cycling through the rooms within its window
#   query         1,000 subscribers holding orderByChild("ts").limitToLast(50) windows on a list 1 writer appends to
#   writes        100 writers (each its own child) within a window of 8, 2 listeners of the parent: acked writes/s
#   connections   idle connections with one listen each, as many as the open-file limit allows (hard limit - 1,000):
#                 accept rate and server RSS per connection (target <= 2 KiB); each on its own path, then all
#                 on one path (connections-shared)
#   mosquitto     the same fan-outs against mosquitto 2 (Debian package) over MQTT-over-WebSocket, one round (it
#                 is 30-50x slower, so noise does not matter and a 10,000-subscriber run takes minutes)
#   stall         (not in the default list) fanout at 5,000 writes/s with one subscriber not reading for 30 s
#
# Options:
#   --binary PATH     Canopy binary, server and client (default .build/release/canopy, built unless --skip-build)
#   --nio PATH        nio-broadcast binary (default benchmarks/nio-broadcast/.build/release/nio-broadcast, built
#                     unless --skip-build)
#   --skip-build      use existing release builds
#   --only LIST       comma-separated scenarios (default: fanout,lat500k,rooms,query,writes,connections,mosquitto)
#   --rounds N        rounds of the fanout comparison (default 3; 1 with --quick)
#   --threads N       client epoll threads (default 1: on 2 cores the server needs the other one)
#   --window W        each writer's window in the fan-out runs (default 128)
#   --quick           smaller runs (about a minute in all): checks the harness
#   --out DIR         where logs, JSON reports and plots go (default: a new directory under /tmp)
#   --docs FILE       rewrite the generated section of FILE (docs/benchmarks.md) with the report
#   --plots DIR       copy the SVG plots there (linked from the report)
# Environment:
#   BUILD_LOCK        the lock every swift build must hold (default /tmp/canopy-swift-build.lock)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
canopy_bin="$root/.build/release/canopy"
nio_bin="$here/nio-broadcast/.build/release/nio-broadcast"
skip_build=0
only="fanout,lat500k,rooms,query,writes,connections,mosquitto"
rounds=""
threads=1
window=128
quick=0
out=""
docs=""
plots=""
canopy_extra=()
build_lock=${BUILD_LOCK:-/tmp/canopy-swift-build.lock}

usage() { sed -n '2,38p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --binary) canopy_bin=$2; shift 2 ;;
        --nio) nio_bin=$2; shift 2 ;;
        --skip-build) skip_build=1; shift ;;
        --only) only=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --out) out=$2; shift 2 ;;
        --docs) docs=$2; shift 2 ;;
        --plots) plots=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; canopy_extra=("$@"); break ;;
        *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
out=${out:-$(mktemp -d /tmp/canopy-gateway-bench.XXXXXX)}
mkdir -p "$out"
runs="$out/runs.txt"
: > "$runs"

# Workload sizes: a few million deliveries per throughput run (a few seconds each).
writes_1k=6000
writes_10k=600
writes_rooms=60000
writes_query=2000
writes_many=100000
rate_seconds=10
stall_seconds=30
connections=$(( $(ulimit -Hn) - 1000 ))
if [[ $quick == 1 ]]; then
    writes_1k=600; writes_10k=60; writes_rooms=6000; writes_query=200; writes_many=10000; rate_seconds=3
    stall_seconds=5; connections=2000; rounds=${rounds:-1}
fi
rounds=${rounds:-3}
client_timeout=240
server_start_timeout=30

# ---------------------------------------------------------------------------------------------- build
if [[ $skip_build == 0 ]]; then
    echo "building canopy (release) under $build_lock ..." >&2
    (cd "$root" && flock "$build_lock" swift build -c release --product canopy >&2)
    if [[ ,$only, == *,fanout,* ]]; then
        echo "building nio-broadcast (release) under $build_lock ..." >&2
        flock "$build_lock" swift build -c release --package-path "$here/nio-broadcast" \
            --scratch-path "$here/nio-broadcast/.build" >&2
    fi
fi
[[ -x $canopy_bin ]] || { echo "missing $canopy_bin (run without --skip-build)" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------- servers
source "$here/server-lifecycle.sh"
ulimit -n "$(ulimit -Hn)"   # servers started from here inherit the raised limit (mosquitto does not raise it)

# wait_for_logged_port LOG: waits until LOG says "listening on HOST:PORT" (the NIO server); sets server_port.
wait_for_logged_port() {
    local log=$1 deadline=$((SECONDS + server_start_timeout))
    while [[ -z $server_port ]]; do
        server_port=$(grep -o 'listening on [^ ]*:[0-9]\+' "$log" 2>/dev/null | head -1 | sed 's/.*://' || true)
        [[ -n $server_port ]] && break
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "the server exited during start-up; log:" >&2; cat "$log" >&2; server_pid=""; return 1
        fi
        (( SECONDS > deadline )) && { echo "no port within ${server_start_timeout}s" >&2; return 1; }
        sleep 0.1
    done
}

# start_server KIND NAME: a fresh canopy, mosquitto or nio server; sets server_pid and server_port.
start_server() {
    local kind=$1 name=$2 log="$out/$2-server.log"
    case "$kind" in
        canopy)
            start_canopy "$canopy_bin" "$out" "$name" "${canopy_extra[@]}" ;;
        mosquitto)
            # mosquitto 2.0.11 exits when a websockets listener is its only one, so it gets a TCP one as well.
            server_port=$(free_port)
            local tcp_port
            tcp_port=$(free_port)
            printf 'listener %s 127.0.0.1\nlistener %s 127.0.0.1\nprotocol websockets\nallow_anonymous true\n' \
                "$tcp_port" "$server_port" > "$out/$name-mosquitto.conf"
            mosquitto -c "$out/$name-mosquitto.conf" > "$log" 2>&1 &
            server_pid=$!
            local deadline=$((SECONDS + server_start_timeout))
            until grep -q "running" "$log" 2>/dev/null; do
                kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; server_pid=""; return 1; }
                (( SECONDS > deadline )) && return 1
                sleep 0.1
            done ;;
        nio)
            "$nio_bin" --host 127.0.0.1 --port 0 > "$log" 2>&1 &
            server_pid=$!
            wait_for_logged_port "$log" ;;
    esac
}

# run NAME KIND PATH BENCH-ARGS...: starts a fresh KIND server, runs `canopy bench BENCH-ARGS` against it, keeps
# the JSON report, plot and exact command, and records NAME in runs.txt (with FAIL when it failed).
run() {
    local name=$1 kind=$2 path=$3; shift 3
    if ! start_server "$kind" "$name"; then
        echo "$name FAIL" >> "$runs"; stop_server; return
    fi
    local url="ws://127.0.0.1:$server_port$path"
    local -a command=("$canopy_bin" bench "$@" --url "$url" --threads "$threads" --server-pid "$server_pid"
        --timeout "$client_timeout" --json "$out/$name.json" --plot "$out/$name.svg")
    [[ $kind == canopy ]] && command+=(--metrics-url "http://127.0.0.1:$server_port/.metrics")
    if [[ $name == connections* ]]; then   # warm up: one-time allocations are not per connection
        "$canopy_bin" bench connections --url "$url" --connections 100 --duration 0 --quiet || true
        sleep 0.5
    fi
    echo "$name: canopy bench $* ($kind pid $server_pid, port $server_port)" >&2
    printf '%q ' "${command[@]}" | sed "s|$canopy_bin|canopy|; s|$out/|OUT/|g" > "$out/$name.cmd"
    local status=0
    timeout --kill-after=5 $((client_timeout + 30)) "${command[@]}" > "$out/$name.log" 2>&1 || status=$?
    sed 's/^/    /' "$out/$name.log" >&2
    if [[ $status == 0 ]]; then echo "$name ok" >> "$runs"; else echo "$name FAIL" >> "$runs"; fi
    stop_server
    sleep 0.5
}

fanout() { echo fanout --subscribers "$1" --messages "$2" --window "$window"; }

IFS=, read -r -a scenarios <<< "$only"
for scenario in "${scenarios[@]}"; do
    case "$scenario" in
        fanout)
            for round in $(seq "$rounds"); do
                for size in 1k 10k; do
                    subscribers=1000; writes=$writes_1k
                    [[ $size == 10k ]] && { subscribers=10000; writes=$writes_10k; }
                    order=(canopy nio)
                    (( round % 2 == 0 )) && order=(nio canopy)   # alternate who goes first
                    for kind in "${order[@]}"; do
                        if [[ $kind == canopy ]]; then
                            run "fanout$size-r$round" canopy "" $(fanout "$subscribers" "$writes")
                        elif [[ -x $nio_bin ]]; then
                            run "nio-fanout$size-r$round" nio /broadcast $(fanout "$subscribers" "$writes") \
                                --protocol raw
                        else
                            echo "missing $nio_bin" >&2; echo "nio-fanout$size-r$round FAIL" >> "$runs"
                        fi
                    done
                done
            done ;;
        lat500k)
            run lat500k-100 canopy "" fanout --subscribers 100 --rate 5000 --duration "$rate_seconds"
            run lat500k-1k canopy "" fanout --subscribers 1000 --rate 500 --duration "$rate_seconds"
            run lat500k-10k canopy "" fanout --subscribers 10000 --rate 50 --duration "$rate_seconds" ;;
        rooms) run rooms canopy "" rooms --rooms 100 --subscribers 100 --messages "$writes_rooms" --window "$window" ;;
        query) run query canopy "" query --subscribers 1000 --limit 50 --prefill 50 --messages "$writes_query" ;;
        writes) run writes canopy "" writes --writers 100 --listeners 2 --messages "$writes_many" --window 8 ;;
        connections)
            run connections canopy "" connections --connections "$connections" --duration 2
            run connections-shared canopy "" connections --connections "$connections" --duration 2 --shared-path ;;
        mosquitto)
            if ! command -v mosquitto > /dev/null; then
                echo "mosquitto is not installed" >&2; echo "mosquitto FAIL" >> "$runs"; continue
            fi
            # mosquitto (libwebsockets, poll() over every connection) delivers in bursts with gaps of over 10 s at
            # 10,000 connections: allow a minute without progress before counting updates as lost.
            run mosquitto-fanout1k mosquitto / $(fanout 1000 "$writes_1k") --protocol mqtt --stall-limit 60
            run mosquitto-fanout10k mosquitto / $(fanout 10000 "$writes_10k") --protocol mqtt --stall-limit 60 ;;
        stall)
            run stall canopy "" fanout --subscribers 100 --rate 5000 --duration $((stall_seconds + 10)) \
                --stall-seconds "$stall_seconds" --stall-after 2 ;;
        *) echo "unknown scenario $scenario" >&2; exit 2 ;;
    esac
done

# ---------------------------------------------------------------------------------------------- report
report_args=(--out "$out")
[[ -n $docs ]] && report_args+=(--docs "$docs")
[[ -n $plots ]] && report_args+=(--plots "$plots")
python3 "$here/gateway-report.py" "${report_args[@]}"
if grep -q FAIL "$runs"; then
    echo "Some runs failed (FAIL above); logs are in $out." >&2
    exit 1
fi
