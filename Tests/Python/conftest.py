"""Shared fixtures: starting and stopping the real server, running ``async def`` tests, minting tokens.

The server binary is ``<repo>/.build/debug/canopy`` unless ``CANOPY_BIN`` names another one. Every server runs on an
ephemeral port of 127.0.0.1 with a temporary data directory and is stopped with SIGTERM (bounded; SIGKILL after
10 s counts as a failure). ``async def`` tests run under ``asyncio.run`` with a timeout (``@pytest.mark.timeout(s)``,
default 20 s), so no test can hang.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from firebase_wire import WireClient

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TEST_TIMEOUT = 20.0
START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


def canopy_binary() -> Path:
    return Path(os.environ.get("CANOPY_BIN") or REPO_ROOT / ".build" / "debug" / "canopy")


class CanopyServer:
    """One ``canopy serve`` process."""

    def __init__(self, args: list[str] | None = None, name: str = "server", data_dir: Path | None = None,
                 binary: Path | None = None, directory: Path | None = None, open_namespaces: bool = True,
                 host: str = "127.0.0.1", prefix: list[str] | None = None):
        self.args = list(args or [])
        # Where it listens, and what its command runs under (``ip netns exec NAME`` for a host of a NetworkLab).
        self.host = host
        self.prefix = list(prefix or [])
        # Tests isolate themselves by namespace, so any client may create one unless a test says otherwise.
        self.open_namespaces = open_namespaces
        self.name = name
        self.binary = binary
        self.directory = directory or Path(tempfile.mkdtemp(prefix="canopy-pytest-"))
        self.data_dir = data_dir or self.directory / "data"
        self.port_file = self.directory / "port"
        self.log_path = self.directory / "server.log"
        self.process: subprocess.Popen | None = None
        self.port: int = 0
        self.exit_code: int | None = None

    def start(self) -> "CanopyServer":
        binary = self.binary or canopy_binary()
        if not binary.exists():
            pytest.fail(f"server binary {binary} is missing: build it (swift build) or set CANOPY_BIN")
        command = [
            *self.prefix, str(binary), "serve", "--host", self.host, "--port", "0", "--port-file", str(self.port_file),
            "--data-dir", str(self.data_dir), "--console-dir", str(REPO_ROOT / "Console"), "--log-level", "warning",
            *(["--namespaces", "*"] if self.open_namespaces else []), *self.args,
        ]
        self._log = open(self.log_path, "wb")
        # The temporary directory as working directory keeps the repository's Config/canopy.json out of the test.
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, cwd=self.directory)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.exit_code = self.process.returncode
                pytest.fail(f"server exited with {self.exit_code} at start: {self.log_tail()}")
            text = self.port_file.read_text() if self.port_file.exists() else ""
            if text.strip().isdigit():
                self.port = int(text.strip())
                return self
            time.sleep(0.02)
        self.kill()
        pytest.fail(f"server wrote no port file within {START_TIMEOUT}s: {self.log_tail()}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, limit: int = 4000) -> str:
        try:
            return self.log_path.read_bytes()[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self) -> int:
        """SIGTERM, then wait up to 10 s; returns the exit code (SIGKILL and -9 when it did not stop)."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
                self.exit_code = -9
                return -9
        self.exit_code = self.process.returncode
        self._log.close()
        return self.exit_code

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


class ServerFactory:
    """Starts servers for one test (or module) and stops them all afterwards, failing on crashes."""

    def __init__(self):
        self.servers: list[CanopyServer] = []

    def __call__(self, *args: str, data_dir: Path | None = None, open_namespaces: bool = True) -> CanopyServer:
        server = CanopyServer(list(args), data_dir=data_dir, open_namespaces=open_namespaces).start()
        self.servers.append(server)
        return server

    def kill(self, server: CanopyServer) -> None:
        """kill -9 on purpose (a crash the test makes): not reported as a failure at the end."""
        server.kill()
        self.servers.remove(server)

    def finish(self) -> None:
        problems = []
        for server in self.servers:
            crashed = not server.alive() and server.exit_code is None
            code = server.stop()
            if crashed:
                problems.append(f"server {server.args} died during the test with {code}: {server.log_tail()}")
            elif code != 0:
                problems.append(f"server {server.args} exited with {code} after SIGTERM: {server.log_tail()}")
        if problems:
            pytest.fail("\n".join(problems))


@pytest.fixture
def start_server():
    factory = ServerFactory()
    yield factory
    factory.finish()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One plain server (no auth flags) shared by a test module; tests isolate themselves by namespace.

    With ``CANOPY_TEST_CLUSTER=1`` it is a node of a cluster instead: a 3-node NATS JetStream cluster and two Canopy
    nodes with ``--cluster``, the tests talking to the first (the other applies everything too). ``scripts/test``
    runs the wire-protocol suites this way as well, so the SDK-visible behaviour is checked in cluster mode."""
    factory = ServerFactory()
    if os.environ.get("CANOPY_TEST_CLUSTER") != "1":
        yield factory()
        factory.finish()
        return
    from cluster import NatsCluster  # cluster.py imports this module

    cluster = NatsCluster(tmp_path_factory.mktemp("nats")).start()
    try:
        node = factory("--cluster", ",".join(cluster.urls))
        factory("--cluster", ",".join(cluster.urls))
        yield node
        factory.finish()
    finally:
        cluster.stop()


@pytest.fixture(autouse=True)
def _server_survives(request):
    """Fails the test during which a shared server died (so a crash is blamed on the right test)."""
    yield
    if "server" in request.fixturenames:
        shared = request.getfixturevalue("server")
        if not shared.alive():
            pytest.fail(f"the server died during this test: {shared.log_tail()}")


@pytest.fixture
def nats_cluster(tmp_path):
    """A started 3-node NATS JetStream cluster (cluster.NatsCluster) for one test, stopped afterwards."""
    from cluster import NatsCluster, nats_server_binary  # cluster.py imports this module

    if nats_server_binary() is None:
        pytest.skip("nats-server is not installed (apt-get install nats-server)")
    cluster = NatsCluster(tmp_path / "nats")
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def ns(request) -> str:
    """A namespace of this test's own (lowercase letters, digits and dashes)."""
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:30]
    digest = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:6]
    return f"{name}-{digest}"


class Clients:
    """Connects clients and aborts whatever is still open at the end of the test."""

    def __init__(self, port: int):
        self.port = port
        self.open: list[WireClient] = []

    async def connect(self, ns: str | None = "test", **kw: Any) -> WireClient:
        client = await WireClient.connect(self.port, ns, **kw)
        self.open.append(client)
        return client

    async def aclose(self) -> None:
        await asyncio.gather(*(client.aclose() for client in self.open), return_exceptions=True)

    async def __aenter__(self) -> "Clients":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def pytest_configure(config):
    config.addinivalue_line("markers", "timeout(seconds): bound for an async test (default 20 s)")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Runs ``async def`` tests with ``asyncio.run`` under a timeout."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    marker = pyfuncitem.get_closest_marker("timeout")
    timeout = float(marker.args[0]) if marker else DEFAULT_TEST_TIMEOUT
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}

    async def run():
        started = time.monotonic()
        try:
            await asyncio.wait_for(pyfuncitem.obj(**arguments), timeout)
        except asyncio.TimeoutError:
            if time.monotonic() - started >= timeout:
                pytest.fail(f"test did not finish within {timeout}s")
            raise

    asyncio.run(run())
    return True
