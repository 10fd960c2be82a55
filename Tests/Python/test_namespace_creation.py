"""Namespaces (issues 17 and 25). On a server that listens on loopback only, a namespace is created on first use,
as the emulator does, so an app's own database name (`<project>-default-rtdb`) works with the defaults. Off
loopback, namespaces are created only with the admin credential or when `data.namespaces` lists them: anyone else
naming a new namespace gets a clear error naming the setting (REST 404; on the wire the protocol's shutdown message,
which SDKs treat as final, then close 1008; a line in the server log) and nothing is created on disk; namespaces
that exist stay reachable.

The gated servers listen on 0.0.0.0 (reached through 127.0.0.1), with `--allow-open` since they have no rules file
and an admin token since `owner` is a loopback-only credential."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from firebase_wire import WireClient
from test_connection_limits import metric


def rest(port: int, method: str, path: str, body=None, headers: dict | None = None) -> tuple[int, dict | None]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


async def refused_on_the_wire(port: int, ns: str) -> str:
    """Connects to `ns` and returns the shutdown reason the server sends before closing with 1008."""
    client = await WireClient.connect(port, ns, wait_hello=False)
    try:
        shutdown = await client.wait_for(lambda entry: entry.control_type == "s", timeout=5)
        await client.wait_closed(5)
        assert client.close_code == 1008, client.close_code
        assert client.hello is None
        return shutdown.body["d"]
    finally:
        await client.close()


OFF_LOOPBACK = ("--host", "0.0.0.0", "--allow-open", "--admin-token", "the-admin-secret-token")


async def test_a_loopback_server_creates_an_apps_own_namespace_on_first_use(start_server):
    server = start_server("--log-level", "notice", open_namespaces=False)
    client = await WireClient.connect(server.port, "myapp-default-rtdb")
    try:
        assert client.hello is not None
        assert (await client.put("/greeting", "hello")).ok
        assert (await client.get("/greeting")).data == "hello"
    finally:
        await client.close()
    status, body = rest(server.port, "GET", "/greeting.json?ns=myapp-default-rtdb")
    assert (status, body) == (200, "hello")
    assert sorted(path.name for path in server.data_dir.iterdir()) == ["default", "myapp-default-rtdb"]


async def test_an_unauthenticated_client_creates_no_namespace(start_server):
    server = start_server(*OFF_LOOPBACK, "--log-level", "notice", open_namespaces=False)
    port = server.port
    reason = await refused_on_the_wire(port, "made-up")
    assert "namespace made-up does not exist" in reason and "data.namespaces" in reason, reason
    assert "--namespaces made-up" in reason, reason
    status, body = rest(port, "PUT", "/x.json?ns=made-up-rest", {"a": 1})
    assert status == 404 and "does not exist" in body["error"] and "data.namespaces" in body["error"], (status, body)
    status, _ = rest(port, "GET", "/x.json?ns=made-up-rest")
    assert status == 404
    # A Host header naming a namespace is refused the same way.
    status, _ = rest(port, "GET", "/x.json", headers={"Host": "by-host.example.com"})
    assert status == 404
    assert sorted(path.name for path in server.data_dir.iterdir()) == ["default"]
    assert metric(port, "canopy_namespaces_refused_total") == 4
    # The default namespace serves everyone, and refusals open nothing that could fill maxNamespaces.
    client = await WireClient.connect(port, None)
    try:
        assert (await client.put("/ok", 1)).ok
    finally:
        await client.close()
    assert metric(port, "canopy_namespaces") == 1
    log = server.log_path.read_text()
    assert "namespace.refused" in log and "made-up" in log and "data.namespaces" in log, log


async def test_the_admin_credential_creates_and_then_anyone_may_use_it(start_server):
    server = start_server(*OFF_LOOPBACK, open_namespaces=False)
    port = server.port
    # Over REST ...
    status, _ = rest(port, "PUT", "/greeting.json?ns=by-rest&auth=the-admin-secret-token", "hello")
    assert status == 200
    # ... and over a WebSocket whose upgrade carries it, as the Node SDKs send it.
    admin = await WireClient.connect(port, "by-wire", headers={"Authorization": "Bearer the-admin-secret-token"})
    try:
        assert (await admin.put("/x", 1)).ok
    finally:
        await admin.close()
    # A wrong credential creates nothing.
    assert "does not exist" in await refused_on_the_wire(port, "by-guess")
    status, _ = rest(port, "PUT", "/x.json?ns=by-guess&auth=wrong", 1)
    assert status in (401, 404)
    assert sorted(path.name for path in server.data_dir.iterdir()) == ["by-rest", "by-wire", "default"]
    anyone = await WireClient.connect(port, "by-rest")
    try:
        assert (await anyone.get("/greeting")).data == "hello"
    finally:
        await anyone.close()


async def test_existing_namespaces_open_after_a_restart(start_server, tmp_path):
    data = tmp_path / "data"
    first = start_server(*OFF_LOOPBACK, data_dir=data, open_namespaces=False)
    status, _ = rest(first.port, "PUT", "/v.json?ns=kept&auth=the-admin-secret-token", 7)
    assert status == 200
    assert first.stop() == 0
    second = start_server(*OFF_LOOPBACK, data_dir=data, open_namespaces=False)
    status, body = rest(second.port, "GET", "/v.json?ns=kept")
    assert (status, body) == (200, 7)


async def test_the_allow_list_takes_names_and_patterns(start_server):
    server = start_server(*OFF_LOOPBACK, "--namespaces", "chat-*,exact", open_namespaces=False)
    port = server.port
    for allowed in ("chat-1", "chat-", "exact"):
        client = await WireClient.connect(port, allowed)
        try:
            assert (await client.put("/x", allowed)).ok
        finally:
            await client.close()
    for refused in ("chat", "exactly", "xchat-1"):
        assert "does not exist" in await refused_on_the_wire(port, refused)
    assert sorted(path.name for path in server.data_dir.iterdir()) == ["chat-", "chat-1", "default", "exact"]


def test_an_invalid_allow_list_entry_is_rejected_at_start(tmp_path):
    from conftest import canopy_binary
    import subprocess

    finished = subprocess.run(
        [str(canopy_binary()), "serve", "--port", "0", "--data-dir", str(tmp_path / "d"), "--namespaces", "ok,bad/name"],
        cwd=tmp_path, capture_output=True, text=True, timeout=20)
    assert finished.returncode != 0
    assert "data.namespaces" in finished.stderr and "bad/name" in finished.stderr, finished.stderr
    assert not (tmp_path / "d").exists() or not any((tmp_path / "d").iterdir())
