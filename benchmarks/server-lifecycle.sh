# Sourced by the benchmark runners: the one server under test, stopped on exit or interrupt.
# The runner's start_server sets server_pid (and server_port once the server reports it).

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
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM
