#!/usr/bin/env bash
# Fan-out latency against the kernel's floor (issue 4's latency target): at each point, the same number of
# subscribers and updates per second through
#   floor   benchmarks/kernel-floor/fanout-floor.c — one 70-byte send() per subscriber per update from 2 threads,
#           nothing else (no WebSocket, no protocol), read by one epoll thread; what loopback TCP alone allows
#   canopy  a fresh release `canopy serve`, driven by `canopy bench fanout --rate R` (64-byte JSON puts)
# and prints a Markdown table of write-to-delivery latency (from each update's due time in the floor; from the put's
# send time in canopy bench).
#
#   benchmarks/run-floor.sh [--binary PATH] [--duration S] [--out DIR] [--points "SUBS:RATE ..."]
#
# Default points: 10000:100 (1 M deliveries/s, the target's rate), 10000:10, 1000:50, 100:5000.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
canopy_bin="$root/.build/release/canopy"
duration=5
out=""
points="10000:100 10000:10 1000:50 100:5000"

while [[ $# -gt 0 ]]; do
    case "$1" in
        --binary) canopy_bin=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --points) points=$2; shift 2 ;;
        -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
[[ -x $canopy_bin ]] || { echo "missing $canopy_bin (scripts/bench builds it)" >&2; exit 1; }
out=${out:-$(mktemp -d /tmp/canopy-floor.XXXXXX)}
mkdir -p "$out"
floor_bin="$out/fanout-floor"
cc -O2 -pthread -o "$floor_bin" "$here/kernel-floor/fanout-floor.c"

source "$here/server-lifecycle.sh"
ulimit -n "$(ulimit -Hn)"

# floor SUBS RATE: prints "ns_per_send p50 p99" of the C floor.
floor() {
    local subscribers=$1 rate=$2 updates=$(($2 * duration)) port
    port=$(free_port)
    "$floor_bin" sender "$subscribers" "$port" "$updates" "$rate" 2 > "$out/floor-sender.txt" &
    local sender=$!
    sleep 0.3
    timeout 300 "$floor_bin" reader "$subscribers" "$port" "$updates" > "$out/floor-reader.txt"
    wait "$sender"
    local send p50 p99
    send=$(grep -o 'ns_per_send=[0-9.]*' "$out/floor-sender.txt" | cut -d= -f2)
    p50=$(grep -o 'p50_ms=[0-9.]*' "$out/floor-reader.txt" | cut -d= -f2)
    p99=$(grep -o 'p99_ms=[0-9.]*' "$out/floor-reader.txt" | cut -d= -f2)
    echo "$send $p50 $p99"
}

# canopy SUBS RATE: prints "deliveries/s p50 p99 server-ns-per-delivery" of Canopy.
canopy() {
    local subscribers=$1 rate=$2
    start_canopy "$canopy_bin" "$out" canopy || exit 1
    "$canopy_bin" bench fanout --url "ws://127.0.0.1:$server_port" --subscribers "$subscribers" --rate "$rate" \
        --duration "$duration" --server-pid "$server_pid" --quiet --json "$out/canopy.json" > /dev/null
    stop_server
    python3 - "$out/canopy.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
latency = report["latency"]
print(round(report["deliveries_per_second"]), latency["p50"] / 1000, latency["p99"] / 1000,
      round(report["server"]["cpu_nanoseconds_per_delivery"]))
EOF
}

echo "| subscribers × updates/s | deliveries/s | floor: ns per send | floor p50 / p99 | Canopy deliveries/s | Canopy p50 / p99 | Canopy server CPU per delivery |"
echo "|---|---|---|---|---|---|---|"
for point in $points; do
    subscribers=${point%%:*} rate=${point##*:}
    read -r send floor_p50 floor_p99 < <(floor "$subscribers" "$rate")
    sleep 1
    read -r delivered canopy_p50 canopy_p99 canopy_cpu < <(canopy "$subscribers" "$rate")
    sleep 1
    printf '| %s × %s | %s | %.0f ns | %.1f / %.1f ms | %s | %.1f / %.1f ms | %s ns |\n' \
        "$subscribers" "$rate" "$((subscribers * rate))" "$send" "$floor_p50" "$floor_p99" "$delivered" \
        "$canopy_p50" "$canopy_p99" "$canopy_cpu"
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); command: benchmarks/run-floor.sh --duration $duration --points \"$points\""
