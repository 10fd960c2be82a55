#!/usr/bin/env bash
# Cluster mode against a single node (issue 15), side by side in one run on this machine: 3 NATS JetStream servers
# (R3 file streams) and 3 Canopy nodes with --cluster (scripts/cluster), and one Canopy node without, all sharing
# the machine with the load client.
#
#   benchmarks/run-cluster.sh [--binary PATH] [--rounds N] [--out DIR]
#
# Workloads (alternating single / cluster, each run on its own namespace, so on its own stream):
#   fanout   1 writer, 10,000 subscribers of one path (spread over the 3 nodes in cluster mode), 600 messages,
#            window 128: deliveries/s and write-to-delivery p50/p99
#   writes   100 writers (spread over the nodes), window 8 each, 2 listeners, 50,000 acknowledged writes: writes/s
# Prints a Markdown table of medians.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
canopy_bin="$root/.build/release/canopy"
rounds=2
out=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --binary) canopy_bin=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --out) out=$2; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[[ -x $canopy_bin ]] || { echo "missing $canopy_bin (scripts/bench builds it)" >&2; exit 1; }
out=${out:-$(mktemp -d /tmp/canopy-cluster-bench.XXXXXX)}
mkdir -p "$out"
source "$here/server-lifecycle.sh"
ulimit -n "$(ulimit -Hn)"

# The cluster: scripts/cluster in the background; its lines name the nodes. Its nodes run from the repository root,
# so they get the same open rules as the single node (start_canopy) rather than Config/database.rules.json.
"$root/scripts/cluster" --nodes 3 --binary "$canopy_bin" --dir "$out/cluster" -- --rules "$open_rules" \
    > "$out/cluster.out" 2>&1 &
cluster_pid=$!
trap 'kill -TERM $cluster_pid 2>/dev/null; wait $cluster_pid 2>/dev/null; stop_server' EXIT
for _ in $(seq 600); do
    [[ $(grep -c '^canopy ' "$out/cluster.out" || true) -ge 3 ]] && break
    kill -0 $cluster_pid 2>/dev/null || { cat "$out/cluster.out" >&2; exit 1; }
    sleep 0.1
done
nodes=$(awk '/^canopy / {print $3}' "$out/cluster.out" | paste -sd,)
[[ -n $nodes ]] || { echo "the cluster did not start" >&2; cat "$out/cluster.out" >&2; exit 1; }

# measure MODE WORKLOAD ROUND: one run; prints "rate p50_ms p99_ms".
measure() {
    local mode=$1 workload=$2 round=$3 name="$2-$1-r$3" url args
    if [[ $mode == single ]]; then
        start_canopy "$canopy_bin" "$out" "$name" || return 1
        url="ws://127.0.0.1:$server_port"
    else
        url=$nodes
    fi
    case $workload in
        fanout) args=(fanout --subscribers 10000 --messages 600 --window 128) ;;
        writes) args=(writes --writers 100 --listeners 2 --messages 50000 --window 8) ;;
    esac
    # Warm-up: the namespace's stream exists (creating an R3 stream takes about half a second) before measuring.
    "$canopy_bin" bench writes --writers 1 --messages 10 --ns "$name" --url "$url" --timeout 60 > /dev/null 2>&1 || true
    printf '%q ' canopy bench "${args[@]}" --ns "$name" --url "URLS" > "$out/$name.cmd"
    "$canopy_bin" bench "${args[@]}" --ns "$name" --url "$url" --threads 1 --timeout 240 \
        --json "$out/$name.json" > "$out/$name.log" 2>&1 || true
    [[ $mode == single ]] && stop_server
    python3 - "$out/$name.json" "$workload" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert not report["failures"], report["failures"]
rate = report["deliveries_per_second"] if sys.argv[2] == "fanout" else report["write_acks_per_second"]
print(f'{rate:.0f} {report["latency"]["p50"] / 1000:.2f} {report["latency"]["p99"] / 1000:.2f}')
PY
}

declare -A figures
for round in $(seq "$rounds"); do
    for workload in fanout writes; do
        for mode in single cluster; do
            line=$(measure "$mode" "$workload" "$round" || echo "FAIL")
            echo "round $round $workload $mode: $line" >&2
            figures[$workload-$mode]+="$line"$'\n'
        done
    done
done

python3 - "$rounds" <<PY
import statistics, sys
rounds = int(sys.argv[1])
raw = {$(for key in "${!figures[@]}"; do printf '"%s": """%s""",' "$key" "${figures[$key]}"; done)}
def runs(key):
    return [list(map(float, line.split())) for line in raw.get(key, "").splitlines() if line and line != "FAIL"]
print(f"| workload | single node | 3-node cluster | cluster / single | single p50 / p99 | cluster p50 / p99 |")
print("|---|---|---|---|---|---|")
names = {"fanout": "fan-out, 10,000 subscribers (deliveries/s)", "writes": "acknowledged writes/s, 100 writers"}
for workload, title in names.items():
    single, cluster = runs(f"{workload}-single"), runs(f"{workload}-cluster")
    if not single or not cluster:
        print(f"| {title} | {'FAILED' if not single else ''} | {'FAILED' if not cluster else ''} | | | |")
        continue
    s = [statistics.median(r[i] for r in single) for i in range(3)]
    c = [statistics.median(r[i] for r in cluster) for i in range(3)]
    print(f"| {title} | {s[0]:,.0f} | {c[0]:,.0f} | {c[0] / s[0]:.2f}× | {s[1]:.1f} / {s[2]:.1f} ms "
          f"| {c[1]:.1f} / {c[2]:.1f} ms |")
PY
