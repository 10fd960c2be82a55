#!/usr/bin/env bash
# The Swift client (CanopyDatabase, issue 18) next to `canopy bench`'s own client on the same workload, in
# alternating rounds, each round against one fresh release server:
#   writes  one client pipelining 64-byte JSON objects, WINDOW unacknowledged at most: acknowledged writes/s
#           (ClientBench writes, vs canopy bench writes --writers 1 --listeners 0)
#   events  one writer pipelining as above, one other client observing the location: events/s it consumed
#           (ClientBench events, vs canopy bench fanout --subscribers 1 --writers 1)
#
#   benchmarks/swift-client.sh [--messages N (20000)] [--window W (128)] [--rounds R (3)] [--skip-build]
#                              [--baseline CLIENTBENCH] [--client CLIENTBENCH] [--canopy CANOPY]
#
# --baseline adds a second ClientBench binary (say, one built from an older commit) to every round, so a change is
# measured side by side with the build before it. --client and --canopy replace the binaries this checkout builds.
# The clients take turns in a different order each round. Besides the rates, every run's client CPU is measured
# (user + system of the whole client process, from the shell's `time`) and divided by the operations it made:
# ClientBench writes makes a warm-up pass of N writes before the measured N, so 2N; events: the N events, with the
# writer's CPU in the same process (canopy bench's clients count the same way). The server's CPU over the run
# (/proc/PID/stat) is divided by the same count.
# Prints every round and the medians as a Markdown table.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
messages=20000 window=128 rounds=3 build=1 baseline="" client="" canopy=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --messages) messages=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --skip-build) build=0; shift ;;
        --baseline) baseline=$(realpath "$2"); shift 2 ;;
        --client) client=$(realpath "$2"); shift 2 ;;
        --canopy) canopy=$(realpath "$2"); shift 2 ;;
        *) echo "usage: $0 [--messages N] [--window W] [--rounds R] [--skip-build] [--baseline CLIENTBENCH]" \
                "[--client CLIENTBENCH] [--canopy CANOPY]" >&2; exit 2 ;;
    esac
done
cd "$repo"
if ((build)); then
    [[ -n $canopy ]] || flock "${BUILD_LOCK:-/tmp/canopy-swift-build.lock}" swift build -c release --product canopy
    [[ -n $client ]] || flock "${BUILD_LOCK:-/tmp/canopy-swift-build.lock}" swift build -c release --product ClientBench
fi
canopy=${canopy:-$repo/.build/release/canopy}
client=${client:-$repo/.build/release/ClientBench}
out=$(mktemp -d /tmp/canopy-swift-client.XXXXXX)
source "$here/server-lifecycle.sh"

# The clients of a round: the names in the table, and how each runs one workload.
names=(swift)
[[ -n $baseline ]] && names+=(baseline)
names+=(bench)

server_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
ticks_per_second=$(getconf CLK_TCK)

# run_client NAME MODE ROUND: one run against the round's server; appends "rate client_ns_per_op server_ns_per_op"
# to $out/NAME-MODE.
run_client() {
    local name=$1 mode=$2 round=$3 binary rate ops cpu before after
    local url="http://127.0.0.1:$server_port?ns=bench" ws="ws://127.0.0.1:$server_port"
    local json="$out/$name-$mode-$round.json" log="$out/$name-$mode-$round.out"
    before=$(server_ticks)
    local TIMEFORMAT='%U %S'
    case $name in
        swift|baseline)
            binary=$client
            [[ $name == baseline ]] && binary=$baseline
            { time "$binary" "$mode" "$url" "$messages" "$window" > "$log"; } 2> "$out/time"
            rate=$(sed -n 's/.*per_second=\([0-9]*\).*/\1/p' "$log")
            ops=$messages
            [[ $mode == writes ]] && ops=$((2 * messages))
            ;;
        bench)
            if [[ $mode == writes ]]; then
                { time "$canopy" bench writes --url "$ws" --writers 1 --listeners 0 --messages "$messages" \
                    --window "$window" --quiet --json "$json" > "$log" || true; } 2> "$out/time"
                rate=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['write_acks_per_second']))" "$json")
            else
                { time "$canopy" bench fanout --url "$ws" --subscribers 1 --writers 1 --messages "$messages" \
                    --window "$window" --quiet --json "$json" > "$log" || true; } 2> "$out/time"
                rate=$(python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['deliveries_per_second']))" "$json")
            fi
            ops=$messages
            ;;
    esac
    after=$(server_ticks)
    cpu=$(tail -1 "$out/time")
    python3 -c "import sys
user, system = map(float, sys.argv[1].split())
ops, ticks, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(sys.argv[5], round((user + system) * 1e9 / ops), round(ticks / hz * 1e9 / ops))" \
        "$cpu" "$ops" "$((after - before))" "$ticks_per_second" "$rate" >> "$out/$name-$mode"
}

for round in $(seq "$rounds"); do
    start_canopy "$canopy" "$out" "server-$round"
    # Rotate who goes first, so no client always meets the freshest server.
    order=("${names[@]:$(( (round - 1) % ${#names[@]} ))}" "${names[@]:0:$(( (round - 1) % ${#names[@]} ))}")
    line="round $round:"
    for mode in writes events; do
        for name in "${order[@]}"; do
            run_client "$name" "$mode" "$round"
            line+=" $mode $name $(tail -1 "$out/$name-$mode" | cut -d' ' -f1)/s"
        done
    done
    stop_server
    echo "$line"
done

# column FILE N: the Nth field of every round; median of a list; all rounds joined.
column() { cut -d' ' -f"$2" "$1"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
joined() { paste -sd/ | sed 's|/| / |g'; }
echo
echo "| workload ($messages messages, window $window, medians of $rounds) | client | per second | vs canopy bench | client CPU ns/op | server CPU ns/op | rounds (per second) |"
echo "|---|---|---|---|---|---|---|"
for mode in writes events; do
    bench_rate=$(column "$out/bench-$mode" 1 | median)
    for name in "${names[@]}"; do
        file="$out/$name-$mode"
        rate=$(column "$file" 1 | median)
        label=$name
        [[ $name == swift ]] && label="CanopyDatabase ($(basename "$client"))"
        [[ $name == baseline ]] && label="CanopyDatabase baseline ($(basename "$baseline"))"
        [[ $name == bench ]] && label="canopy bench"
        echo "| $mode | $label | $rate | $(python3 -c "print(f'{$rate/$bench_rate:.2f}')") |" \
            "$(column "$file" 2 | median) | $(column "$file" 3 | median) | $(column "$file" 1 | joined) |"
    done
done
echo
echo "Per-run figures (rate, client ns/op, server ns/op) are in $out."
