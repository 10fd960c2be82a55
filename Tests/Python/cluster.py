"""Cluster mode harness: a 3-node NATS JetStream cluster on loopback and Canopy nodes started against it.

``NatsCluster`` writes one config per server (a 3-node cluster on loopback, as
``docs/cluster.md`` "Running it" describes) into a temporary directory, picks free loopback ports once (kept across restarts) and counts a server as
up when its client port accepts connections and its monitoring endpoint (``/jsz``) names the JetStream metadata
leader. ``start_canopy_node`` starts ``canopy serve --cluster …`` the way conftest starts a single server. Tests get
a started cluster from the ``nats_cluster`` fixture (conftest.py), skipped when ``nats-server`` is not installed.
Servers are indexed from 0 (``kill(0)`` stops the server named ``n1``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import asyncio

from websockets.exceptions import ConnectionClosed, WebSocketException

from conftest import CanopyServer, Clients
from firebase_wire import WireClient, WireTimeout
from netlab import Host, NetworkLab
from rest_client import ADMIN, HttpConnection, url

READY_TIMEOUT = 30.0  # a lost metadata leader takes 2.9's Raft election timeout (4–9 s) to replace
STOP_TIMEOUT = 10.0


def nats_server_binary() -> str | None:
    """``nats-server`` on PATH, or Debian's ``/usr/sbin/nats-server`` (not on a normal user's PATH)."""
    found = shutil.which("nats-server")
    if found is None and os.access("/usr/sbin/nats-server", os.X_OK):
        found = "/usr/sbin/nats-server"
    return found


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports that nothing listens on now (all bound at once, then released)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def accepts(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


class NatsServer:
    """One member of the cluster: its address and ports, config file, log and (while running) process; ``lab_host``
    is its host when it runs in a network namespace of a ``NetworkLab``."""

    def __init__(self, name: str, client_port: int, route_port: int, http_port: int, lab_host: Host | None = None):
        self.name = name
        self.client_port = client_port
        self.route_port = route_port
        self.http_port = http_port
        self.lab_host = lab_host
        self.host = lab_host.address if lab_host else "127.0.0.1"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.client_port}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def jsz(self) -> dict:
        """The server's JetStream report (``/jsz``); ``{}`` when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.http_port}/jsz", timeout=1) as response:
                return json.load(response)
        except (OSError, ValueError):
            return {}

    def meta_leader(self) -> str:
        """The name of the JetStream metadata leader this server knows of, or ``""``."""
        return self.jsz().get("meta_cluster", {}).get("leader", "")


class NatsCluster:
    """Three ``nats-server`` processes with JetStream, clustered on loopback (or, given a ``NetworkLab``, each in a
    network namespace of its own, on the standard ports); files under ``directory``."""

    def __init__(self, directory: Path | None = None, binary: str | None = None, lab: NetworkLab | None = None):
        self.directory = Path(directory or tempfile.mkdtemp(prefix="canopy-nats-"))
        self.directory.mkdir(parents=True, exist_ok=True)
        self.binary = binary or nats_server_binary() or "nats-server"
        if lab is None:
            ports = free_ports(9)
            self.servers = [NatsServer(f"n{i + 1}", *ports[3 * i:3 * i + 3]) for i in range(3)]
        else:
            self.servers = [NatsServer(f"n{i + 1}", 4222, 6222, 8222, lab.add_host(f"n{i + 1}")) for i in range(3)]

    @property
    def urls(self) -> list[str]:
        """The client URLs of the three servers (what ``canopy serve --cluster`` takes, comma-separated)."""
        return [server.url for server in self.servers]

    def start(self) -> "NatsCluster":
        for index in range(len(self.servers)):
            self._spawn(index)
        self.wait_ready()
        return self

    def stop(self) -> None:
        """SIGTERM to every running server, SIGKILL to any still running after 10 s."""
        for server in self.servers:
            if server.alive():
                server.process.send_signal(signal.SIGTERM)
        for server in self.servers:
            if server.process is not None:
                try:
                    server.process.wait(STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    server.process.kill()
                    server.process.wait(5)

    def kill(self, index: int) -> None:
        """SIGKILL server ``index`` (0-based) and wait for it to exit; its store is kept for ``restart``."""
        server = self.servers[index]
        if server.alive():
            server.process.kill()
            server.process.wait(5)

    def restart(self, index: int) -> None:
        """Start server ``index`` again on its ports and store (stopping it first if it runs); waits until ready."""
        server = self.servers[index]
        if server.alive():
            server.process.send_signal(signal.SIGTERM)
            server.process.wait(STOP_TIMEOUT)
        self._spawn(index)
        self.wait_ready()

    def meta_leader(self) -> str:
        """The metadata leader's name (``n1``…) as the running servers agree on it, or ``""``."""
        leaders = {server.meta_leader() for server in self.servers if server.alive()}
        running = {server.name for server in self.servers if server.alive()}
        return leaders.pop() if len(leaders) == 1 and leaders <= running else ""

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Until every running server accepts clients and all name the same running metadata leader."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for server in self.servers:
                if server.process is not None and server.process.poll() is not None and server.process.returncode > 0:
                    raise RuntimeError(f"nats {server.name} exited with {server.process.returncode}: "
                                       f"{self.log_tail(server)}")
            running = [server for server in self.servers if server.alive()]
            if all(accepts(server.host, server.client_port) for server in running) and self.meta_leader():
                return
            time.sleep(0.05)
        raise RuntimeError(f"no JetStream metadata leader within {timeout}s: "
                           + " | ".join(f"{s.name}: {self.log_tail(s, 600)}" for s in self.servers))

    def log_tail(self, server: NatsServer, limit: int = 2000) -> str:
        try:
            return (self.directory / f"{server.name}.log").read_bytes()[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""

    def _spawn(self, index: int) -> None:
        server = self.servers[index]
        routes = ", ".join(f"nats-route://{s.host}:{s.route_port}" for s in self.servers)
        config = self.directory / f"{server.name}.conf"
        config.write_text(
            f"server_name: {server.name}\n"
            f"listen: {server.host}:{server.client_port}\n"
            f"http: {server.host}:{server.http_port}\n"
            "max_payload: 8MB\n"
            f'jetstream {{ store_dir: "{self.directory / server.name / "js"}", max_memory_store: 256MB, '
            "max_file_store: 4GB }\n"
            f"cluster {{ name: canopy, listen: {server.host}:{server.route_port}, routes: [ {routes} ] }}\n")
        with open(self.directory / f"{server.name}.log", "ab") as log:
            command = [self.binary, "-c", str(config)]
            server.process = subprocess.Popen(server.lab_host.command(command) if server.lab_host else command, stdout=log,
                                              stderr=subprocess.STDOUT, cwd=self.directory)

    def __enter__(self) -> "NatsCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class CanopyNode(CanopyServer):
    """A ``canopy serve --cluster …`` process: conftest's ``CanopyServer`` with its own binary and directory."""

    lab_host: Host | None = None  # its host when it runs in a NetworkLab's namespace

    @property
    def pid(self) -> int:
        return self.process.pid

    def restart(self) -> "CanopyNode":
        """Stops the node if it runs and starts it again on the same data directory (the old log is kept)."""
        self.stop()
        self.port_file.unlink(missing_ok=True)
        if self.log_path.exists():
            self.log_path.rename(self.directory / f"server.{len(list(self.directory.glob('server.*.log')))}.log")
        return self.start()


def start_canopy_node(binary: Path | str, tmpdir: Path | str, cluster_urls: list[str], *args: str,
                      lab_host: Host | None = None, environment: dict[str, str] | None = None) -> CanopyNode:
    """A started Canopy node in a new directory under ``tmpdir`` (port file, log, data), clustered over
    ``cluster_urls``; extra ``args`` go to ``canopy serve``. With ``lab_host`` it runs in that host's network
    namespace and listens on its address (``node.host``); ``environment`` is added to its environment (and to its
    restarts'), e.g. a ``clock_jumps.WallClock``'s. The caller stops it (``stop()``, or ``kill()``)."""
    directory = Path(tempfile.mkdtemp(prefix="canopy-node-", dir=tmpdir))
    # Open data and the emulator's admin credential on the lab's address, which exists only on this machine, as
    # on loopback.
    args = (*args, "--allow-open", "--admin-token", "owner") if lab_host else args
    prefix = (lab_host.command([]) if lab_host else []) \
        + (["env", *(f"{name}={value}" for name, value in environment.items())] if environment else [])
    node = CanopyNode(["--cluster", ",".join(cluster_urls), *args], name=directory.name, binary=Path(binary),
                      directory=directory, host=lab_host.address if lab_host else "127.0.0.1", prefix=prefix)
    node.lab_host = lab_host
    return node.start()


def children(value) -> dict:
    """A location's children by key (Firebase answers a location whose keys are small integers as an array)."""
    if isinstance(value, list):
        return {str(index): child for index, child in enumerate(value) if child is not None}
    return value or {}


def read_children(node: CanopyNode, ns: str, path: str, timeout: float = 60.0) -> dict:
    """The children of ``path`` read through ``node`` (REST, as admin: after the log's head); raises
    ``AssertionError`` on anything but a 200."""
    with HttpConnection(node.port, host=node.host, timeout=timeout) as connection:
        response = connection.request("GET", url(f"{path}.json", {"ns": ns}), headers=ADMIN)
    assert response.status == 200, f"read of {path} through {node.name}: {response.describe()}"
    return children(response.json())


def stream_of(ns: str) -> str:
    """The JetStream stream of a namespace: ``CANOPY_`` and the hex of its UTF-8 bytes."""
    return "CANOPY_" + ns.encode("utf-8").hex()


def nats_request(server: NatsServer, subject: str, payload: bytes = b"", timeout: float = 3.0) -> bytes:
    """One request over the NATS client protocol to ``server`` (a bare client: no dependency); the reply's
    payload."""
    with socket.create_connection((server.host, server.client_port), timeout=timeout) as connection:
        connection.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n'
                           b"SUB _INBOX.canopy 1\r\n"
                           + f"PUB {subject} _INBOX.canopy {len(payload)}\r\n".encode() + payload + b"\r\n")
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            start = received.find(b"MSG _INBOX.canopy")
            if start >= 0 and b"\r\n" in received[start:]:
                header_end = received.index(b"\r\n", start)
                fields = received[start:header_end].split()
                size = int(fields[-1])
                if len(received) >= header_end + 2 + size:
                    body = received[header_end + 2:header_end + 2 + size]
                    if received[start - 1:start] == b"H":  # HMSG: headers, then the payload
                        body = body[int(fields[-2]):]
                    return body
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
            if b"PING\r\n" in chunk:
                connection.sendall(b"PONG\r\n")
        raise TimeoutError(f"no reply to {subject} within {timeout}s")


def nats_publish(server: NatsServer, subject: str, payload: bytes, timeout: float = 3.0) -> None:
    """Publishes one message over the NATS client protocol to ``server`` (a bare client), and returns once the server
    answered a ``PING`` sent after it (so it was processed)."""
    with socket.create_connection((server.host, server.client_port), timeout=timeout) as connection:
        connection.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\n'
                           + f"PUB {subject} {len(payload)}\r\n".encode() + payload + b"\r\nPING\r\n")
        received = b""
        deadline = time.monotonic() + timeout
        while b"PONG\r\n" not in received:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no PONG after publishing to {subject} within {timeout}s")
            chunk = connection.recv(65536)
            if not chunk:
                raise ConnectionError(f"the server closed the connection publishing to {subject}: {received!r}")
            received += chunk


def move_stream_leader_to_meta_leader(cluster: NatsCluster, stream: str, timeout: float = 60.0) -> str:
    """Asks the stream's leader to step down until JetStream elects the metadata leader to lead the stream too (the
    worst case for a failover: one kill costs both elections); returns that server's name."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        leader, meta = stream_leader(cluster, stream), cluster.meta_leader()
        if leader and leader == meta:
            return leader
        if leader:
            server = next(server for server in cluster.servers if server.alive())
            try:
                nats_request(server, f"$JS.API.STREAM.LEADER.STEPDOWN.{stream}")
            except (OSError, TimeoutError):
                pass
        time.sleep(1.0)
    raise RuntimeError(f"the leader of {stream} never became the metadata leader")


def stream_details(cluster: NatsCluster, stream: str) -> list[dict] | None:
    """The stream's detail (``/jsz?streams=true``) from each running NATS server, or ``None`` when one does not
    answer."""
    details = []
    for server in cluster.servers:
        if not server.alive():
            continue
        try:
            url = f"http://{server.host}:{server.http_port}/jsz?streams=true"
            with urllib.request.urlopen(url, timeout=1) as response:
                report = json.load(response)
        except (OSError, ValueError):
            return None
        details += [detail for account in report.get("account_details", [])
                    for detail in account.get("stream_detail", []) if detail.get("name") == stream]
    return details


def stream_state(cluster: NatsCluster, stream: str) -> dict:
    """The stream's state (``first_seq``, ``last_seq``, ``messages``…) as a running NATS server reports it, or
    ``{}``."""
    return next((detail.get("state", {}) for detail in stream_details(cluster, stream) or []), {})


def stream_leader(cluster: NatsCluster, stream: str) -> str:
    """The stream's leader as every running NATS server reports it (``/jsz?streams=true``), or ``""``."""
    details = stream_details(cluster, stream)
    if details is None:
        return ""
    leaders = {detail.get("cluster", {}).get("leader", "") for detail in details}
    return leaders.pop() if len(leaders) == 1 else ""


class Connections(Clients):
    """conftest's ``Clients`` across nodes: ``await connections.to(node, ns)``; all aborted at the end."""

    def __init__(self):
        super().__init__(0)

    async def to(self, node: CanopyNode, ns: str | None) -> WireClient:
        client = await WireClient.connect(node.port, ns, host=node.host)
        self.open.append(client)
        return client


class Writer:
    """Writes ``/w/<name>/<i> = i`` with up to ``window`` requests in flight through the first running node of
    ``targets``; when its connection drops it reconnects to the next running one and goes on with new numbers (a
    write in flight when the node died may or may not have been applied). Records every acknowledged write."""

    def __init__(self, name: str, targets: list[CanopyNode], ns: str, connections: Connections, window: int = 8):
        self.name = name
        self.targets = targets
        self.ns = ns
        self.connections = connections
        self.window = window
        self.acked: dict[int, float] = {}  # i -> when acknowledged
        self.nodes_used: list[str] = []
        self.stopping = False
        self.client: WireClient | None = None
        self.requests: dict[int, int] = {}  # request number -> i (this connection)

    async def run(self) -> None:
        i = 0
        while not self.stopping:
            node = next((node for node in self.targets if node.alive()), None)
            assert node is not None, "no node left to write through"
            try:
                self.client = await self.connections.to(node, self.ns)
            except (OSError, WebSocketException, WireTimeout, asyncio.TimeoutError):
                await asyncio.sleep(0.05)
                continue  # it died or is stopping meanwhile: the next one
            self.nodes_used.append(node.name)
            in_flight: dict[asyncio.Future, int] = {}
            try:
                while not self.stopping or in_flight:
                    while not self.stopping and len(in_flight) < self.window:
                        future = await self.client.send_request("p", {"p": f"/w/{self.name}/{i}", "d": i})
                        self.requests[self.client.next_r - 1] = i
                        in_flight[future] = i
                        i += 1
                    done, _ = await asyncio.wait(in_flight, timeout=30, return_when=asyncio.FIRST_COMPLETED)
                    assert done, f"writer {self.name}: no acknowledgement within 30 s " \
                        f"({len(self.acked)} acknowledged before, {len(in_flight)} in flight)"
                    for future in done:
                        number = in_flight.pop(future)
                        response = future.result()  # ConnectionError when the node died
                        assert response.ok, f"writer {self.name}: write {number}: {response.status}"
                        self.acked[number] = time.monotonic()
            except (ConnectionError, ConnectionClosed):
                continue  # the outcome of the writes in flight is unknown
            finally:
                for future in in_flight:  # abandoned: retrieve their errors (no warnings at exit)
                    future.add_done_callback(lambda f: f.cancelled() or f.exception())

    def acked_since(self, moment: float) -> int:
        return sum(1 for at in self.acked.values() if at > moment)
