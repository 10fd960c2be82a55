"""Data through the gateway: keys and strings compared by code units (never Unicode-normalized), numbers kept exact,
empty objects and arrays, leaves and locations that change kind, listens replaced by tag, reconnect with ``ls``,
persistence across a restart, many subscribers of one path, and a subscriber that stops reading.

Spec: data-model.md §1–§5, §7; wire-protocol.md §4.2, §6.5–§6.7, §11; issue 4 "Subscriptions and fan-out".
"""

import asyncio

import pytest

import firebase_model as model
from conftest import Clients
from firebase_wire import WireClient


async def test_canonically_equivalent_keys_and_values_stay_distinct(server, ns):
    """Swift's String equality would merge precomposed and decomposed é; Firebase keeps them apart."""
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        assert (await client.put("/u/\u00e9", "precomposed")).ok
        assert (await client.put("/u/e\u0301", "decomposed")).ok
        got = (await client.get("/u")).data
        assert got == {"\u00e9": "precomposed", "e\u0301": "decomposed"}
        assert (await client.put("/v", {"a": "\u00e9", "b": "e\u0301"})).ok
        # An equalTo on the value must not match the other spelling.
        got = (await client.get("/v", {"sp": "\u00e9", "ep": "\u00e9", "i": ".value"})).data
        assert got == {"a": "\u00e9"}


async def test_keys_and_string_values_order_by_utf16_code_units(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        keys = {"\uffff": 1, "\U0001F600": 2, "z": 3, "\u00e9": 4}
        assert (await client.put("/k", keys)).ok
        view, _ = await client.listen("/k", {"l": 4, "vf": "l", "i": ".key"}, tag=1)
        assert view.keys == ["z", "\u00e9", "\U0001F600", "\uffff"]
        got = (await client.get("/k", {"l": 1, "vf": "r", "i": ".key"})).data
        assert got == {"\uffff": 1}, "U+FFFF sorts after U+1F600 in UTF-16 order (not in code point order)"
        assert (await client.put("/sv", {"a": "\uffff", "b": "\U0001F600"})).ok
        got = (await client.get("/sv", {"l": 1, "vf": "l", "i": ".value"})).data
        assert got == {"b": "\U0001F600"}


# Canopy stores numbers as doubles, like the JS SDK (DataModel.LeafValue documents the choice): integers are exact
# up to 2^53 and written as integer literals; beyond, they round to the nearest double.
@pytest.mark.parametrize("text,expected", [
    ("9007199254740992", 9007199254740992),
    ("-123456789012", -123456789012),
    ("9007199254740993", 9007199254740992.0),
    ("-9223372036854775808", -9.223372036854775808e18),
    ("0.1", 0.1),
    ("1e300", 1e300),
    ("-2.5e-300", -2.5e-300),
    ("-0", 0),
    ("1.0", 1.0),
])
async def test_numbers_survive_exactly(server, ns, text, expected):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        future = await client.send_request("p", {"p": "/n", "d": 0})
        await client.wait_response(future)
        await client.send_frame('{"t":"d","d":{"r":90,"a":"p","b":{"p":"/n","d":%s}}}' % text)
        await client.wait_for(lambda entry: entry.is_response and entry.body.get("r") == 90)
        got = (await client.get("/n"))
        assert model.nodes_equal(got.data, expected), got.inbound.text
        if isinstance(expected, int):
            assert '"d":%d}' % expected in got.inbound.text, "integers up to 2^53 are written as integer literals"
        # The hash the server compares against is that of the normalized value (-0 becomes 0, §8.4).
        assert (await client.put("/n", "next", hash=model.node_hash(expected))).ok


async def test_empty_objects_delete_and_arrays_become_objects(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        view, _ = await client.listen("/e")
        assert (await client.put("/e", {"a": 1, "b": {}})).ok
        assert (await client.get("/e")).data == {"a": 1}
        assert (await client.put("/e/a", {})).ok
        assert (await client.get("/e")).data is None
        assert (await client.put("/e", ["x", None, "z"])).ok
        assert (await client.get("/e")).data == {"0": "x", "2": "z"}
        assert (await client.put("/e", {"only": {"empty": {}, "null": None}})).ok
        assert (await client.get("/e")).data is None
        await client.sync()
        assert view.cache is None


async def test_locations_that_change_between_leaf_and_object(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        reader = await clients.connect(ns)
        deep, _ = await reader.listen("/x/y/z")
        window, _ = await reader.listen("/x", {"l": 2, "vf": "l"}, tag=5)
        expected = None
        for path, data in [
            ("/x", {"y": {"z": 1}, "w": 2}),
            ("/x", 5),                          # the listen's location disappears under a leaf
            ("/x/y/z", "again"),                # writing below a leaf replaces it with an object
            ("/x/y/z/.priority", 3),
            ("/x/y", "leaf"),
            ("/x/y/q", None),                   # deleting below a leaf changes nothing
            ("/", {"x": {"a": 1, "b": 2, "c": 3}}),
        ]:
            assert (await writer.put(path, data)).ok, path
            expected = model.set_at(expected, path, data)
            await reader.sync()
            assert model.nodes_equal(deep.cache, model.get(expected, "/x/y/z")), (path, deep.cache)
            want = model.evaluate_query(model.get(expected, "/x"), {"l": 2, "vf": "l"})
            assert model.nodes_equal(window.cache, want), (path, window.cache, want)


async def test_a_listen_resent_with_the_same_tag_replaces_the_earlier_query(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        reader = await clients.connect(ns)
        assert (await writer.put("/r", {"a": 1, "b": 2, "c": 3})).ok
        first, _ = await reader.listen("/r", {"l": 1, "vf": "l"}, tag=1)
        reader.views.remove(first)
        second, _ = await reader.listen("/r", {"l": 1, "vf": "r"}, tag=1)
        assert second.cache == {"c": 3}
        mark = len(reader.log)
        assert (await writer.put("/r/0", 0)).ok  # would enter the first query's window only
        await reader.sync()
        assert not reader.pushes(mark), [p.text for p in reader.pushes(mark)]
        assert (await writer.put("/r/d", 4)).ok
        await reader.sync()
        assert second.cache == {"d": 4}


async def test_an_unlisten_of_an_unknown_listen_is_harmless(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        assert (await client.request("n", {"p": "/never"})).ok
        assert (await client.request("n", {"p": "/never", "q": {"l": 1, "vf": "l"}, "t": 77})).ok
        await client.sync()


async def test_priority_given_as_a_server_value(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        assert (await client.put("/sp", {"v": 1, ".priority": {".sv": "timestamp"}})).ok
        got = (await client.get("/sp")).data
        assert type(got[".priority"]) is int and abs(got[".priority"] - client.server_ts) < 60_000


async def test_reconnecting_with_ls_closes_the_old_session_and_runs_its_queue(server, ns):
    """§4.2: a new connection naming a still-open session in ls replaces it (half-open TCP on the old one)."""
    async with Clients(server.port) as clients:
        old = await clients.connect(ns)
        observer = await clients.connect(ns)
        view, _ = await observer.listen("/presence")
        assert (await old.request("o", {"p": "/presence/me", "d": "offline"})).ok
        new = await clients.connect(params=f"v=5&ns={ns}&ls={old.session_id}")
        await old.wait_closed(5)
        await observer.wait_for(lambda e: e.is_push and e.payload.get("d") is not None, 5, "the queue's write")
        assert view.cache == {"me": "offline"}
        assert new.session_id != old.session_id
        assert (await new.get("/presence/me")).data == "offline"


@pytest.mark.timeout(40)
async def test_data_survives_a_restart(start_server, tmp_path):
    data_dir = tmp_path / "data"
    first = start_server(data_dir=data_dir)
    client = await WireClient.connect(first.port, "persist")
    assert (await client.put("/p", {"a": {".value": 1, ".priority": 2}, "b": "two"})).ok
    assert (await client.merge("/p", {"c": {".sv": {"increment": 3}}})).ok
    await client.aclose()
    assert first.stop() == 0
    second = start_server(data_dir=data_dir)
    client = await WireClient.connect(second.port, "persist")
    assert (await client.get("/p")).data == {"a": {".value": 1, ".priority": 2}, "b": "two", "c": 3}
    other = await WireClient.connect(second.port, "elsewhere")
    assert (await other.get("/p")).data is None
    await client.aclose()
    await other.aclose()


@pytest.mark.timeout(60)
async def test_a_hundred_subscribers_of_one_path_all_get_the_same_frames(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        subscribers = await asyncio.gather(*(clients.connect(ns) for _ in range(100)))
        views = []
        for index, client in enumerate(subscribers):
            if index % 2:
                views.append((await client.listen("/room"))[0])
            else:
                views.append((await client.listen("/room", {"l": 3, "vf": "r"}, tag=index + 1))[0])
        for index in range(5):
            assert (await writer.put(f"/room/m{index}", {"text": "x" * index})).ok
        await asyncio.gather(*(client.sync() for client in subscribers))
        untagged = [[p.text for p in client.pushes()] for client in subscribers[1::2]]
        assert all(texts == untagged[0] for texts in untagged), "untagged subscribers got different frames"
        for index, (client, view) in enumerate(zip(subscribers, views)):
            if index % 2:
                assert view.keys == [f"m{i}" for i in range(5)]
            else:
                assert view.keys == ["m2", "m3", "m4"]
                assert all(p.tag == index + 1 for p in client.pushes())


@pytest.mark.timeout(90)
async def test_a_subscriber_that_stops_reading_is_conflated_and_ends_with_the_latest_state(server, ns):
    """Issue 4: past its low-water mark a slow subscriber's pending updates for a view are replaced by the view's
    latest state; writes well beyond the hard cap (12 MB against the default 8 MB) must neither slow the others nor
    lose the final state."""
    payload = "p" * 40_000
    writes = 300
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        fast = await clients.connect(ns)
        slow = await clients.connect(ns, receive_buffer=4096)
        slow_view, _ = await slow.listen("/feed")
        fast_view, _ = await fast.listen("/feed")
        slow.pause_reading()
        window = []
        for index in range(writes):
            window.append(await writer.send_request("p", {"p": "/feed/item", "d": f"{index}:{payload}"}))
            if len(window) >= 32:
                assert (await writer.wait_response(window.pop(0), 20)).ok
        for future in window:
            assert (await writer.wait_response(future, 20)).ok
        await fast.sync(20)
        assert fast_view.cache == {"item": f"{writes - 1}:{payload}"}
        # Bursts of 32 writes of 40 KB take even a reading subscriber past its low-water mark, so it may be
        # conflated too; what it sees must still be in write order.
        seen = [int(p.payload["d"].split(":")[0]) for p in fast.pushes() if p.path == "/feed/item"]
        assert seen == sorted(seen) and len(set(seen)) == len(seen), "updates out of order or repeated"
        slow.resume_reading()
        assert not slow.closed.is_set() or slow.close_reason, "cut off without a reason"
        # A request sent after resuming is answered after everything queued before it — including the view's
        # conflated latest state (otherwise a write's ack could overtake its echo, or datastale the newer data).
        await slow.sync(30)
        assert slow_view.cache == {"item": f"{writes - 1}:{payload}"}, \
            "the answer to a request sent after resuming overtook the view's conflated latest state"
        seen = [int(p.payload["d"].split(":")[0]) for p in slow.pushes() if p.path == "/feed/item"]
        assert seen == sorted(seen) and len(set(seen)) == len(seen), "updates out of order or repeated"
        assert len(seen) < writes, f"no conflation: the stalled subscriber got all {len(seen)} updates"


@pytest.mark.timeout(90)
async def test_conflated_state_keeps_each_views_tag_and_window(server, ns):
    """The conflated state of a tagged view is its window, tagged; of a default view, the data at its path."""
    payload = "q" * 40_000
    writes = 300
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        slow = await clients.connect(ns, receive_buffer=4096)
        whole, _ = await slow.listen("/feed2")
        newest, _ = await slow.listen("/feed2", {"l": 1, "vf": "r", "i": "n"}, tag=3)
        slow.pause_reading()
        window = []
        for index in range(writes):
            window.append(await writer.send_request("p", {"p": f"/feed2/item{index % 7}", "d": {"n": index,
                                                                                             "p": payload}}))
            if len(window) >= 32:
                assert (await writer.wait_response(window.pop(0), 20)).ok
        for future in window:
            assert (await writer.wait_response(future, 20)).ok
        truth = (await writer.get("/feed2")).data
        slow.resume_reading()
        last = f"item{(writes - 1) % 7}"
        await slow.wait_for(lambda entry: entry.is_push and entry.tag is None and whole.cache == truth, 20,
                            "the default view's latest state", consume=False)
        await slow.wait_for(lambda entry: entry.is_push and newest.cache == {last: truth[last]}, 20,
                            "the tagged view's latest window", consume=False)
        assert not whole.errors and not newest.errors
        assert all(p.tag in (None, 3) for p in slow.pushes())
        assert len(slow.pushes()) < 2 * writes, "no conflation happened, so this test proved nothing"
