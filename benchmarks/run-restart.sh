#!/usr/bin/env bash
# Start-up after a long journal (issue 28): one fresh release `canopy serve` as deployed (fsync always), written to
# over REST with wrk — 64 KiB values to 256 rotating keys for BIG seconds (over 1 GiB of journal here), then small
# values to 4,096 rotating keys for SMALL seconds (records whose replay costs more per record than per byte) — then
# killed with SIGKILL (no final snapshot), started again on the same directory, and timed until it listens and until
# a read of the namespace is answered (the namespace loaded: snapshot read, journal tail replayed).
#
#   benchmarks/run-restart.sh [--binary PATH] [--big S (10)] [--small S (60)] [--rounds N (1)]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
binary="$here/../.build/release/canopy" big=10 small=60 rounds=1
while [[ $# -gt 0 ]]; do
    case $1 in
        --binary) binary=$2; shift 2 ;;
        --big) big=$2; shift 2 ;;
        --small) small=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        *) echo "usage: $0 [--binary PATH] [--big S] [--small S] [--rounds N]" >&2; exit 2 ;;
    esac
done
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 2; }
out=$(mktemp -d /tmp/canopy-restart.XXXXXX)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$out"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
serve() {  # serve LOG: the server on $out/data, in the background
    "$binary" serve --host 127.0.0.1 --port "$port" --data-dir "$out/data" --log-level info --namespaces '*' \
        --rules "$here/open.rules.json" > "$1" 2>&1 &
}
for round in $(seq "$rounds"); do
    rm -rf "$out/data"
    serve "$out/write.log"; pid=$!
    until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=0.2)" 2>/dev/null; do sleep 0.05; done
    big_puts=$(wrk -t2 -c16 -d"${big}s" -s "$here/restart/big.lua" "http://127.0.0.1:$port/" | awk '/requests in/{print $1}')
    small_puts=$(wrk -t2 -c16 -d"${small}s" -s "$here/restart/small.lua" "http://127.0.0.1:$port/" | awk '/requests in/{print $1}')
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
    started=$(date +%s.%N)
    serve "$out/start.log"; pid=$!
    times=$(python3 - "$port" "$started" <<'PY'
import socket, sys, time, urllib.request
port, started = int(sys.argv[1]), float(sys.argv[2])
listening = None
deadline = time.time() + 300
while time.time() < deadline:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        listening = listening or time.time() - started
        urllib.request.urlopen(f"http://127.0.0.1:{port}/small/k1.json?ns=restart", timeout=120).read()
        print(f"{listening:.2f} {time.time() - started:.2f}")
        break
    except OSError:
        time.sleep(0.02)
PY
)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    replay=$(grep -o 'namespace=restart replayed=[0-9]* seconds=[0-9.]*' "$out/start.log" || true)
    echo "round $round: wrote $big_puts PUTs of 64 KiB ($((big_puts * 64 / 1024)) MiB) and $small_puts small PUTs;" \
        "listening after ${times% *} s, first read answered after ${times#* } s ($replay)"
done
