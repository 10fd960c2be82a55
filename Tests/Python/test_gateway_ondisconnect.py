"""onDisconnect put/merge/cancel (wire-protocol.md §10, §13 example 6).

"Does not fire" is checked deterministically: every test also registers an operation on a marker location that is
never cancelled, waits for the marker to arrive at the observer, and only then checks the other locations.
"""

import time

import pytest

import firebase_model as model
from conftest import Clients
from firebase_wire import WireClient


async def fire_and_wait(victim: WireClient, observer: WireClient, marker_view, how: str = "abort"):
    """Disconnects ``victim`` (TCP reset without a close frame, or a clean close) and waits until the observer
    has seen the marker written by the victim's onDisconnect queue."""
    if how == "abort":
        victim.abort()
    else:
        await victim.close()
    await observer.wait_for(
        lambda entry: entry.is_push and entry.path == marker_view.path and entry.payload.get("d") is not None,
        timeout=10, what=f"the marker written by the onDisconnect queue ({how})")
    await observer.sync()


async def register(client: WireClient, action: str, path: str, data) -> None:
    response = await client.request(action, {"p": path, "d": data})
    assert response.inbound.text == '{"t":"d","d":{"r":%d,"b":{"s":"ok","d":""}}}' % response.r, \
        response.inbound.text


@pytest.mark.parametrize("how", ["abort", "close"])
async def test_on_disconnect_put_and_merge_fire_when_the_socket_goes(server, ns, how):
    async with Clients(server.port) as clients:
        a = await clients.connect(ns)
        b = await clients.connect(ns)
        assert (await b.put("/rooms/r1/members", {"alice": True, "bob": True})).ok
        status, _ = await b.listen("/status")
        room, _ = await b.listen("/rooms/r1")
        marker, _ = await b.listen("/marker")
        await register(a, "o", "/status/alice", {"state": "offline", "lastSeen": {".sv": "timestamp"}})
        await register(a, "om", "/rooms/r1", {"members/alice": None})
        await register(a, "o", "/marker", True)
        assert (await a.put("/status/alice", {"state": "online", "lastSeen": {".sv": "timestamp"}})).ok
        await b.sync()
        assert status.cache["alice"]["state"] == "online"
        online_at = status.cache["alice"]["lastSeen"]

        gone_at = int(time.time() * 1000)
        await fire_and_wait(a, b, marker, how)
        assert status.cache["alice"]["state"] == "offline"
        assert status.cache["alice"]["lastSeen"] >= max(online_at, gone_at - 1000), \
            "the timestamp is resolved when the operation runs, not when it was registered"
        assert room.cache == {"members": {"bob": True}}
        fresh = await clients.connect(ns)
        assert (await fresh.get("/status/alice")).data["state"] == "offline"


async def test_cancel_drops_the_operation_at_and_below_the_path(server, ns):
    async with Clients(server.port) as clients:
        a = await clients.connect(ns)
        b = await clients.connect(ns)
        marker, _ = await b.listen("/marker")
        assert (await b.put("/keep", "untouched")).ok
        await register(a, "o", "/keep", "overwritten")
        await register(a, "om", "/keep2", {"x/y": 1, "z": 2})
        await register(a, "o", "/marker", True)
        await register(a, "oc", "/keep", None)
        await register(a, "oc", "/keep2", None)
        await fire_and_wait(a, b, marker)
        assert (await b.get("/keep")).data == "untouched"
        assert (await b.get("/keep2")).data is None


async def test_cancel_below_a_remembered_set_keeps_the_siblings(server, ns):
    async with Clients(server.port) as clients:
        a = await clients.connect(ns)
        b = await clients.connect(ns)
        marker, _ = await b.listen("/marker")
        assert (await b.put("/p", {"c": 3})).ok
        await register(a, "o", "/p", {"a": 1, "b": 2})
        await register(a, "oc", "/p/a", None)
        await register(a, "o", "/marker", True)
        await fire_and_wait(a, b, marker)
        # §10: the set at /p is split into its children and the part for /p/a dropped; /p/c is not a child of it.
        assert (await b.get("/p")).data == {"b": 2, "c": 3}


async def test_a_later_registration_at_the_same_path_replaces_the_earlier(server, ns):
    async with Clients(server.port) as clients:
        a = await clients.connect(ns)
        b = await clients.connect(ns)
        marker, _ = await b.listen("/marker")
        await register(a, "o", "/v", "first")
        await register(a, "o", "/v", "second")
        await register(a, "om", "/w", {"k": 1})
        await register(a, "o", "/w/k", 2)
        await register(a, "o", "/marker", True)
        await fire_and_wait(a, b, marker)
        assert (await b.get("/v")).data == "second"
        assert (await b.get("/w")).data == {"k": 2}


async def test_unauth_does_not_fire_the_queue_and_it_fires_later_on_disconnect(server, ns):
    async with Clients(server.port) as clients:
        a = await clients.connect(ns)
        b = await clients.connect(ns)
        marker, _ = await b.listen("/marker")
        watched, _ = await b.listen("/presence")
        await register(a, "o", "/presence/a", "gone")
        assert (await a.request("unauth", {})).ok
        assert (await a.put("/presence/a", "here")).ok
        await b.sync()
        assert watched.cache == {"a": "here"}
        await register(a, "o", "/marker", True)
        await fire_and_wait(a, b, marker)
        assert watched.cache == {"a": "gone"}


async def test_increment_in_on_disconnect_is_resolved_at_execution_time(server, ns):
    async with Clients(server.port) as clients:
        a = await clients.connect(ns)
        b = await clients.connect(ns)
        marker, _ = await b.listen("/marker")
        assert (await b.put("/online", 5)).ok
        await register(a, "o", "/online", {".sv": {"increment": -1}})
        assert (await b.put("/online", 10)).ok
        await register(a, "o", "/marker", True)
        await fire_and_wait(a, b, marker)
        assert (await b.get("/online")).data == 9


async def test_only_the_disconnected_sessions_queue_runs_and_only_once(server, ns):
    async with Clients(server.port) as clients:
        a = await clients.connect(ns)
        b = await clients.connect(ns)
        c = await clients.connect(ns)
        marker, _ = await c.listen("/marker")
        await register(a, "o", "/who/a", "left")
        await register(b, "o", "/who/b", "left")
        await register(a, "o", "/marker", "a")
        await fire_and_wait(a, c, marker)
        assert (await c.get("/who")).data == {"a": "left"}
        assert (await c.put("/who/a", "back")).ok
        await register(b, "o", "/marker", "b")
        await fire_and_wait(b, c, marker)
        assert (await c.get("/who")).data == {"a": "back", "b": "left"}, "a's queue ran twice"


async def test_on_disconnect_with_invalid_data_is_refused(server, ns):
    async with Clients(server.port) as clients:
        a = await clients.connect(ns)
        response = await a.request("o", {"p": "/bad", "d": {"a.b": 1}})
        assert not response.ok and isinstance(response.data, str), response.inbound.text
        response = await a.request("om", {"p": "/bad", "d": {"x": {".sv": "nonsense"}}})
        assert not response.ok, response.inbound.text
