"""One order per namespace (issue 13): a connection's requests take effect in the order it sent them, a write is
judged by the rules against a tree holding every earlier write, and every client sees the events of one total order.

Clients pipeline their requests (no waiting between them), so the server, not the test, decides what runs when;
every check compares what clients observed with one another and with a model, never with sleeps.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosedError

import tokens
import total_order
from conftest import Clients, ServerFactory
from rest_client import StreamCollector, open_stream
from total_order import acknowledgement_order

SECRET = "canopy-ordering-secret-0123456789abcdef"
KEYS = 16


def token(uid: str) -> str:
    return tokens.hs256(SECRET, tokens.claims(uid))


@pytest.mark.timeout(120)
async def test_pipelined_writes_over_many_keys_are_acknowledged_and_seen_in_request_order(server, ns):
    count = 4000
    async with Clients(server.port) as clients:
        per_key = await clients.connect(ns)
        for key in range(KEYS):
            _, response = await per_key.listen(f"/k{key}")
            assert response.ok
        root = await clients.connect(ns)
        _, response = await root.listen("/")
        assert response.ok
        stream = open_stream(server.port, "/", ns, timeout=60)
        stream.expect("put")
        collector = StreamCollector(stream, count, timeout=100)
        collector.start()

        writer = await clients.connect(ns)
        futures = [await writer.send_request("p", {"p": f"/k{i % KEYS}/v", "d": i}) for i in range(count)]
        responses = [await writer.wait_response(future, 60) for future in futures]
        assert all(response.ok for response in responses), [r for r in responses if not r.ok][:3]
        numbers = {response.r for response in responses}
        acked = acknowledgement_order(writer, numbers)
        assert acked == sorted(acked), "acknowledgements overtook each other"

        for client in (per_key, root):
            await client.wait_for(lambda e: e.is_push and e.payload.get("d") == count - 1, 60,
                                  "the last write's event")
            values = [push.payload.get("d") for push in client.pushes() if isinstance(push.payload.get("d"), int)]
            assert values == list(range(count)), \
                f"{sum(1 for a, b in zip(values, values[1:]) if b <= a)} values out of order"
        events = collector.result(100)
        values = [event.value for event in events if event.name == "put"]
        assert values == list(range(count)), "the event stream saw the writes out of order"
        stream.close()


PROFILE_RULES = {
    "rules": {
        "profiles": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid"}},
        "posts": {"$p": {".read": True, ".write": "root.child('profiles/' + auth.uid).exists()"}},
        "grants": {"$uid": {".write": "auth.uid == $uid"}},
        "secrets": {"$uid": {".read": "root.child('grants/' + auth.uid).exists()",
                             ".write": "root.child('grants/' + auth.uid).exists()"}},
    }
}


@pytest.fixture(scope="module")
def rules_server(tmp_path_factory):
    path = tmp_path_factory.mktemp("ordering-rules") / "database.rules.json"
    path.write_text(json.dumps(PROFILE_RULES))
    factory = ServerFactory()
    yield factory("--rules", str(path), "--auth-secret", SECRET)
    factory.finish()


@pytest.mark.timeout(60)
async def test_a_write_is_judged_against_the_connections_earlier_writes(rules_server, ns):
    rounds = 200
    async with Clients(rules_server.port) as clients:
        alice = await clients.connect(ns)
        assert (await alice.auth(token("alice"))).ok
        futures = []
        for index in range(rounds):
            futures.append(("profile", await alice.send_request("p", {"p": "/profiles/alice", "d": {"n": index}})))
            futures.append(("post", await alice.send_request("p", {"p": f"/posts/p{index}", "d": index})))
            futures.append(("remove", await alice.send_request("p", {"p": "/profiles/alice", "d": None})))
        denied = []
        for kind, future in futures:
            response = await alice.wait_response(future, 30)
            if not response.ok:
                denied.append((kind, response.status))
        assert denied == [], f"{len(denied)} of {len(futures)} requests denied: {denied[:5]}"
        # With the profile removed last, a further post is denied: the rule really reads the tree.
        assert (await alice.put("/posts/late", 1)).status == "permission_denied"


@pytest.mark.timeout(60)
async def test_a_listen_and_a_get_after_a_write_are_judged_with_it(rules_server, ns):
    """100 pipelined rounds of: grant myself access, listen, get, write, revoke, get again. Each request must be
    judged with the grant or revocation sent just before it."""
    rounds = 100
    async with Clients(rules_server.port) as clients:
        bob = await clients.connect(ns)
        assert (await bob.auth(token("bob"))).ok
        admin = await clients.connect(ns)
        assert (await admin.auth("owner", action="gauth")).ok
        assert (await admin.put("/secrets/bob", {"plan": "x"})).ok
        expected = []
        for index in range(rounds):
            expected.append(("grant", "ok", await bob.send_request("p", {"p": "/grants/bob", "d": True})))
            view, listen = await bob.listen_nowait("/secrets/bob")
            expected.append(("listen", "ok", listen))
            expected.append(("get", "ok", await bob.send_request("g", {"p": "/secrets/bob", "q": {}})))
            expected.append(("write", "ok", await bob.send_request("p", {"p": "/secrets/bob/n", "d": index})))
            expected.append(("unlisten", "ok", await bob.send_request("n", {"p": "/secrets/bob"})))
            bob.views.remove(view)
            expected.append(("revoke", "ok", await bob.send_request("p", {"p": "/grants/bob", "d": None})))
            expected.append(("get after revoke", "permission_denied",
                             await bob.send_request("g", {"p": "/secrets/bob", "q": {}})))
        wrong = []
        for what, status, future in expected:
            response = await bob.wait_response(future, 30)
            if response.status != status:
                wrong.append((what, response.status))
        assert wrong == [], f"{len(wrong)} of {len(expected)} requests judged out of order: {wrong[:6]}"


@pytest.mark.timeout(120)
async def test_concurrent_clients_observe_one_total_order(server, ns):
    """Several connections write concurrently to overlapping keys: sets, multi-path updates and compare-and-set
    transactions on one counter. Every client listens at the root from before the first write. The checker
    (total_order.py, shared with the cluster test) asks: did every client see the same sequence of writes, did each
    see its own writes before their acknowledgements and in the order it sent them, does replaying that sequence
    give the tree the server holds, and do the accepted transactions form one chain (each read the value the
    previous one wrote)?"""
    async with Clients(server.port) as clients:
        connections = [await clients.connect(ns) for _ in range(5)]
        workload = await total_order.run(connections, per_writer=300)
        stored = (await connections[0].get("/")).data
        total_order.check(connections, workload, [stored])


@pytest.mark.timeout(120)
async def test_a_namespace_loading_from_disk_blocks_no_other_namespace(start_server, tmp_path):
    """A large namespace loads on its own sequencer: while it loads, a client of another namespace is served, and
    the large namespace's first client gets its data once the load is done."""
    from conftest import canopy_binary
    data_dir = tmp_path / "data"
    export = tmp_path / "big.json"
    items = 200_000
    export.write_text(json.dumps({"items": {f"i{n}": {"n": n, "text": "x" * 40} for n in range(items)}}))
    imported = subprocess.run([str(canopy_binary()), "import", str(export), "--data-dir", str(data_dir),
                               "--ns", "big"], capture_output=True, timeout=90)
    assert imported.returncode == 0, imported.stderr
    server = start_server(data_dir=data_dir)
    async with Clients(server.port) as clients:
        big = await clients.connect("big")
        small = await clients.connect("small")
        first = await big.send_request("g", {"p": "/items/i7", "q": {}})
        started = asyncio.get_running_loop().time()
        for n in range(20):
            assert (await small.put("/n", n)).ok
            assert (await small.get("/n")).data == n
        small_done = asyncio.get_running_loop().time()
        assert not first.done(), "another namespace's 40 round trips waited for the large namespace's load"
        response = await big.wait_response(first, 60)
        assert response.ok and response.data == {"n": 7, "text": "x" * 40}
        print(f"other namespace: 40 round trips in {small_done - started:.3f}s while the large one loaded")


@pytest.mark.timeout(60)
async def test_a_namespace_that_cannot_load_closes_its_connections_and_others_go_on(start_server, tmp_path):
    data_dir = tmp_path / "data"
    broken = data_dir / "broken"
    broken.mkdir(parents=True)
    (broken / "state.canopy").write_bytes(b"not a snapshot at all")
    server = start_server(data_dir=data_dir)
    async with Clients(server.port) as clients:
        victim = await clients.connect("broken")
        try:
            pending = await victim.send_request("g", {"p": "/", "q": {}})
        except ConnectionClosedError:
            pending = None  # closed already: the load failed before the request went out
        await victim.wait_closed(20)
        assert victim.close_code == 1011, (victim.close_code, victim.close_reason)
        assert any("unavailable" in entry.text for entry in victim.log), victim.texts()
        served = pending is not None and pending.done() and pending.exception() is None and pending.result().ok
        assert not served, "no data from a namespace that did not load"
        other = await clients.connect("fine")
        assert (await other.put("/a", 1)).ok
        assert (await other.get("/a")).data == 1
        # The next connection tries to open it again, and is closed again (maybe before its hello arrives).
        try:
            again = await clients.connect("broken")
            await again.wait_closed(20)
            code = again.close_code
        except ConnectionClosedError as closed:
            code = closed.rcvd.code if closed.rcvd else None
        assert code == 1011
    assert "cannot open namespace" in server.log_path.read_text()


def test_a_negative_compression_threshold_is_refused_at_start(tmp_path):
    """A configuration value that would trap deep in the WebSocket layer is refused up front with its name."""
    from conftest import canopy_binary
    config = tmp_path / "canopy.json"
    config.write_text(json.dumps({"webSocket": {"compressionThresholdBytes": -1}}))
    finished = subprocess.run([str(canopy_binary()), "serve", "--config", str(config), "--port", "0",
                               "--data-dir", str(tmp_path / "data")], capture_output=True, text=True, timeout=30)
    assert finished.returncode > 0, (finished.returncode, finished.stderr[-1000:])
    assert "webSocket.compressionThresholdBytes must be 0…" in finished.stdout + finished.stderr
