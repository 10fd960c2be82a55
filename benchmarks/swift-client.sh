#!/usr/bin/env bash
# The Swift client (CanopyDatabase, issue 18) next to `canopy bench`'s own client on the same workload, against
# one fresh release server, in alternating rounds:
#   writes  one client pipelining 64-byte JSON objects, WINDOW unacknowledged at most: acknowledged writes/s
#           (ClientBench writes, vs canopy bench writes --writers 1 --listeners 0)
#   events  one writer pipelining as above, one other client observing the location: events/s it consumed
#           (ClientBench events, vs canopy bench fanout --subscribers 1 --writers 1)
#
#   benchmarks/swift-client.sh [--messages N (20000)] [--window W (128)] [--rounds R (3)] [--skip-build]
# Prints every round and the medians as a Markdown table.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
messages=20000 window=128 rounds=3 build=1
while [[ $# -gt 0 ]]; do
    case $1 in
        --messages) messages=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --skip-build) build=0; shift ;;
        *) echo "usage: $0 [--messages N] [--window W] [--rounds R] [--skip-build]" >&2; exit 2 ;;
    esac
done
cd "$repo"
if ((build)); then
    flock "${BUILD_LOCK:-/tmp/canopy-swift-build.lock}" swift build -c release --product canopy
    flock "${BUILD_LOCK:-/tmp/canopy-swift-build.lock}" swift build -c release --product ClientBench
fi
canopy=.build/release/canopy
client=.build/release/ClientBench
out=$(mktemp -d /tmp/canopy-swift-client.XXXXXX)
source "$here/server-lifecycle.sh"
trap stop_server EXIT
start_canopy "$canopy" "$out" server
url="http://127.0.0.1:$server_port?ns=bench"
ws="ws://127.0.0.1:$server_port"

per_second() { sed -n 's/.*per_second=\([0-9]*\).*/\1/p'; }
bench_rate() {  # canopy bench --json FILE KEY: a rate of the report (write_acks_per_second, deliveries_per_second)
    python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))[sys.argv[2]]))" "$1" "$2"
}

declare -a swift_writes bench_writes swift_events bench_events
for round in $(seq "$rounds"); do
    swift_writes+=("$("$client" writes "$url" "$messages" "$window" | per_second)")
    "$canopy" bench writes --url "$ws" --writers 1 --listeners 0 --messages "$messages" --window "$window" \
        --quiet --json "$out/writes-$round.json" || true
    bench_writes+=("$(bench_rate "$out/writes-$round.json" write_acks_per_second)")
    swift_events+=("$("$client" events "$url" "$messages" "$window" | per_second)")
    "$canopy" bench fanout --url "$ws" --subscribers 1 --writers 1 --messages "$messages" --window "$window" \
        --quiet --json "$out/fanout-$round.json" || true
    bench_events+=("$(bench_rate "$out/fanout-$round.json" deliveries_per_second)")
    echo "round $round: writes/s swift ${swift_writes[-1]} bench ${bench_writes[-1]}; events/s swift ${swift_events[-1]} bench ${bench_events[-1]}"
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
sw=$(median "${swift_writes[@]}") bw=$(median "${bench_writes[@]}")
se=$(median "${swift_events[@]}") be=$(median "${bench_events[@]}")
echo
echo "| workload ($messages messages, window $window, medians of $rounds) | CanopyDatabase | canopy bench client | ratio |"
echo "|---|---|---|---|"
echo "| acknowledged writes/s, one client pipelining | $sw | $bw | $(python3 -c "print(f'{$sw/$bw:.2f}')") |"
echo "| events/s one client consumes | $se | $be | $(python3 -c "print(f'{$se/$be:.2f}')") |"
