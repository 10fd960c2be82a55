#!/usr/bin/env bash
# Measures a candidate Canopy against a baseline build side by side, in alternating rounds on the same machine
# (issue 13: the single order per namespace must not cost fan-out or write throughput), and prints a Markdown
# table of medians with every round's figures.
#
#   benchmarks/run-ordering.sh --baseline DIR --candidate DIR [--rounds N] [--out DIR] [--only LIST]
#
# DIR is a checkout with release builds of `canopy` and `StoreBench` (.build/release). The candidate's
# `canopy bench` drives both servers, so the load client is the same. Scenarios (fresh server, empty data
# directory, fsync "always" each time):
#   fanout10k   1 writer -> 10,000 subscribers of one path, 64-byte updates, window 128: deliveries/s
#   writes      `canopy bench writes`: 100 writers (each its own child), window 8, 2 listeners: acked writes/s
#   rest-put    wrk, 64 keep-alive connections, PUT of a small object for 10 s: requests/s
#   store       `StoreBench durable DIR 5 64 --window 8`: durable acknowledged writes/s at the store level
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
baseline=""
candidate=""
rounds=3
out=""
only="fanout10k,writes,rest-put,store"
while [[ $# -gt 0 ]]; do
    case $1 in
        --baseline) baseline=$2; shift ;;
        --candidate) candidate=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --out) out=$2; shift ;;
        --only) only=$2; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[[ -n $baseline && -n $candidate ]] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
for dir in "$baseline" "$candidate"; do
    for binary in canopy StoreBench; do
        [[ -x $dir/.build/release/$binary ]] || { echo "missing $dir/.build/release/$binary" >&2; exit 1; }
    done
done
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
out=${out:-$(mktemp -d /tmp/canopy-ordering-bench.XXXXXX)}
mkdir -p "$out"
source "$here/server-lifecycle.sh"
ulimit -n "$(ulimit -Hn)"
client="$candidate/.build/release/canopy"

# measure SIDE SCENARIO ROUND: prints one figure for the scenario against SIDE's build.
measure() {
    local side=$1 scenario=$2 round=$3 dir name="$2-$1-r$3"
    dir=$([[ $side == baseline ]] && echo "$baseline" || echo "$candidate")
    case $scenario in
        fanout10k|writes)
            start_canopy "$dir/.build/release/canopy" "$out" "$name" >&2 || return 1
            local args=(fanout --subscribers 10000 --messages 600 --window 128)
            [[ $scenario == writes ]] && args=(writes --writers 100 --listeners 2 --messages 100000 --window 8)
            "$client" bench "${args[@]}" --url "ws://127.0.0.1:$server_port" --threads 1 --timeout 240 \
                --server-pid "$server_pid" --json "$out/$name.json" > "$out/$name.log" 2>&1 || true
            stop_server
            python3 -c 'import json, sys
report = json.load(open(sys.argv[1]))
assert not report["failures"], report["failures"]
key = "deliveries_per_second" if sys.argv[2] == "fanout10k" else "write_acks_per_second"
print(round(report[key]))' "$out/$name.json" "$scenario" ;;
        rest-put)
            start_canopy "$dir/.build/release/canopy" "$out" "$name" >&2 || return 1
            local url="http://127.0.0.1:$server_port/bench/item.json"
            curl -sf -X PUT -d '{"name":"small","n":1}' "$url" > /dev/null
            wrk -t1 -c64 -d10s -s "$here/rest/put.lua" "$url" > "$out/$name.wrk" 2>&1
            stop_server
            awk '/^Requests\/sec/ {printf "%.0f\n", $2}' "$out/$name.wrk" ;;
        store)
            rm -rf "$out/$name-store"
            "$dir/.build/release/StoreBench" durable "$out/$name-store" 5 64 --window 8 > "$out/$name.log" 2>&1
            rm -rf "$out/$name-store"
            sed -n 's/.*: \([0-9]*\) writes\/s.*/\1/p' "$out/$name.log" | head -1 ;;
    esac
}

declare -A figures
IFS=, read -r -a scenarios <<< "$only"
for round in $(seq "$rounds"); do
    for scenario in "${scenarios[@]}"; do
        order=(baseline candidate)
        (( round % 2 == 0 )) && order=(candidate baseline)
        for side in "${order[@]}"; do
            figure=$(measure "$side" "$scenario" "$round" || echo "FAIL")
            echo "round $round $scenario $side: $figure" >&2
            figures[$scenario-$side]+="$figure "
        done
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR + 1) / 2)] : "-")}'; }
echo "| scenario | baseline (median) | candidate (median) | candidate / baseline | rounds: baseline; candidate |"
echo "|---|---|---|---|---|"
for scenario in "${scenarios[@]}"; do
    b=$(echo "${figures[$scenario-baseline]}" | median)
    c=$(echo "${figures[$scenario-candidate]}" | median)
    ratio=$(python3 -c "import sys; b, c = sys.argv[1:]; print(f'{float(c) / float(b):.2f}×' if b.isdigit() and c.isdigit() and int(b) else '-')" "$b" "$c")
    echo "| $scenario | $b | $c | $ratio | ${figures[$scenario-baseline]% }; ${figures[$scenario-candidate]% } |"
done
