"""Connection-level protocol behaviour: hello, keepalive, ping, request/response shapes, the SDKs' spellings,
gets, priorities, namespaces, listen hashes, the writer's echo before its ack, shutdown.

Spec: docs/protocol/wire-protocol.md §1–§6, §9, §12.
"""

import asyncio
import re
import time

import pytest

import firebase_model as model
from conftest import Clients
from firebase_wire import WireClient


async def test_hello_is_the_first_message_with_an_integer_ts_the_host_and_a_session_id(server):
    async with Clients(server.port) as clients:
        a = await clients.connect("hello-ns")
        b = await clients.connect("hello-ns")
        first = a.log[0]
        assert first.control_type == "h"
        pattern = (r'\{"t":"c","d":\{"t":"h","d":\{"ts":(\d+),"v":"5","h":"127\.0\.0\.1:%d","s":"([^"\\]+)"\}\}\}'
                   % server.port)
        assert re.fullmatch(pattern, first.text), first.text
        assert type(a.server_ts) is int and abs(a.server_ts - time.time() * 1000) < 60_000
        assert a.session_id and b.session_id and a.session_id != b.session_id


async def test_hello_host_echoes_the_host_header(server):
    async with Clients(server.port) as clients:
        client = await clients.connect("hello-ns", host_header=f"localhost:{server.port}")
        assert client.server_host == f"localhost:{server.port}"


async def test_keepalive_is_ignored_and_ping_gets_the_exact_pong(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        await client.keepalive()
        pong = await client.ping()
        assert pong.text == '{"t":"c","d":{"t":"o","d":{}}}'
        await client.sync()
        # Nothing but the hello, the pong and the stats answer: the keepalive got no reply.
        assert [entry.text for entry in client.log] == [
            client.log[0].text, '{"t":"c","d":{"t":"o","d":{}}}', '{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}']


@pytest.mark.parametrize("action,body", [
    ("s", {"c": {"sdk.js.1-0-8": 1}}),
    ("unauth", {}),
    ("appcheck", {"token": "not-enforced"}),
    ("unappcheck", {}),
    ("unappeck", {}),
])
async def test_requests_without_data_answer_ok_with_an_empty_string(server, ns, action, body):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        response = await client.request(action, body)
        assert response.inbound.text == '{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}'


async def test_request_number_zero_and_large_numbers_are_echoed(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        response = await client.request("p", {"p": "x", "d": 1}, r=0)
        assert response.inbound.text == '{"t":"d","d":{"r":0,"b":{"s":"ok","d":""}}}'
        response = await client.request("p", {"p": "x", "d": 2}, r=2_000_000_000)
        assert response.inbound.text == '{"t":"d","d":{"r":2000000000,"b":{"s":"ok","d":""}}}'


async def test_listen_pushes_initial_data_before_an_ok_carrying_an_object(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        room = {"title": "Lobby", "members": {"alice": True, "bob": True}}
        assert (await writer.put("/rooms/r1", room)).ok
        client = await clients.connect(ns)
        view, response = await client.listen("/rooms/r1")
        assert response.inbound.text == '{"t":"d","d":{"r":1,"b":{"s":"ok","d":{}}}}'
        push = client.log[1]
        assert push.is_push and push.action == "d" and push.path == "/rooms/r1" and push.tag is None
        assert push.seq < response.inbound.seq
        assert model.nodes_equal(view.cache, room)


async def test_listen_on_an_empty_location_is_answered_ok(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        view, response = await client.listen("/nothing/here")
        assert response.ok and response.data == {}
        # A push before the ok, if any, must carry "d": null (§6.6 step 4).
        for push in client.pushes():
            assert push.payload == {"p": "/nothing/here", "d": None}, push.text
        assert view.cache is None


@pytest.mark.parametrize("path", ["rooms/r1", "/rooms/r1", "/rooms//r1/", "rooms/r1/"])
async def test_android_and_ios_path_forms_address_the_same_location(server, ns, path):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        client.next_r = 0  # Android and iOS count from 0
        assert (await client.put(path, {"v": path})).ok
        view, response = await client.listen(path)
        assert response.ok
        assert view.cache == {"v": path}
        got = await client.get("/rooms/r1")
        assert got.ok and got.data == {"v": path}


async def test_legacy_listen_and_unlisten_actions_are_accepted(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        writer = await clients.connect(ns)
        response = await client.request("l", {"p": "/legacy", "h": ""})
        assert response.ok
        assert (await writer.put("/legacy/a", 1)).ok
        await client.sync()
        assert any(p.path == "/legacy/a" and p.payload.get("d") == 1 for p in client.pushes())
        response = await client.request("u", {"p": "/legacy"})
        assert response.ok
        mark = len(client.log)
        assert (await writer.put("/legacy/b", 2)).ok
        await client.sync()
        assert not client.pushes(mark), "pushes after the legacy unlisten"


async def test_unlisten_stops_pushes(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        writer = await clients.connect(ns)
        view, _ = await client.listen("/u")
        tagged, _ = await client.listen("/u", {"l": 1, "vf": "l"}, tag=7)
        assert (await writer.put("/u/a", 1)).ok
        await client.sync()
        assert view.cache == {"a": 1} and tagged.cache == {"a": 1}
        assert (await client.unlisten(view)).ok
        assert (await client.unlisten(tagged)).ok
        mark = len(client.log)
        assert (await writer.put("/u/0", 0)).ok
        await client.sync()
        assert not client.pushes(mark), [p.text for p in client.pushes(mark)]


async def test_writer_sees_its_own_echo_before_its_ack(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        view, _ = await client.listen("/echo")
        tagged, _ = await client.listen("/echo", {"l": 5, "vf": "r"}, tag=1)
        for action, path, data in [
            ("p", "/echo/a", {"x": 1}),
            ("m", "/echo", {"b": 2, "a/y": 3}),
            ("p", "/echo", {"c": 4}),
            ("p", "/echo/c", None),
            ("m", "/echo", {"d/.priority": 1, "e": {".sv": "timestamp"}}),
        ]:
            mark = len(client.log)
            response = await client.request(action, {"p": path, "d": data})
            assert response.ok
            before_ack = client.log[mark:response.inbound.seq]
            untagged = [entry for entry in before_ack if entry.is_push and entry.tag is None]
            tagged_pushes = [entry for entry in before_ack if entry.is_push and entry.tag == 1]
            assert untagged, f"no echo before the ack of {action} {path}: {client.texts()[mark:]}"
            assert tagged_pushes, f"no tagged echo before the ack of {action} {path}: {client.texts()[mark:]}"
            expected = (await client.get("/echo")).data
            assert model.nodes_equal(view.cache, model.normalize(expected)), (view.cache, expected)


async def test_get_returns_export_format_and_registers_no_listen(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        writer = await clients.connect(ns)
        config = {"theme": "dark", "motd": {".value": "hi", ".priority": 1}}
        assert (await writer.put("/config", config)).ok
        scores = {"alice": {"points": 40}, "bob": {"points": 75}, "carol": {"points": 75}, "dave": {"points": 120}}
        assert (await writer.put("/scores", scores)).ok
        got = await client.get("/config")
        assert got.ok and got.data == config
        got = await client.get("/scores", {"l": 1, "vf": "r", "i": "points"})
        assert got.ok and got.data == {"dave": {"points": 120}}
        got = await client.get("/missing")
        assert got.inbound.text == '{"t":"d","d":{"r":3,"b":{"s":"ok","d":null}}}'
        mark = len(client.log)
        assert (await writer.put("/config/theme", "light")).ok
        await client.sync()
        assert not client.pushes(mark)


async def test_priorities_travel_in_export_format(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        writer = await clients.connect(ns)
        view, _ = await client.listen("/pri")
        expected = None
        for action, path, data in [
            ("p", "/pri/a", {".value": 1, ".priority": 5}),
            ("p", "/pri/a/.priority", "s"),
            ("p", "/pri/obj", {"x": 1, ".priority": 2}),
            ("p", "/pri/obj/y", 2),  # writing below keeps the object's priority
            ("m", "/pri", {"a/.priority": 7.5, "b": {".value": True, ".priority": "z"}}),
            ("p", "/pri/obj", {"x": 1}),  # a set without priority removes it
            ("p", "/pri/a/.priority", None),
            ("p", "/pri/c", {"k": {".value": "v", ".priority": 1}, ".priority": "top"}),
        ]:
            assert (await writer.request(action, {"p": path, "d": data})).ok, (action, path)
            if action == "p":
                expected = model.set_at(expected, model.segments(path), data)
            else:
                expected = model.update_at(expected, path, data)
            await client.sync()
            want = model.get(expected, "/pri")
            assert model.nodes_equal(view.cache, want), (action, path, view.cache, want)
            got = await client.get("/pri")
            assert model.nodes_equal(model.normalize(got.data), want), (got.data, want)


async def test_namespaces_are_isolated(server):
    async with Clients(server.port) as clients:
        a = await clients.connect("iso-a")
        b = await clients.connect("iso-b")
        view_a, _ = await a.listen("/k")
        view_b, _ = await b.listen("/k")
        assert (await a.put("/k", "A")).ok
        assert (await b.put("/k", "B")).ok
        await a.sync()
        await b.sync()
        assert view_a.cache == "A" and view_b.cache == "B"
        assert [p.payload["d"] for p in a.pushes() if p.payload.get("d") is not None] == ["A"]
        assert [p.payload["d"] for p in b.pushes() if p.payload.get("d") is not None] == ["B"]
        a2 = await clients.connect("iso-a")
        assert (await a2.get("/k")).data == "A"


async def test_missing_and_empty_ns_mean_the_same_default_namespace(server):
    async with Clients(server.port) as clients:
        missing = await clients.connect(params="v=5")
        empty = await clients.connect(params="v=5&ns=")
        reordered = await clients.connect(params="ns=&v=5")
        assert (await missing.put("/default-check", "here")).ok
        assert (await empty.get("/default-check")).data == "here"
        assert (await reordered.get("/default-check")).data == "here"


async def test_query_parameters_are_percent_decoded_and_order_independent(server):
    async with Clients(server.port) as clients:
        plain = await clients.connect(params="v=5&ns=pct-ns&p=1:123:web:abc")
        encoded = await clients.connect(params="ns=pct%2Dns&v=5&ls=previous-session")
        assert (await plain.put("/x", 1)).ok
        assert (await encoded.get("/x")).data == 1


async def test_listen_with_the_current_hash_gets_no_data_only_ok(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        data = {"a": 1, "b": {"c": "x", ".priority": 3}, "10": True, "2": 2.5}
        assert (await writer.put("/h", data)).ok
        client = await clients.connect(ns)
        view, response = await client.listen("/h", hash=model.node_hash(data))
        assert response.ok and response.data == {}
        assert not client.pushes(), f"data pushed although the hash matched: {client.texts()}"
        # The listen is registered all the same.
        assert (await writer.put("/h/a", 2)).ok
        await client.sync()
        assert [(p.path, p.payload["d"]) for p in client.pushes()] == [("/h/a", 2)]
        # A tagged query with the hash of its window.
        query = {"l": 2, "vf": "l"}
        window = model.evaluate_query(model.set_at(model.normalize(data), "a", 2), query)
        mark = len(client.log)
        tagged, response = await client.listen("/h", query, tag=3, hash=model.node_hash(window))
        assert response.ok
        assert not client.pushes(mark), f"window pushed although the hash matched: {client.texts()[mark:]}"
        # A stale hash gets the data.
        mark = len(client.log)
        stale, response = await client.listen("/h/b", hash=model.node_hash("old"))
        assert response.ok
        assert [p.payload for p in client.pushes(mark)] == [{"p": "/h/b", "d": {"c": "x", ".priority": 3}}]


async def test_push_ids_from_the_client_sort_chronologically_on_the_server(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        reader = await clients.connect(ns)
        offset = writer.server_ts - int(time.time() * 1000)
        generate = model.PushIdGenerator(lambda: int(time.time() * 1000) + offset)
        last_two, _ = await reader.listen("/chat", {"l": 2, "vf": "r"}, tag=1)
        ids = []
        for index in range(6):
            push_id = generate()
            assert re.fullmatch(r"[-0-9A-Za-z_]{20}", push_id)
            ids.append(push_id)
            assert (await writer.put(f"/chat/{push_id}", {"n": index})).ok
        await reader.sync()
        assert last_two.keys == ids[-2:]
        everything = (await reader.get("/chat", {"sp": ids[2], "i": ".key"})).data
        assert list(model.ordered_keys(everything, {"i": ".key"})) == ids[2:]
        assert abs(model.push_id_time(ids[0]) - writer.server_ts) < 60_000


async def test_sigterm_closes_connections_without_a_shutdown_message(start_server):
    server = start_server()
    client = await WireClient.connect(server.port, "bye")
    view, _ = await client.listen("/x")
    stop = asyncio.get_running_loop().run_in_executor(None, server.stop)
    await client.wait_closed(12)
    code = await stop
    assert code == 0, server.log_tail()
    assert not [entry.text for entry in client.log if entry.control_type == "s"], \
        "a restart must not send the shutdown control message (clients would never reconnect)"
    await client.aclose()
