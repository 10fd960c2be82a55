#!/usr/bin/env bash
# Runs the gateway fan-out benchmarks (issue 4, acceptance 3) against a release build of Canopy over the Firebase
# wire protocol and prints a Markdown table.
#
#   benchmarks/run-gateway.sh [options] [-- extra canopy serve arguments]
#
# Scenarios (each starts a fresh server with an empty data directory):
#   fanout1k    1 writer -> 1,000 subscribers of /bench/room0, puts within a window of unacknowledged puts
#   fanout10k   1 writer -> 10,000 subscribers, same: the maximum deliveries/s
#   half10k     10,000 subscribers at half of fanout10k's put rate, for the latency at a sustainable load
#   lat500k     10,000 subscribers at 50 puts/s = 500,000 deliveries/s (issue 7's latency target)
#   rooms       100 rooms x 100 subscribers, 1 writer cycling through the rooms within its window
#   stall       fanout at a fixed rate with one extra subscriber that stops reading for --stall-seconds, and the
#               same run without it (stall-base) to show what the stall costs the others
# Every run reports deliveries/s, write-to-delivery latency, the server's CPU and RSS, and the server's
# canopy_push_frames_encoded_total / canopy_push_frames_delivered_total deltas from /.metrics.
#
# Options:
#   --binary PATH        Canopy binary (default: .build/release/canopy, built here unless --skip-build)
#   --skip-build         use the existing release builds of canopy and ws-load
#   --only LIST          comma-separated scenarios (default: fanout1k,fanout10k,half10k,lat500k,rooms,stall)
#   --threads N          ws-load worker threads (default 1: on 2 cores the server needs the other one)
#   --window W           each writer's window of unacknowledged puts (default 128)
#   --stall-seconds S    how long the stalled subscriber stops reading (default 30)
#   --quick              fewer puts and a 5 s stall: checks the harness in about a minute
#   --out DIR            where logs and raw results go (default: a new directory under /tmp)
# Environment:
#   BUILD_LOCK           the lock every swift build must hold (default /tmp/canopy-swift-build.lock)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
canopy_bin="$root/.build/release/canopy"
skip_build=0
only="fanout1k,fanout10k,half10k,lat500k,rooms,stall"
threads=1
window=128
stall_seconds=30
quick=0
out=""
canopy_extra=()
build_lock=${BUILD_LOCK:-/tmp/canopy-swift-build.lock}

usage() { sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --binary) canopy_bin=$2; shift 2 ;;
        --skip-build) skip_build=1; shift ;;
        --only) only=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --stall-seconds) stall_seconds=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --out) out=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; canopy_extra=("$@"); break ;;
        *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
out=${out:-$(mktemp -d /tmp/canopy-gateway-bench.XXXXXX)}
mkdir -p "$out"
results="$out/results.txt"
: > "$results"

# Workload sizes: 6,000,000 deliveries per throughput run (a few seconds each); the stall pair takes
# 2 x (stall + 10 s).
puts_1k=6000
puts_10k=600
puts_rooms=60000
half_seconds=10
stall_subscribers=100
stall_rate=5000           # puts/s: 500,000 deliveries/s to the others, ~600 KB/s that the stalled one does not read
if [[ $quick == 1 ]]; then
    puts_1k=600; puts_10k=60; puts_rooms=6000; half_seconds=3; stall_seconds=5
fi
stall_duration=$(awk -v s="$stall_seconds" 'BEGIN { print s + 10 }')
client_timeout=$(awk -v s="$stall_seconds" 'BEGIN { print s + 120 }')
server_start_timeout=30

if (( $(ulimit -Hn) < 10100 )); then
    echo "the hard open-file limit is $(ulimit -Hn); 10,000 subscribers need about 10,100" >&2
fi

# ---------------------------------------------------------------------------------------------- build
if [[ $skip_build == 0 ]]; then
    echo "building canopy (release) under $build_lock ..." >&2
    (cd "$root" && flock "$build_lock" swift build -c release --product canopy >&2)
    echo "building ws-load (release) under $build_lock ..." >&2
    flock "$build_lock" swift build -c release --package-path "$here/ws-load" \
        --scratch-path "$here/ws-load/.build" >&2
fi
ws_load="$here/ws-load/.build/release/ws-load"
for binary in "$ws_load" "$canopy_bin"; do
    [[ -x $binary ]] || { echo "missing $binary (run without --skip-build)" >&2; exit 1; }
done

# ---------------------------------------------------------------------------------------------- server
source "$here/server-lifecycle.sh"

# start_server NAME: starts a fresh Canopy with an empty data directory; sets server_pid and server_port.
start_server() {
    local name=$1 port_file="$out/$1.port" log="$out/$1-server.log" data="$out/$1-data"
    rm -rf "$port_file" "$data"
    "$canopy_bin" serve --host 127.0.0.1 --port 0 --port-file "$port_file" --data-dir "$data" \
        --log-level warning "${canopy_extra[@]}" > "$log" 2>&1 &
    server_pid=$!
    local deadline=$((SECONDS + server_start_timeout))
    while [[ ! -s $port_file ]]; do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "canopy exited during start-up; log:" >&2; cat "$log" >&2; server_pid=""; return 1
        fi
        if (( SECONDS > deadline )); then
            echo "canopy did not write its port within ${server_start_timeout}s" >&2; return 1
        fi
        sleep 0.1
    done
    server_port=$(tr -dc '0-9' < "$port_file")
}

# json_field JSON KEY: a number (or true/false) from ws-load's JSON line, or empty.
json_field() { grep -o "\"$2\":[^,}]*" <<< "$1" | head -1 | cut -d: -f2 || true; }

# run_scenario NAME WS-LOAD-ARGS...: runs ws-load against a fresh server; records its JSON line (FAIL on failure).
run_scenario() {
    local name=$1; shift
    local log="$out/$name.log"
    if ! start_server "$name"; then
        echo "$name FAIL" >> "$results"
        return
    fi
    echo "$name: ws-load $* (canopy pid $server_pid, port $server_port)" >&2
    local status=0
    timeout --kill-after=5 "$client_timeout" "$ws_load" "$@" --host 127.0.0.1 --port "$server_port" \
        --threads "$threads" --server-pid "$server_pid" --timeout "$client_timeout" \
        --metrics-url "http://127.0.0.1:$server_port/.metrics" > "$log" 2>&1 || status=$?
    grep -v '^{' "$log" | sed 's/^/    /' >&2
    local json
    json=$(grep '^{' "$log" | tail -1 || true)
    if [[ $status == 0 && -n $json ]]; then
        echo "$name $json" >> "$results"
    else
        echo "$name failed (exit status $status); see $log" >&2
        echo "$name FAIL ${json:-}" >> "$results"
    fi
    stop_server
    sleep 0.5
}

# ---------------------------------------------------------------------------------------------- scenarios
IFS=, read -r -a scenarios <<< "$only"
for scenario in "${scenarios[@]}"; do
    case "$scenario" in
        fanout1k)
            run_scenario fanout1k fanout --subscribers 1000 --messages "$puts_1k" --window "$window" ;;
        fanout10k)
            run_scenario fanout10k fanout --subscribers 10000 --messages "$puts_10k" --window "$window" ;;
        half10k)
            # Half of the maximum put rate measured by fanout10k (measured now when it was not run).
            max_json=$(awk '$1 == "fanout10k" && $2 != "FAIL" { $1 = ""; print }' "$results" | tail -1)
            if [[ -z $max_json ]]; then
                run_scenario fanout10k fanout --subscribers 10000 --messages "$puts_10k" --window "$window"
                max_json=$(awk '$1 == "fanout10k" && $2 != "FAIL" { $1 = ""; print }' "$results" | tail -1)
            fi
            if [[ -z $max_json ]]; then
                echo "half10k FAIL" >> "$results"
                continue
            fi
            max_rate=$(json_field "$max_json" deliveries_per_s)
            half_rate=$(awk -v d="$max_rate" 'BEGIN { printf "%.1f", d / 10000 / 2 }')
            run_scenario half10k fanout --subscribers 10000 --rate "$half_rate" --duration "$half_seconds" ;;
        lat500k)
            run_scenario lat500k fanout --subscribers 10000 --rate 50 --duration "$half_seconds" ;;
        rooms)
            run_scenario rooms rooms --rooms 100 --subscribers 100 --messages "$puts_rooms" --window "$window" ;;
        stall)
            run_scenario stall-base fanout --subscribers "$stall_subscribers" --rate "$stall_rate" \
                --duration "$stall_duration" --timeline
            run_scenario stall fanout --subscribers "$stall_subscribers" --rate "$stall_rate" \
                --duration "$stall_duration" --stall-seconds "$stall_seconds" --stall-after 2 --timeline ;;
        *) echo "unknown scenario $scenario" >&2; exit 2 ;;
    esac
done

# ---------------------------------------------------------------------------------------------- report
# human VALUE KIND: rates in k or M per second, bytes in MiB, microseconds as µs or ms.
human() {
    local value=$1 kind=$2
    if [[ -z $value || $value == null ]]; then echo "-"; return; fi
    case "$kind" in
        rate) awk -v v="$value" 'BEGIN { if (v >= 1e6) printf "%.2f M/s", v / 1e6; else printf "%.1f k/s", v / 1e3 }' ;;
        bytes) awk -v v="$value" 'BEGIN { printf "%.1f MiB", v / 1048576 }' ;;
        us) awk -v v="$value" 'BEGIN { if (v >= 10000) printf "%.1f ms", v / 1000; else printf "%d µs", v }' ;;
        ns) awk -v v="$value" 'BEGIN { printf "%.0f ns", v }' ;;
        int) awk -v v="$value" 'BEGIN { s = sprintf("%d", v)
                while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); print s }' ;;
    esac
}

label() {
    case "$1" in
        fanout1k) echo "fanout, 1 writer → 1,000 subscribers (window $window)" ;;
        fanout10k) echo "fanout, 1 writer → 10,000 subscribers (window $window)" ;;
        half10k) echo "fanout, 10,000 subscribers at half the max put rate" ;;
        lat500k) echo "fanout, 10,000 subscribers at 50 puts/s" ;;
        rooms) echo "rooms, 100 × 100 subscribers, 1 writer (window $window)" ;;
        stall-base) echo "fanout, $stall_subscribers subscribers at $stall_rate puts/s (no stall)" ;;
        stall) echo "same, plus one subscriber not reading for ${stall_seconds} s" ;;
    esac
}

echo
echo "Gateway fan-out benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r)," \
    "$(swift --version 2>/dev/null | head -1)."
echo "Client (ws-load, $threads threads) and server on loopback sharing the cores; 64-byte JSON objects per put;" \
    "raw results in $results."
echo
echo "| scenario | deliveries/s | p50 | p99 | p99.9 | server RSS end (max) | frames encoded / delivered |" \
    "server CPU per delivery | client CPU per delivery |"
echo "|---|---|---|---|---|---|---|---|---|"
failed=0
while read -r name rest; do
    if [[ $rest == FAIL* ]]; then
        echo "| $(label "$name") | FAIL | | | | | | | |"
        failed=1
        continue
    fi
    json=$rest
    encoded=$(json_field "$json" frames_encoded)
    delivered=$(json_field "$json" frames_delivered)
    frames="-"
    [[ -n $encoded ]] && frames="$(human "$encoded" int) / $(human "$delivered" int)"
    echo "| $(label "$name") | $(human "$(json_field "$json" deliveries_per_s)" rate)" \
        "| $(human "$(json_field "$json" p50_us)" us) | $(human "$(json_field "$json" p99_us)" us)" \
        "| $(human "$(json_field "$json" p999_us)" us)" \
        "| $(human "$(json_field "$json" server_rss_end_bytes)" bytes)" \
        "($(human "$(json_field "$json" server_rss_max_bytes)" bytes))" \
        "| $frames | $(human "$(json_field "$json" server_cpu_ns_per_delivery)" ns)" \
        "| $(human "$(json_field "$json" client_cpu_ns_per_delivery)" ns) |"
done < "$results"

stall_json=$(awk '$1 == "stall" { $1 = ""; print }' "$results" | tail -1)
# stall_metric NAME: the stall run's delta of counter NAME (0 when it did not change).
stall_metric() { local value; value=$(json_field "$stall_json" "metric_$1"); echo "${value:-0}"; }
if [[ -n $stall_json && $stall_json != *FAIL* ]]; then
    echo
    echo "Stalled subscriber (${stall_seconds} s without reading, 4 KiB receive buffer):" \
        "disconnected: $(json_field "$stall_json" stall_disconnected)," \
        "ended with the latest state: $(json_field "$stall_json" stall_latest_state)," \
        "updates it received: $(human "$(json_field "$stall_json" stall_deliveries)" int) of" \
        "$(human "$(json_field "$stall_json" messages)" int); server conflations:" \
        "$(stall_metric canopy_conflations_total), pushes conflated:" \
        "$(stall_metric canopy_push_frames_conflated_total)$(
            [[ $(stall_metric canopy_conflations_total) == 0 ]] && echo " (the kernel's socket buffers absorbed the stall)")."
fi
if [[ $failed == 1 ]]; then
    echo
    echo "Some runs failed (FAIL above); logs are in $out." >&2
    exit 1
fi
