#!/usr/bin/env bash
# Canopy against the servers people pick for fan-out instead (issue 14): Redis pub/sub and NATS, measured by the
# same load client (`canopy bench`, which speaks RESP and the NATS protocol on plain TCP), in alternating rounds,
# each against a fresh server on loopback. Prints a Markdown table of medians (and rewrites the generated section
# of a docs file with --docs).
#
#   benchmarks/run-peers.sh [--binary PATH] [--rounds N] [--out DIR] [--docs FILE] [--quick] [--pin]
#
# Workloads (one writer unless noted, 64-byte payloads, window 128, every subscriber must get every message):
#   fanout1k    1 topic, 1,000 subscribers, 6,000 messages (6 M deliveries)
#   fanout10k   1 topic, 10,000 subscribers, 1,000 messages (10 M deliveries)
#   rooms       100 topics x 100 subscribers, 10 writers, 60,000 messages (6 M deliveries)
# Runs last seconds, not tenths, so that CPU time read in 10 ms clock ticks is accurate to about 1%.
# Figures: deliveries/s, p50/p99 write-to-delivery latency, deliveries per server CPU-second, the load client's CPU
# per delivery (each protocol costs the client differently, and the client shares the machine's cores), peak server
# RSS. Canopy runs twice: as deployed, acknowledging a write once it is durable (`canopy`: fsync always, the default),
# and without fsync (`canopy-nofsync`: data.fsync none, still journaled), because Redis (no persistence) and NATS
# (core, no JetStream) keep nothing.
# --pin: the server on CPU 1 and the client on CPU 0 (`taskset`), so that neither takes the other's core; without
# it both float over the two cores.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
canopy_bin="$root/.build/release/canopy"
rounds=3
out=""
docs=""
scale=1
pin=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --binary) canopy_bin=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --out) out=$2; shift ;;
        --docs) docs=$2; shift ;;
        --quick) scale=10; rounds=1 ;;
        --pin) pin=1 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[[ -x $canopy_bin ]] || { echo "missing $canopy_bin (scripts/bench builds it)" >&2; exit 1; }
for server in redis-server nats-server; do
    command -v "$server" >/dev/null || { echo "$server is missing: apt-get install ${server}" >&2; exit 1; }
done
out=${out:-$(mktemp -d /tmp/canopy-peers.XXXXXX)}
mkdir -p "$out"
source "$here/server-lifecycle.sh"
ulimit -n "$(ulimit -Hn)"

# With --pin, what runs the server and what runs the client.
server_cpu=()
client_cpu=()
if [[ $pin == 1 ]]; then
    server_cpu=(taskset -c 1)
    client_cpu=(taskset -c 0)
fi

# start KIND NAME: a fresh server of KIND; sets server_pid and server_port.
start() {
    local kind=$1 name=$2
    case $kind in
        canopy) SERVER_WRAPPER="${server_cpu[*]}" start_canopy "$canopy_bin" "$out" "$name" ;;
        canopy-nofsync) CANOPY_DATA_FSYNC=none SERVER_WRAPPER="${server_cpu[*]}" start_canopy "$canopy_bin" "$out" "$name" ;;
        redis)
            server_port=$(free_port)
            "${server_cpu[@]}" redis-server --port "$server_port" --bind 127.0.0.1 --save "" --appendonly no --maxclients 100000 \
                > "$out/$name-server.log" 2>&1 &
            server_pid=$! ;;
        nats)
            server_port=$(free_port)
            "${server_cpu[@]}" nats-server -a 127.0.0.1 -p "$server_port" > "$out/$name-server.log" 2>&1 &
            server_pid=$! ;;
    esac
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$server_port") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "$kind did not start" >&2
    return 1
}

# measure KIND WORKLOAD ROUND: one run; prints
# "deliveries/s p50_ms p99_ms deliveries_per_server_cpu_second peak_MiB client_cpu_ns_per_delivery server_cpu_ns_per_delivery
# server_kernel_cpu_ns_per_delivery".
measure() {
    local kind=$1 workload=$2 round=$3 name="$2-$1-r$3" args url
    case $workload in
        fanout1k) args=(fanout --subscribers $((1000 / scale)) --messages $((6000 / scale))) ;;
        fanout10k) args=(fanout --subscribers $((10000 / scale)) --messages $((1000 / scale))) ;;
        rooms) args=(rooms --rooms $((100 / scale)) --subscribers 100 --writers 10 --messages $((60000 / scale))) ;;
    esac
    start "$kind" "$name" || return 1
    case $kind in
        canopy*) url="ws://127.0.0.1:$server_port" ;;
        *) url="$kind://127.0.0.1:$server_port"; args+=(--protocol "$kind") ;;
    esac
    printf '%q ' canopy bench "${args[@]}" --window 128 --url "${url%%:[0-9]*}:PORT" > "$out/$name.cmd"
    "${client_cpu[@]}" "$canopy_bin" bench "${args[@]}" --window 128 --url "$url" --threads 1 --timeout 240 --server-pid "$server_pid" \
        --json "$out/$name.json" > "$out/$name.log" 2>&1 || true
    stop_server
    python3 - "$out/$name.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert not report["failures"], report["failures"]
server = report["server"]
cpu = server.get("cpu_nanoseconds_per_delivery") or 0
peak = server.get("resident_peak_bytes") or server.get("resident_max_bytes") or 0
client = report.get("client_cpu_nanoseconds_per_delivery") or 0
kernel = server.get("kernel_cpu_nanoseconds_per_delivery") or 0
print(f'{report["deliveries_per_second"]:.0f} {report["latency"]["p50"] / 1000:.2f} {report["latency"]["p99"] / 1000:.2f} '
      f'{(1e9 / cpu if cpu else 0):.0f} {peak / 1048576:.0f} {client:.0f} {cpu:.0f} {kernel:.0f}')
PY
}

declare -A figures
workloads=(fanout1k fanout10k rooms)
kinds=(canopy canopy-nofsync redis nats)
for round in $(seq "$rounds"); do
    for workload in "${workloads[@]}"; do
        # Rotate who goes first, so that no server always runs on a cooler (or warmer) machine.
        order=("${kinds[@]:$((round % ${#kinds[@]}))}" "${kinds[@]:0:$((round % ${#kinds[@]}))}")
        for kind in "${order[@]}"; do
            line=$(measure "$kind" "$workload" "$round" || echo "FAIL")
            echo "round $round $workload $kind: $line" >&2
            figures[$workload-$kind]+="$line"$'\n'
        done
    done
done

python3 - "$rounds" "$docs" "$pin" <<PY
import statistics, sys
rounds, docs, pin = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
raw = {$(for key in "${!figures[@]}"; do printf '"%s": """%s""",' "$key" "${figures[$key]}"; done)}
names = {"fanout1k": "1 topic, 1,000 subscribers", "fanout10k": "1 topic, 10,000 subscribers",
         "rooms": "100 topics × 100 subscribers, 10 writers"}
def runs(key):
    return [list(map(float, line.split())) for line in raw.get(key, "").splitlines() if line and line != "FAIL"]
def median(values):
    return statistics.median(values) if values else None
labels = {"canopy": "canopy (fsync always)", "canopy-nofsync": "canopy (no fsync)", "redis": "redis", "nats": "nats"}
placement = ("server pinned to CPU 1, client to CPU 0" if pin else "server and client unpinned on 2 cores")
lines = [f"Rounds: {rounds}; {placement}.", "",
         f"| workload | server | deliveries/s (median of {rounds}) | p50 / p99 | deliveries per server CPU-second "
         "| server CPU per delivery (of it in the kernel) | client CPU per delivery | peak RSS | rounds (deliveries/s) |",
         "|---|---|---|---|---|---|---|---|---|"]
for workload, title in names.items():
    best = {}
    for kind in ["redis", "nats", "canopy", "canopy-nofsync"]:
        rows = runs(f"{workload}-{kind}")
        if not rows:
            lines.append(f"| {title} | {labels[kind]} | FAILED | | | | | | |")
            continue
        rate, p50, p99, per_cpu, peak, client, server_ns, kernel_ns = (median([row[i] for row in rows]) for i in range(8))
        best[kind] = (rate, per_cpu)
        lines.append(f"| {title} | {labels[kind]} | {rate / 1e6:.2f} M | {p50:.1f} / {p99:.1f} ms | {per_cpu / 1e6:.2f} M "
                     f"| {server_ns:,.0f} ns ({kernel_ns:,.0f} ns) | {client:,.0f} ns | {peak:.0f} MiB "
                     f"| {', '.join(f'{row[0] / 1e6:.2f}' for row in rows)} M |")
    peers = [best[k] for k in ("redis", "nats") if k in best]
    for kind in ("canopy", "canopy-nofsync"):
        if kind in best and peers:
            rate = best[kind][0] / max(p[0] for p in peers)
            cpu = best[kind][1] / max(p[1] for p in peers) if max(p[1] for p in peers) else 0
            lines.append(f"| {title} | **{labels[kind]} / best** | **{rate:.2f}×** | | **{cpu:.2f}×** | | | | |")
table = "\n".join(lines)
print(table)
if docs:
    text = open(docs).read()
    begin, end = "<!-- peers:begin -->", "<!-- peers:end -->"
    if begin in text and end in text:
        text = text[:text.index(begin) + len(begin)] + "\n" + table + "\n" + text[text.index(end):]
        open(docs, "w").write(text)
PY
