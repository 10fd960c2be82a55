"""Framing (wire-protocol.md §2): large messages split and reassembled in both directions, and malformed input,
which must get an error response or a close with a reason while a neighbouring client carries on unaffected."""

import asyncio
import json

import pytest

import firebase_model as model
from conftest import Clients
from firebase_wire import MAX_FRAME_CHARS, WireClient, split_for_wire


def assert_split_correctly(inbound, expect_split: bool = True):
    frames = inbound.frames
    if not expect_split:
        return
    assert len(frames) > 2 and frames[0].isdigit(), f"a large message must come as a count and pieces: {len(frames)}"
    assert len(frames[0]) <= 4, "iOS reads at most 4 count digits"
    assert int(frames[0]) == len(frames) - 1
    for piece in frames[1:]:
        assert 0 < model.utf16_length(piece) <= MAX_FRAME_CHARS, model.utf16_length(piece)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("compression", [None, "deflate"])
@pytest.mark.parametrize("kind", ["ascii", "emoji", "mixed"])
async def test_large_values_are_split_and_reassembled_both_ways(server, ns, kind, compression):
    unit = {"ascii": "abcdefghij", "emoji": "\U0001F600\u00e9\u4e2d", "mixed": "a\"\\\n\u00e9\U0001F335/"}[kind]
    value = (unit * (120_000 // len(unit) + 1))[:120_000]
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns, compression=compression)
        reader = await clients.connect(ns, compression=compression)
        view, _ = await reader.listen("/blobs")
        before = len(writer.sent_frames)
        response = await writer.put("/blobs/x", value)
        assert response.ok, response.inbound.text
        sent = writer.sent_frames[before:]
        assert sent[0].isdigit() and int(sent[0]) == len(sent) - 1 > 1, "the client split its put"
        push = await reader.next_push(path="/blobs/x")
        assert push.payload["d"] == value
        assert_split_correctly(push)
        got = await reader.get("/blobs/x")
        assert got.data == value
        assert_split_correctly(got.inbound)
        assert view.cache == {"x": value}
        assert not reader.protocol_errors and not writer.protocol_errors, reader.protocol_errors + writer.protocol_errors


@pytest.mark.timeout(30)
async def test_a_large_object_and_a_large_merge(server, ns):
    data = {f"k{index:05d}": {"text": "x" * 40, "n": index} for index in range(3000)}
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        reader = await clients.connect(ns)
        view, _ = await reader.listen("/big")
        assert (await writer.put("/big", data)).ok
        changes = {f"k{index:05d}/n": -index for index in range(0, 3000, 2)}
        assert (await writer.merge("/big", changes)).ok
        expected = model.update_at(data, "/", changes)
        await reader.sync()
        assert model.nodes_equal(view.cache, expected)
        got = await reader.get("/big")
        assert model.nodes_equal(got.data, expected)
        assert_split_correctly(got.inbound)


async def test_split_boundaries_and_a_count_of_one_are_accepted(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        envelope = model.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": "/s", "d": ""}}})
        filler = MAX_FRAME_CHARS - len(envelope)
        exact = model.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": "/s", "d": "y" * filler}}})
        assert len(exact) == MAX_FRAME_CHARS and split_for_wire(exact) == [exact]
        future = await client.send_request("p", {"p": "/s", "d": "y" * filler})
        assert (await client.wait_response(future)).ok
        # 16385 characters: two pieces.
        future = await client.send_request("p", {"p": "/s", "d": "y" * (filler + 1)})
        assert (await client.wait_response(future)).ok
        assert client.sent_frames[-3] == "2"
        # urish/firebase-server style: a count of 1 before a single frame.
        future = asyncio.get_running_loop().create_future()
        client._responses[50] = future
        await client.send_frame("1")
        await client.send_frame(model.dumps({"t": "d", "d": {"r": 50, "a": "p", "b": {"p": "/s", "d": "one"}}}))
        assert (await client.wait_response(future)).ok
        # Pieces cut anywhere, even inside a JSON string escape.
        text = model.dumps({"t": "d", "d": {"r": 51, "a": "p", "b": {"p": "/s", "d": "a\\\"b\u00e9"}}})
        cut = text.index("\\\\") + 1
        future = asyncio.get_running_loop().create_future()
        client._responses[51] = future
        for frame in ["3", text[:cut], text[cut:cut + 3], text[cut + 3:]]:
            await client.send_frame(frame)
        assert (await client.wait_response(future)).ok
        assert (await client.get("/s")).data == "a\\\"b\u00e9"


# (name, frames to send, request number the error answer must carry or None for "error or close")
MALFORMED = [
    ("bad json", ['{"t":"d","d":{'], None),
    ("non-json garbage", ["hello world"], None),
    ("json array", ["[1,2,3]"], None),
    ("json string", ['"text"'], None),
    ("json null", ["null"], None),
    ("seven digits (not a count)", ["1000000"], None),
    ("negative number", ["-5"], None),
    ("count of zero", ["0000"], None),
    ("huge count frame", ["999999"], None),
    ("missing t", ['{"d":{"r":1,"a":"s","b":{}}}'], None),
    ("unknown layer", ['{"t":"x","d":{}}'], None),
    ("data without d", ['{"t":"d"}'], None),
    ("non-integer r", ['{"t":"d","d":{"r":"abc","a":"p","b":{"p":"/x","d":1}}}'], None),
    ("deep nesting", ["[" * 100_000 + "]" * 100_000], None),
    ("count then garbage pieces", ["2", '{"t":"d",', '"d":oops}'], None),
    ("unknown action", ['{"t":"d","d":{"r":7,"a":"zz","b":{}}}'], 7),
    ("missing body", ['{"t":"d","d":{"r":8,"a":"p"}}'], 8),
    ("put without path", ['{"t":"d","d":{"r":9,"a":"p","b":{"d":1}}}'], 9),
    ("bad path characters", ['{"t":"d","d":{"r":10,"a":"p","b":{"p":"/a/b#c","d":1}}}'], 10),
    ("bad path dot segment", ['{"t":"d","d":{"r":11,"a":"p","b":{"p":"/a/.x","d":1}}}'], 11),
    ("invalid key in data", ['{"t":"d","d":{"r":12,"a":"p","b":{"p":"/a","d":{"x.y":1}}}}'], 12),
    ("data deeper than 32", ['{"t":"d","d":{"r":13,"a":"p","b":{"p":"/a","d":' + '{"k":' * 40 + "1" + "}" * 40 + "}}}"], 13),
    # JSON whose number no double can hold: a JSON-level error, so a close is as good as an answer.
    ("number out of range", ['{"t":"d","d":{"r":14,"a":"p","b":{"p":"/a","d":1e999}}}'], None),
    ("merge with a non-object", ['{"t":"d","d":{"r":15,"a":"m","b":{"p":"/a","d":5}}}'], 15),
    ("merge with overlapping paths", ['{"t":"d","d":{"r":16,"a":"m","b":{"p":"/a","d":{"b":1,"b/c":2}}}}'], 16),
    ("bad query limit", ['{"t":"d","d":{"r":17,"a":"q","b":{"p":"/a","h":"","q":{"l":-1,"vf":"r"},"t":1}}}'], 17),
    ("filtered query without tag", ['{"t":"d","d":{"r":18,"a":"q","b":{"p":"/a","h":"","q":{"l":1,"vf":"r"}}}}'], 18),
    ("path not a string", ['{"t":"d","d":{"r":19,"a":"g","b":{"p":5,"q":{}}}}'], 19),
    ("key too long", ['{"t":"d","d":{"r":20,"a":"p","b":{"p":"/' + "k" * 800 + '","d":1}}}'], 20),
    ("priority that is a boolean", ['{"t":"d","d":{"r":21,"a":"p","b":{"p":"/a/.priority","d":true}}}'], 21),
    (".value with children", ['{"t":"d","d":{"r":22,"a":"p","b":{"p":"/a","d":{".value":1,"x":2}}}}'], 22),
    # A put and a merge spelled as the SDKs spell them but for a request number no integer holds.
    ("put with a 40-digit request number", ['{"t":"d","d":{"r":' + "9" * 40 + ',"a":"p","b":{"p":"/a","d":1}}}'], None),
    ("merge with a 40-digit request number", ['{"t":"d","d":{"r":' + "9" * 40 + ',"a":"m","b":{"p":"/a","d":{"b":1}}}}'], None),
]


async def wait_for_error_or_close(client: WireClient, r: int | None, timeout: float = 5.0) -> str:
    """How the server reacted: 'response', 'control-error' or 'closed'; fails when it reacted in no way."""
    def reaction(entry):
        if entry.is_response and (r is None or entry.body.get("r") == r):
            return True
        return entry.control_type == "e"

    try:
        entry = await client.wait_for(reaction, timeout, "an error response or control error")
    except AssertionError:
        if client.closed.is_set():
            assert client.close_reason, f"closed without a reason (code {client.close_code})"
            return "closed"
        raise
    if entry.is_response:
        status = entry.payload.get("s")
        assert status not in (None, "ok"), f"malformed input answered {entry.text}"
        assert isinstance(entry.payload.get("d"), str) and entry.payload["d"], entry.text
        return "response"
    assert isinstance(entry.body.get("d"), str) and entry.body["d"], entry.text
    return "control-error"


@pytest.mark.parametrize("name,frames,r", MALFORMED, ids=[case[0] for case in MALFORMED])
async def test_malformed_input_gets_an_error_and_neighbours_are_unaffected(server, name, frames, r):
    async with Clients(server.port) as clients:
        neighbour = await clients.connect("neighbours")
        writer = await clients.connect("neighbours")
        view, _ = await neighbour.listen("/n")
        bad = await clients.connect("neighbours")
        for frame in frames:
            await bad.send_frame(frame)
        how = await wait_for_error_or_close(bad, r)
        if r is not None:
            assert how == "response", f"a request with a number should be answered, not closed ({how})"
            # The connection stays usable.
            assert (await bad.put("/after", name)).ok
        assert (await writer.put("/n/last", name)).ok
        await neighbour.sync()
        assert view.cache["last"] == name
        fresh = await clients.connect("neighbours")
        assert (await fresh.get("/n/last")).data == name
        assert not neighbour.closed.is_set()


async def test_a_binary_frame_is_refused_and_neighbours_are_unaffected(server):
    async with Clients(server.port) as clients:
        neighbour = await clients.connect("neighbours")
        bad = await clients.connect("neighbours")
        await bad.send_frame(json.dumps({"t": "d", "d": {"r": 1, "a": "s", "b": {}}}).encode())
        how = await wait_for_error_or_close(bad, None)
        assert how in ("closed", "control-error", "response")
        assert (await neighbour.put("/binary-ok", True)).ok


async def test_unknown_control_types_are_ignored(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        await client.send_frame('{"t":"c","d":{"t":"zz","d":{}}}')
        await client.send_frame('{"t":"c","d":{"t":"n","d":{}}}')
        await client.sync()
        assert not client.closed.is_set()


async def test_a_split_message_interleaved_with_a_keepalive_is_not_corrupted(server, ns):
    """A keepalive cannot arrive inside a split message from a real client; a server may treat "0" there as a
    piece. Here the pieces are well-formed, so whatever the server does, the connection must stay coherent."""
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        text = model.dumps({"t": "d", "d": {"r": 1, "a": "p", "b": {"p": "/k", "d": "v" * 20000}}})
        frames = split_for_wire(text)
        future = asyncio.get_running_loop().create_future()
        client._responses[1] = future
        client.next_r = 2
        for frame in frames:
            await client.send_frame(frame)
        assert (await client.wait_response(future)).ok
        await client.keepalive()
        await client.sync()
