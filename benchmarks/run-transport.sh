#!/usr/bin/env bash
# Runs Canopy's transport benchmarks side by side against the SwiftNIO baseline server and prints a Markdown table.
#
#   benchmarks/run-transport.sh [options] [CANOPY_BINARY [-- extra canopy serve arguments]]
#
# Without CANOPY_BINARY only the NIO server is measured (useful to check the harness). The load client is
# `canopy bench` (echo, fanout --protocol raw, connections --protocol raw) from CANOPY_BINARY or --client.
#
# Workloads (each round starts a fresh server for every workload; servers alternate who goes first per round):
#   echo       100 connections, one 64-byte message in flight each: round trips/s (and p50/p99 latency)
#   broadcast  1,000 and 10,000 connections, one sender, 64-byte messages, a bounded in-flight window:
#              deliveries/s = frames received by all connections / time from first send to last delivery
#   idle       10,000 open WebSocket connections: (VmRSS after - VmRSS before) / 10,000, in bytes
#
# Options:
#   --rounds N           rounds per server and workload (default 3; the table shows medians)
#   --quick              shorter runs (echo 2 s, fewer broadcast messages) to check the harness
#   --skip-build         use the existing release build of nio-broadcast
#   --client PATH        the canopy binary whose `bench` drives the load (default: CANOPY_BINARY, else
#                        .build/release/canopy)
#   --nio PATH           the nio-broadcast binary (default: benchmarks/nio-broadcast/.build/release/nio-broadcast)
#   --window W           broadcast sender's in-flight window (default 32; 1 = one message at a time)
#   --only LIST          comma-separated workloads to run: echo,broadcast1k,broadcast10k,idle (default: all)
#   --out DIR            where logs and raw results go (default: a new directory under /tmp)
# Environment:
#   CANOPY_SERVE_ARGS    replaces the default Canopy arguments; {PORT_FILE} is replaced by the port file's path.
#                        Default: serve --host 127.0.0.1 --port 0 --port-file {PORT_FILE} --data-dir OUT/canopy-data
#                                 --echo-path /echo --broadcast-path /broadcast
#   BUILD_LOCK           the lock every swift build must hold (default /tmp/canopy-swift-build.lock)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rounds=3
quick=0
skip_build=0
only="echo,broadcast1k,broadcast10k,idle"
out=""
window=32
canopy_bin=""
client_bin=""
nio_bin="$here/nio-broadcast/.build/release/nio-broadcast"
canopy_extra=()
build_lock=${BUILD_LOCK:-/tmp/canopy-swift-build.lock}

usage() { sed -n '2,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --skip-build) skip_build=1; shift ;;
        --only) only=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --client) client_bin=$2; shift 2 ;;
        --nio) nio_bin=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; canopy_extra=("$@"); break ;;
        -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
        *)
            canopy_bin=$1; shift
            if [[ ${1:-} == "--" ]]; then shift; canopy_extra=("$@"); fi
            break ;;
    esac
done
if [[ -n $canopy_bin && ! -x $canopy_bin ]]; then
    echo "not an executable: $canopy_bin" >&2
    exit 2
fi
out=${out:-$(mktemp -d /tmp/canopy-bench.XXXXXX)}
mkdir -p "$out"
results="$out/results.txt"
: > "$results"

# Workload sizes: full runs take ~1-3 s each on 2 cores; --quick divides them.
echo_seconds=5
messages_1k=3000
messages_10k=300
idle_connections=10000
if [[ $quick == 1 ]]; then
    echo_seconds=2
    messages_1k=500
    messages_10k=50
fi
client_timeout=120   # seconds any single client run may take
server_start_timeout=30

# ---------------------------------------------------------------------------------------------- build
if [[ $skip_build == 0 ]]; then
    echo "building nio-broadcast (release) under $build_lock ..." >&2
    flock "$build_lock" swift build -c release --package-path "$here/nio-broadcast" \
        --scratch-path "$here/nio-broadcast/.build" >&2
fi
client_bin=${client_bin:-${canopy_bin:-$here/../.build/release/canopy}}
for binary in "$client_bin" "$nio_bin"; do
    [[ -x $binary ]] || { echo "missing $binary (run without --skip-build)" >&2; exit 1; }
done

# ---------------------------------------------------------------------------------------------- servers
source "$here/server-lifecycle.sh"

# start_server NAME LOG: starts a fresh server and sets server_pid and server_port.
start_server() {
    local name=$1 log=$2 port_file="$out/port-file"
    rm -f "$port_file"
    case "$name" in
        nio)
            "$nio_bin" --host 127.0.0.1 --port 0 > "$log" 2>&1 &
            ;;
        canopy)
            local args
            if [[ -n ${CANOPY_SERVE_ARGS:-} ]]; then
                read -r -a args <<< "${CANOPY_SERVE_ARGS//\{PORT_FILE\}/$port_file}"
            else
                args=(serve --host 127.0.0.1 --port 0 --port-file "$port_file" --data-dir "$out/canopy-data"
                    --namespaces '*' --echo-path /echo --broadcast-path /broadcast)
            fi
            "$canopy_bin" "${args[@]}" "${canopy_extra[@]}" > "$log" 2>&1 &
            ;;
    esac
    server_pid=$!
    local deadline=$((SECONDS + server_start_timeout))
    while [[ -z $server_port ]]; do
        if [[ -s $port_file ]]; then
            server_port=$(tr -dc '0-9' < "$port_file")
        else
            server_port=$(grep -o 'listening on [^ ]*:[0-9]\+' "$log" 2>/dev/null | head -1 | sed 's/.*://' || true)
        fi
        if [[ -z $server_port ]]; then
            if ! kill -0 "$server_pid" 2>/dev/null; then
                echo "$name exited during start-up; log:" >&2; cat "$log" >&2; return 1
            fi
            if (( SECONDS > deadline )); then
                echo "$name did not report its port within ${server_start_timeout}s" >&2; return 1
            fi
            sleep 0.1
        fi
    done
}


# json_field FILE KEY: a value from a `canopy bench --json` report (KEY may be dotted, e.g. latency.p99), or empty.
json_field() {
    python3 - "$1" "$2" <<'PY' 2>/dev/null || true
import json, sys
value = json.load(open(sys.argv[1]))
for part in sys.argv[2].split("."):
    value = value.get(part) if isinstance(value, dict) else None
print("" if value is None else value)
PY
}

# record SERVER WORKLOAD ROUND VALUE [KEY=VALUE ...]
record() { echo "$*" >> "$results"; }

# ---------------------------------------------------------------------------------------------- workloads
# run_client LOG JSON PATH ARGS...: runs `canopy bench ARGS` against the current server at PATH; true when it passed.
run_client() {
    local log=$1 json=$2 path=$3; shift 3
    if timeout --kill-after=5 "$client_timeout" "$client_bin" bench "$@" --url "ws://127.0.0.1:$server_port$path" \
        --json "$json" > "$log" 2>&1 && [[ -s $json ]]; then
        return 0
    fi
    echo "canopy bench $* failed against port $server_port; see $log:" >&2
    tail -5 "$log" >&2
    return 1
}

measure_echo() {
    local server=$1 round=$2 base="$out/$1-echo-$2"
    if run_client "$base.log" "$base.json" /echo echo --connections 100 --duration "$echo_seconds" \
        --server-pid "$server_pid"; then
        record "$server" echo "$round" "$(json_field "$base.json" deliveries_per_second)" \
            "p50=$(json_field "$base.json" latency.p50) p99=$(json_field "$base.json" latency.p99)" \
            "cpu=$(json_field "$base.json" server.cpu_nanoseconds_per_delivery)"
    else
        record "$server" echo "$round" FAIL
    fi
}

measure_broadcast() {
    local server=$1 round=$2 connections=$3 messages=$4 name=$5 base="$out/$1-$5-$2"
    # One writer and connections - 1 subscribers: every connection receives every message, as before.
    if run_client "$base.log" "$base.json" /broadcast fanout --protocol raw --subscribers $((connections - 1)) \
        --messages "$messages" --window "$window" --server-pid "$server_pid"; then
        record "$server" "$name" "$round" "$(json_field "$base.json" deliveries_per_second)" \
            "cpu=$(json_field "$base.json" server.cpu_nanoseconds_per_delivery)"
    else
        record "$server" "$name" "$round" FAIL
    fi
}

measure_idle() {
    local server=$1 round=$2 base="$out/$1-idle-$2"
    # Warm up (first connection, first upgrade) so that one-time allocations are not counted per connection.
    run_client "$base-warmup.log" "$base-warmup.json" /echo connections --protocol raw --connections 100 \
        --duration 0 || true
    sleep 0.5
    # The client reads the server's VmRSS before connecting and after holding every connection open for 1 s.
    if run_client "$base.log" "$base.json" /echo connections --protocol raw --connections "$idle_connections" \
        --duration 1 --server-pid "$server_pid"; then
        record "$server" idle "$round" "$(json_field "$base.json" server.resident_per_connection_bytes)" \
            "before=$(json_field "$base.json" server.resident_before_bytes)" \
            "after=$(json_field "$base.json" server.resident_end_bytes)"
    else
        record "$server" idle "$round" FAIL
    fi
}

# run_workload SERVER WORKLOAD ROUND
run_workload() {
    local server=$1 workload=$2 round=$3
    if ! start_server "$server" "$out/$server-server-$workload-$round.log"; then
        record "$server" "$workload" "$round" FAIL
        return
    fi
    echo "round $round: $server $workload (port $server_port)" >&2
    case "$workload" in
        echo) measure_echo "$server" "$round" ;;
        broadcast1k) measure_broadcast "$server" "$round" 1000 "$messages_1k" broadcast1k ;;
        broadcast10k) measure_broadcast "$server" "$round" 10000 "$messages_10k" broadcast10k ;;
        idle) measure_idle "$server" "$round" ;;
    esac
    stop_server
    sleep 0.5
}

servers=(nio)
[[ -n $canopy_bin ]] && servers=(canopy nio)
IFS=, read -r -a workloads <<< "$only"
for round in $(seq "$rounds"); do
    for workload in "${workloads[@]}"; do
        order=("${servers[@]}")
        if (( round % 2 == 0 )); then   # alternate who goes first
            order=()
            for ((i = ${#servers[@]} - 1; i >= 0; i--)); do order+=("${servers[i]}"); done
        fi
        for server in "${order[@]}"; do
            run_workload "$server" "$workload" "$round"
        done
    done
done

# ---------------------------------------------------------------------------------------------- report
# median SERVER WORKLOAD: the median of the recorded values, or FAIL if any round failed.
median() {
    local values
    values=$(awk -v s="$1" -v w="$2" '$1 == s && $2 == w { print $4 }' "$results")
    if [[ -z $values ]]; then echo "-"; return; fi
    if grep -q FAIL <<< "$values"; then echo FAIL; return; fi
    median_of_lines <<< "$values"
}

# median_of_lines: the median of the numbers on standard input, one per line, or - when there are none.
median_of_lines() {
    sort -g | awk '{ v[NR] = $1 }
        END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# human VALUE KIND: per-second rates in k or M, bytes as integers with thousands separators.
human() {
    local value=$1 kind=$2
    if [[ $value == FAIL || $value == - ]]; then echo "$value"; return; fi
    case "$kind" in
        rate) awk -v v="$value" 'BEGIN { if (v >= 1e6) printf "%.2f M/s", v / 1e6; else printf "%.1f k/s", v / 1e3 }' ;;
        bytes) awk -v v="$value" 'BEGIN { s = sprintf("%d", v)
                while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
                print s " B" }' ;;
    esac
}

ratio() {
    local a=$1 b=$2
    if [[ $a == FAIL || $a == - || $b == FAIL || $b == - ]]; then echo "-"; return; fi
    awk -v a="$a" -v b="$b" 'BEGIN { if (b == 0) print "-"; else printf "%.2f×", a / b }'
}

# extra SERVER WORKLOAD KEY: the median of a KEY=VALUE field over the rounds that did not fail, or -.
extra() {
    awk -v s="$1" -v w="$2" '$1 == s && $2 == w && $4 != "FAIL" { for (i = 5; i <= NF; i++) print $i }' "$results" \
        | awk -F= -v key="$3" '$1 == key && $2 != "" { print $2 }' | median_of_lines
}

# unit VALUE SCALE SUFFIX: VALUE divided by SCALE, rounded, with SUFFIX; "-" stays "-".
unit() {
    if [[ $1 == - ]]; then echo -; return; fi
    awk -v v="$1" -v d="$2" -v u="$3" 'BEGIN { x = v / d; printf (x >= 100 ? "%.0f %s" : "%.2g %s"), x, u }'
}

# row LABEL CANOPY NIO: one table row, with the ratio when Canopy was measured.
row() {
    if [[ -n $canopy_bin ]]; then
        echo "| $1 | $2 | $3 | ${4:-} |"
    else
        echo "| $1 | $3 |"
    fi
}

label() {
    case "$1" in
        echo) echo "echo, 100 connections (round trips/s)" ;;
        broadcast1k) echo "broadcast, 1,000 connections (deliveries/s)" ;;
        broadcast10k) echo "broadcast, 10,000 connections (deliveries/s)" ;;
        idle) echo "user-space RSS per idle connection, 10,000 open" ;;
    esac
}

echo
echo "Transport benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r), $(swift --version 2>/dev/null | head -1)."
echo "Client and server on loopback sharing the cores; $rounds alternating rounds, medians; raw results in $results."
echo "Broadcast: one sender, 64-byte text messages, window $window, $messages_1k / $messages_10k messages."
echo
echo "Server CPU is user + system time of the server process over the workload only (not connecting); lower is better."
echo
if [[ -n $canopy_bin ]]; then
    echo "| workload | Canopy | SwiftNIO | Canopy / NIO |"
    echo "|---|---|---|---|"
else
    echo "| workload | SwiftNIO |"
    echo "|---|---|"
fi
for workload in "${workloads[@]}"; do
    kind=rate; [[ $workload == idle ]] && kind=bytes
    nio=$(median nio "$workload")
    canopy=$(median canopy "$workload")
    row "$(label "$workload")" "$(human "$canopy" $kind)" "$(human "$nio" $kind)" "$(ratio "$canopy" "$nio")"
done
for workload in "${workloads[@]}"; do
    case "$workload" in
        echo)
            for key in p50 p99; do
                canopy=$(extra canopy echo $key); nio=$(extra nio echo $key)
                row "echo latency $key" "$(unit "$canopy" 1 µs)" "$(unit "$nio" 1 µs)"
            done
            canopy=$(extra canopy echo cpu); nio=$(extra nio echo cpu)
            row "server CPU per echo round trip" "$(unit "$canopy" 1000 µs)" "$(unit "$nio" 1000 µs)" \
                "$(ratio "$canopy" "$nio")"
            ;;
        broadcast1k|broadcast10k)
            canopy=$(extra canopy "$workload" cpu); nio=$(extra nio "$workload" cpu)
            size=1,000; [[ $workload == broadcast10k ]] && size=10,000
            row "server CPU per delivery, $size connections" "$(unit "$canopy" 1 ns)" \
                "$(unit "$nio" 1 ns)" "$(ratio "$canopy" "$nio")"
            ;;
    esac
done
if grep -q FAIL "$results"; then
    echo
    echo "Some runs failed (FAIL above); logs are in $out." >&2
    exit 1
fi
