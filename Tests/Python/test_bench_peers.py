"""`canopy bench` against the servers people compare Canopy with (issue 14): real `redis-server` and `nats-server`
(Debian's packages, which `scripts/test` installs), each started fresh on a free loopback port. Every update must
reach every subscriber, in order, and every write must be acknowledged (Redis: the PUBLISH reply; NATS: the
writer's own copy)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import canopy_binary

SERVERS = {
    "redis": lambda port: ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no"],
    "nats": lambda port: ["nats-server", "-a", "127.0.0.1", "-p", str(port)],
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(params=["redis", "nats"])
def peer(request):
    kind = request.param
    port = free_port()
    process = subprocess.Popen(SERVERS[kind](port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert process.poll() is None, f"{kind} server exited with {process.returncode}"
            assert time.monotonic() < deadline, f"{kind} server did not listen on {port}"
            time.sleep(0.05)
    yield kind, port, process
    process.terminate()
    process.wait(10)


def bench(tmp_path: Path, kind: str, port: int, *args: str, pid: int | None = None) -> dict:
    report = tmp_path / f"{kind}-{args[0]}.json"
    command = [str(canopy_binary()), "bench", *args, "--protocol", kind, "--url", f"{kind}://127.0.0.1:{port}",
               "--timeout", "60", "--json", str(report)]
    if pid is not None:
        command += ["--server-pid", str(pid)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-2000:]
    return json.loads(report.read_text())


def test_fanout_reaches_every_subscriber_in_order(peer, tmp_path):
    kind, port, process = peer
    report = bench(tmp_path, kind, port, "fanout", "--subscribers", "40", "--messages", "500", "--window", "32",
                   pid=process.pid)
    assert report["failures"] == []
    assert report["deliveries"] == report["expected_deliveries"] == 20_000
    assert report["lost"] == 0 and report["out_of_order"] == 0
    assert report["writes_acknowledged"] == 500
    assert report["latency"]["count"] == 20_000
    assert 0 < report["write_latency"]["max"] < 10_000_000, "write-to-ack latency (µs) must be bounded"
    server = report["server"]
    assert server["cpu_nanoseconds_per_delivery"] is not None
    # The kernel's share is part of the total, never more.
    assert 0 <= server["kernel_cpu_nanoseconds_per_delivery"] <= server["cpu_nanoseconds_per_delivery"]


def test_rooms_with_several_writers_and_idle_connections(peer, tmp_path):
    kind, port, _ = peer
    rooms = bench(tmp_path, kind, port, "rooms", "--rooms", "8", "--subscribers", "5", "--writers", "4",
                  "--messages", "800")
    assert rooms["failures"] == [] and rooms["deliveries"] == 4000 and rooms["lost"] == 0
    idle = bench(tmp_path, kind, port, "connections", "--connections", "100", "--duration", "0")
    assert idle["failures"] == [] and idle["connections"]["opened"] == 100
