"""REST streaming (``Accept: text/event-stream``, rest-api.md §9) over raw sockets (issue 6, acceptance 3): the initial
``put``, relative ``put``/``patch`` events for writes at, below and above the location, one fan-out with WebSocket
writers, 10,000 writes without loss or reordering, a stalled reader cut off without slowing the writer or the other
streams, ``cancel`` when replaced rules revoke read access, ``auth_revoked`` when the token expires, 401 at connect,
and ``keep-alive`` events.

Writers are raw keep-alive HTTP connections pipelining their requests (rest_client.pipeline), so the server, not the
client library, sets the pace. A stream that must not have seen an event is checked by writing a marker afterwards:
the marker must be the next event.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

import tokens
from conftest import ServerFactory
from firebase_wire import WireClient
from rest_client import (ADMIN, SSE_CONTENT_TYPE, EnvironmentFor, HttpConnection, Rest, SseStream, StreamCollector,
                         bounded, build_request, expect_error, expect_ok, open_stream, pipeline, socket_is_cut_off, url)

SECRET = "canopy-sse-secret-0123456789abcdefgh"
DENIED = "Permission denied"
REVOKED = "credential is no longer valid"
FAST_SERVER = {"CANOPY_DATA_MAX_NAMESPACES": "1000", "CANOPY_DATA_FSYNC": "none"}

USER_RULES = {
    "rules": {
        "open": {".read": True, ".write": True},
        "users": {
            "$uid": {
                ".read": "auth != null && auth.uid == $uid",
                ".write": "auth != null && auth.uid == $uid",
            }
        },
    }
}


@pytest.fixture(scope="module")
def server():
    """This module's open server; no fsync, since these tests are about streaming, not durability."""
    factory = ServerFactory()
    with EnvironmentFor(**FAST_SERVER):
        started = factory()
    yield started
    factory.finish()


@pytest.fixture
def rest(server, ns):
    client = Rest(server.port, ns, ADMIN)
    yield client
    client.close()


@pytest.fixture
def streams():
    opened: list[SseStream] = []

    def open_one(port: int, path: str, ns: str, params: dict | None = None, **kw) -> SseStream:
        stream = open_stream(port, path, ns, params, **kw)
        opened.append(stream)
        return stream

    yield open_one
    for stream in opened:
        stream.close()


def token(uid: str, **kw) -> str:
    return tokens.hs256(SECRET, tokens.claims(uid, **kw))


def expect_nothing_before(stream: SseStream, rest: Rest, marker_path: str) -> None:
    """Writes a marker below the stream's location: it must be the very next event (nothing came in between)."""
    expect_ok(rest.put(marker_path, "marker"))
    event = stream.expect("put")
    assert event.value == "marker", f"an unexpected event arrived before the marker: {event}"


# ---------------------------------------------------------------------------------------------------------------
# Events


@bounded(20)
def test_a_stream_answers_200_event_stream_and_starts_with_the_whole_location(server, ns, rest, streams):
    value = {"a": 1, "b": {"c": "x"}, "p": {".value": 2, ".priority": 3}}
    rest.put("/s", value)
    stream = streams(server.port, "/s", ns)
    response = stream.response
    assert response.status == 200, response.describe()
    assert response.header("Content-Type") == SSE_CONTENT_TYPE, response.describe()
    assert response.chunked, "the stream is not chunked"
    assert response.header("Cache-Control") == "no-cache"
    assert response.header("Access-Control-Allow-Origin") == "*"
    first = stream.expect("put")
    assert "\n" not in first.data, "data must be one line of compact JSON"
    assert first.json() == {"path": "/", "data": {"a": 1, "b": {"c": "x"}, "p": 2}}
    empty = streams(server.port, "/nothing/here", ns)
    assert empty.expect("put").json() == {"path": "/", "data": None}


@bounded(20)
def test_sets_at_below_and_above_the_location_give_puts_with_relative_paths(server, ns, rest, streams):
    rest.put("/room", {"s": {"x": 1}, "t": 2})
    stream = streams(server.port, "/room/s", ns)
    stream.expect_change("put", "/", {"x": 1})
    rest.put("/room/s", {"y": 2})
    stream.expect_change("put", "/", {"y": 2})
    rest.put("/room/s/a/b", 1)
    stream.expect_change("put", "/a/b", 1)
    rest.put("/room/s/y", "text")
    stream.expect_change("put", "/y", "text")
    rest.delete("/room/s/a")
    stream.expect_change("put", "/a", None)
    rest.put("/room", {"s": {"z": 3}, "t": 4})
    stream.expect_change("put", "/", {"z": 3})
    rest.put("/", {"room": {"s": {"z": 5}}})
    stream.expect_change("put", "/", {"z": 5})
    rest.put("/room/t", 9)
    rest.put("/elsewhere", 1)
    expect_nothing_before(stream, rest, "/room/s/marker")
    rest.delete("/room")
    stream.expect_change("put", "/", None)


@bounded(20)
def test_patches_at_below_and_above_the_location(server, ns, rest, streams):
    rest.put("/doc", {"a": 0, "x": {"y": 0}})
    stream = streams(server.port, "/doc", ns)
    stream.expect_change("put", "/", {"a": 0, "x": {"y": 0}})
    rest.patch("/doc", {"a": 1, "b": 2})
    stream.expect_change("patch", "/", {"a": 1, "b": 2})
    rest.patch("/doc/x", {"y": 1, "w": None})
    stream.expect_change("patch", "/x", {"y": 1, "w": None})
    rest.patch("/doc", {"b": None})
    stream.expect_change("patch", "/", {"b": None})
    # Multi-segment keys: one put per written path (rest-api.md §9's recommendation; a patch's keys are children).
    rest.patch("/doc", {"x/y": 2, "x/z": 3})
    stream.expect_change("put", "/x/y", 2)
    stream.expect_change("put", "/x/z", 3)
    rest.patch("/doc", {"x/y": 4, "a": 5})
    stream.expect_change("put", "/x/y", 4)
    stream.expect_change("put", "/a", 5)
    # A multi-path update at a parent is a set of each written path: relative puts below, / at or above.
    rest.patch("/", {"doc/a": 6, "other": 1})
    stream.expect_change("put", "/a", 6)
    rest.patch("/", {"doc": {"a": 7, "x": {"y": 4, "z": 3}}})
    stream.expect_change("put", "/", {"a": 7, "x": {"y": 4, "z": 3}})
    rest.patch("/", {"other": 2})
    expect_nothing_before(stream, rest, "/doc/marker")


@bounded(20)
def test_server_values_arrive_resolved(server, ns, rest, streams):
    stream = streams(server.port, "/sv", ns)
    stream.expect_change("put", "/", None)
    before = int(time.time() * 1000)
    rest.put("/sv/at", {".sv": "timestamp"})
    event = stream.expect("put")
    assert event.path == "/at" and before <= event.value <= int(time.time() * 1000), event
    rest.put("/sv/n", 1)
    stream.expect_change("put", "/n", 1)
    rest.patch("/sv", {"n": {".sv": {"increment": 2}}})
    stream.expect_change("patch", "/", {"n": 3})


@bounded(30)
def test_websocket_writers_and_rest_streams_share_one_fan_out(server, ns, rest, streams):
    stream = streams(server.port, "/shared", ns)
    stream.expect_change("put", "/", None)

    async def write_over_the_wire() -> None:
        client = await WireClient.connect(server.port, ns)
        try:
            assert (await client.put("/shared/w", {"v": 1})).ok
            assert (await client.merge("/shared", {"m": 2, "n": 3})).ok
            assert (await client.put("/shared/w/v", 4)).ok
        finally:
            await client.aclose()

    asyncio.run(asyncio.wait_for(write_over_the_wire(), 20))
    stream.expect_change("put", "/w", {"v": 1})
    stream.expect_change("patch", "/", {"m": 2, "n": 3})
    stream.expect_change("put", "/w/v", 4)


@bounded(20)
def test_streams_in_other_namespaces_see_nothing(server, ns, rest, streams):
    other = Rest(server.port, ns[:40] + "-other", ADMIN)
    stream = streams(server.port, "/x", ns)
    stream.expect_change("put", "/", None)
    expect_ok(other.put("/x/a", 1))
    other.close()
    expect_nothing_before(stream, rest, "/x/marker")


@bounded(20)
def test_several_streams_on_one_location_each_get_every_event(server, ns, rest, streams):
    opened = [streams(server.port, "/many", ns) for _ in range(10)]
    for stream in opened:
        stream.expect_change("put", "/", None)
    for index in range(5):
        rest.put(f"/many/k{index}", index)
    for stream in opened:
        for index in range(5):
            stream.expect_change("put", f"/k{index}", index)


@bounded(60)
def test_each_new_stream_gets_its_initial_put_without_waiting_for_a_write(server, ns, rest):
    """The initial put must be sent at once, also when the view's data arrives after the request was handled."""
    rest.put("/existing", {"a": 1})
    for index in range(50):
        path = "/existing" if index % 2 else f"/fresh{index}"
        stream = open_stream(server.port, path, ns, timeout=5)
        try:
            event = stream.next(5)
        except TimeoutError:
            raise AssertionError(f"stream {index} on {path}: no initial put within 5 s") from None
        finally:
            stream.close()
        assert event is not None and event.name == "put" and event.path == "/", (index, event)
        assert event.value == ({"a": 1} if index % 2 else None), (index, event)


# ---------------------------------------------------------------------------------------------------------------
# Volume and backpressure


@bounded(240)
def test_a_stream_survives_10000_writes_without_loss_or_reordering(server, ns, streams):
    writes = 10_000
    stream = streams(server.port, "/feed", ns, timeout=30)
    stream.expect_change("put", "/", None)
    collector = StreamCollector(stream, writes, timeout=200)
    collector.start()
    host = f"127.0.0.1:{server.port}"
    put_target = url("/feed/value.json", {"ns": ns, "print": "silent"})
    patch_target = url("/feed.json", {"ns": ns, "print": "silent"})

    def requests():
        for index in range(writes):
            if index % 2:
                yield build_request("PATCH", patch_target, json.dumps({"value": index, "by": "patch"}), host=host)
            else:
                yield build_request("PUT", put_target, json.dumps(index), host=host)

    def check(index, response):
        assert response.status == 204, f"write {index}: {response.describe()}"

    started = time.monotonic()
    with HttpConnection(server.port, timeout=30) as writer:
        assert pipeline(writer, requests(), window=64, on_response=check) == writes
    written = time.monotonic() - started
    events = collector.result(200)
    received = time.monotonic() - started
    assert len(events) == writes, f"{len(events)} of {writes} events"
    for index, event in enumerate(events):
        if index % 2:
            assert (event.name, event.path, event.value) == ("patch", "/", {"value": index, "by": "patch"}), \
                (index, event)
        else:
            assert (event.name, event.path, event.value) == ("put", "/value", index), (index, event)
    print(f"{writes} pipelined writes in {written:.2f}s; all events streamed after {received:.2f}s")


@bounded(120)
def test_a_stalled_stream_is_cut_off_without_slowing_the_writer_or_other_streams(start_server, ns):
    limits = dict(FAST_SERVER, CANOPY_OUTBOUND_LOW_WATER_MARK_BYTES="16384",
                  CANOPY_OUTBOUND_HIGH_WATER_MARK_BYTES="65536", CANOPY_OUTBOUND_HARD_LIMIT_BYTES="131072")
    with EnvironmentFor(**limits):
        small = start_server()
    # Loopback kernel buffers (the server's auto-tuned send buffer) absorb about 3 MB before the server holds any
    # unsent bytes itself, so 8 MB of events are needed to reach a 128 KiB hard limit.
    writes, payload = 8_000, "p" * 1000
    reader = open_stream(small.port, "/feed", ns, timeout=30)
    reader.expect_change("put", "/", None)
    stalled = open_stream(small.port, "/feed", ns, receive_buffer=4096)
    assert stalled.response.status == 200, stalled.response.describe()
    collector = StreamCollector(reader, writes, timeout=100)
    collector.start()
    host = f"127.0.0.1:{small.port}"
    target = url("/feed/item.json", {"ns": ns, "print": "silent"})

    def check(index, response):
        assert response.status == 204, f"write {index}: {response.describe()}"

    started = time.monotonic()
    with HttpConnection(small.port, timeout=30) as writer:
        requests = (build_request("PUT", target, json.dumps(f"{index}:{payload}"), host=host)
                    for index in range(writes))
        assert pipeline(writer, requests, window=32, on_response=check) == writes
    written = time.monotonic() - started
    events = collector.result(100)
    assert [event.value for event in events] == [f"{index}:{payload}" for index in range(writes)], \
        "the reading stream lost or reordered events"
    cut, received = socket_is_cut_off(stalled.connection, timeout=20)
    assert cut, "the stalled stream was not closed"
    assert received < writes * len(payload), f"the stalled stream got all {received} bytes: it was never cut off"
    rest = Rest(small.port, ns, ADMIN)
    assert rest.value("/feed/item") == f"{writes - 1}:{payload}"
    rest.close()
    stalled.close()
    reader.close()
    print(f"{writes} writes of 1 KB in {written:.2f}s; the stalled stream got {received} bytes before the cut")


# ---------------------------------------------------------------------------------------------------------------
# Security


@pytest.fixture
def user_rules_server(start_server, tmp_path):
    path = tmp_path / "database.rules.json"
    path.write_text(json.dumps(USER_RULES))
    with EnvironmentFor(**FAST_SERVER):
        return start_server("--rules", str(path), "--auth-secret", SECRET)


@bounded(30)
def test_replacing_the_rules_cancels_streams_that_can_no_longer_read(user_rules_server, ns):
    port = user_rules_server.port
    admin = Rest(port, ns, ADMIN)
    admin.put("/users/alice", {"age": 30})
    alice = open_stream(port, "/users/alice", ns, {"auth": token("alice")})
    alice.expect_change("put", "/", {"age": 30})
    anonymous = open_stream(port, "/open", ns)
    anonymous.expect_change("put", "/", None)
    response = admin.call("PUT", "/.settings/rules.json", body=json.dumps({"rules": {"open": {".read": True}}}))
    assert response.status == 200, response.describe()
    cancel = alice.expect("cancel")
    assert cancel.json() == DENIED, cancel
    assert alice.wait_ended() == [], "events after cancel"
    admin.put("/open/x", 1)
    anonymous.expect_change("put", "/x", 1)
    reconnect = open_stream(port, "/users/alice", ns, {"auth": token("alice")})
    expect_error(reconnect.response, 401, DENIED)
    for stream in (alice, anonymous, reconnect):
        stream.close()
    admin.close()


@pytest.mark.parametrize("mode", ["open", "rules"])
@bounded(40)
def test_an_expiring_token_ends_the_stream_with_auth_revoked(start_server, tmp_path, ns, mode):
    args = ["--auth-secret", SECRET, "--auth-clock-skew", "0"]
    if mode == "rules":
        path = tmp_path / "database.rules.json"
        path.write_text(json.dumps(USER_RULES))
        args += ["--rules", str(path)]
    with EnvironmentFor(**FAST_SERVER):
        started = start_server(*args)
    lifetime = 3
    stream = open_stream(started.port, "/users/alice", ns, {"auth": token("alice", lifetime=lifetime)})
    stream.expect_change("put", "/", None)
    admin = Rest(started.port, ns, ADMIN)
    admin.put("/users/alice/a", 1)
    stream.expect_change("put", "/a", 1)
    revoked = stream.expect("auth_revoked", timeout=lifetime + 15)
    assert revoked.data == REVOKED, revoked
    assert stream.wait_ended() == [], "events after auth_revoked"
    admin.close()
    stream.close()


@pytest.mark.parametrize("case", ["anonymous", "other-user", "bad-token", "expired-token"])
@bounded(20)
def test_a_stream_denied_at_connect_gets_a_401_and_no_stream(user_rules_server, ns, case):
    params = {
        "anonymous": {},
        "other-user": {"auth": token("bob")},
        "bad-token": {"auth": "garbage"},
        "expired-token": {"auth": token("alice", iat=int(time.time()) - 7200, lifetime=3600)},
    }[case]
    text = {"bad-token": "Could not parse auth token.", "expired-token": "Auth token is expired."}.get(case, DENIED)
    stream = open_stream(user_rules_server.port, "/users/alice", ns, params)
    expect_error(stream.response, 401, text)
    assert stream.next(2) is None
    stream.close()


@bounded(30)
def test_a_silent_stream_gets_keep_alive_events(start_server, ns):
    with EnvironmentFor(CANOPY_REST_KEEP_ALIVE_SECONDS="1", **FAST_SERVER):
        started = start_server()
    stream = open_stream(started.port, "/quiet", ns)
    stream.expect_change("put", "/", None)
    for _ in range(2):
        event = stream.next(10)
        assert event is not None and (event.name, event.data) == ("keep-alive", "null"), event
    Rest(started.port, ns, ADMIN).put("/quiet/x", 1)
    stream.expect_change("put", "/x", 1)
    stream.close()
