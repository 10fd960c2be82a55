# Sourced by the benchmark runners: the one server under test, stopped on exit or interrupt.
# start_canopy (or the runner's own start for other servers) sets server_pid and server_port.

server_pid=""
server_port=""

# stop_server: SIGTERM, up to 5 s to exit, then SIGKILL.
stop_server() {
    if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
    server_port=""
}
# Open data (every client reads and writes everything), which the benchmarks measure. Passed explicitly: a server
# started from the repository root without --rules would enforce Config/database.rules.json and refuse the load
# clients, which never sign in.
open_rules="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/open.rules.json"

# start_canopy BINARY DIR NAME [serve arguments...]: a fresh release `canopy serve` on a free loopback port with an
# empty data directory DIR/NAME-data and open rules ($open_rules; a `--rules FILE` among the serve arguments comes
# later and wins), logging to DIR/NAME-server.log; sets server_pid and server_port. Returns 1 (printing the log) when
# the server exits or reports no port within 30 s.
start_canopy() {
    local binary=$1 dir=$2 name=$3
    shift 3
    local port_file="$dir/$name.port" data="$dir/$name-data" log="$dir/$name-server.log" deadline=$((SECONDS + 30))
    rm -rf "$port_file" "$data"
    # SERVER_WRAPPER (e.g. `taskset -c 1`) runs the server under another command.
    ${SERVER_WRAPPER:-} "$binary" serve --host 127.0.0.1 --port 0 --port-file "$port_file" --data-dir "$data" --log-level warning \
        --namespaces '*' --rules "$open_rules" "$@" > "$log" 2>&1 &
    server_pid=$!
    until [[ -s $port_file ]]; do
        if ! kill -0 "$server_pid" 2>/dev/null || (( SECONDS > deadline )); then
            echo "canopy did not start; log:" >&2
            cat "$log" >&2
            stop_server
            return 1
        fi
        sleep 0.05
    done
    server_port=$(tr -dc '0-9' < "$port_file")
}

# free_port: a loopback port nothing listens on now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM
