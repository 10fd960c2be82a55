"""The browser long-polling transport `/.lp` and its upgrade to WebSocket, against the real server
(docs/protocol/long-polling.md, cited as §N): start, segments in order whatever order requests arrive in, limits,
expiry and disconnect, the password, the admin credential from another site's page, TLS, hostile segments,
metrics and inspection, and the upgrade to `/.ws?s=` with nothing lost or sent twice.

Requests run on threads (longpoll_client.py); every wait is on observable state (an answer, a delivered message, a
REST value, a metric) with a timeout.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import random
import re
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any, Callable

import pytest

from conftest import Clients
from firebase_wire import WireClient
from longpoll_client import (
    LongPollSession, LongPollTimeout, Pending, Segment, control_type, encode_message, envelope, is_push, is_response, lp_request,
    random_id, random_serial, segment_params, wait_any, wait_unanswered, websafe_b64,
)
from rest_client import EnvironmentFor, bounded

ADMIN = {"Authorization": "Bearer owner"}
SWITCH_ACK = {"t": "c", "d": {"t": "a", "d": {}}}
END_OF_TRANSMISSION = {"t": "c", "d": {"t": "n", "d": {}}}


# ---------------------------------------------------------------------------------------------------------------
# Helpers


class Sessions:
    """Opens long-poll sessions for one test and ends whatever is still alive at its end."""

    def __init__(self) -> None:
        self.opened: list[LongPollSession] = []

    def track(self, session: LongPollSession) -> LongPollSession:
        self.opened.append(session)
        return session

    def open(self, port: int, ns: str, **kw: Any) -> LongPollSession:
        return self.track(LongPollSession.open(port, ns, **kw))

    async def aopen(self, port: int, ns: str, **kw: Any) -> LongPollSession:
        return self.track(await LongPollSession.aopen(port, ns, **kw))

    def close_all(self) -> None:
        for session in self.opened:
            session.close()


@pytest.fixture
def lp():
    sessions = Sessions()
    yield sessions
    sessions.close_all()


def http_get(port: int, path: str, headers: dict | None = None, tls: bool = False) -> tuple[int, bytes]:
    scheme = "https" if tls else "http"
    request = urllib.request.Request(f"{scheme}://127.0.0.1:{port}{path}", headers=headers or {})
    context = None
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def rest_value(port: int, ns: str, path: str, tls: bool = False) -> Any:
    status, body = http_get(port, f"{path}.json?ns={ns}", ADMIN, tls)
    assert status == 200, (status, body)
    return json.loads(body)


def wait_until(probe: Callable[[], Any], accept: Callable[[Any], bool], timeout: float = 10.0,
               what: str = "state", interval: float = 0.05) -> Any:
    """Probes an observable state (REST, /.metrics) until ``accept`` holds; fails with the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if accept(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: still {value!r} after {timeout}s")
        time.sleep(interval)


def wait_rest(port: int, ns: str, path: str, expected: Any, timeout: float = 10.0) -> None:
    wait_until(lambda: rest_value(port, ns, path), lambda value: value == expected, timeout,
               f"REST {path} to become {expected!r}")


async def await_rest(port: int, ns: str, path: str, expected: Any, timeout: float = 10.0) -> None:
    await asyncio.to_thread(wait_rest, port, ns, path, expected, timeout)


def metrics(port: int) -> dict[str, float]:
    status, body = http_get(port, "/.metrics")
    assert status == 200
    values: dict[str, float] = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def metric(port: int, name: str) -> float:
    return metrics(port).get(name, 0.0)


def model_json(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def put_message(r: int, path: str, value: Any) -> dict:
    return envelope(r, "p", {"p": path, "d": value})


def end_raw_start(port: int, answer) -> None:
    """Ends a session started outside a LongPollSession (if it started)."""
    starts = [command.args for command in answer.commands if command.kind == "start"]
    if answer.status == 200 and starts:
        lp_request(port, [("disconn", "t"), ("id", starts[0][0]), ("pw", starts[0][1])], timeout=5)


def one_segment(session: LongPollSession, message: Any) -> Segment:
    segments = session.segments_for(message)
    assert len(segments) == 1
    return segments[0]


# ---------------------------------------------------------------------------------------------------------------
# 1. Basics (§2, §3, §4)


@bounded(20)
def test_start_defines_the_callbacks_starts_and_carries_the_hello(server, ns, lp):
    session = lp.track(LongPollSession(server.port, ns, cb="7"))
    answer = session.start()
    assert answer.header("Content-Type") == "text/javascript; charset=utf-8", answer.headers
    assert answer.header("Cache-Control") == "no-store", answer.headers
    kinds = [command.kind for command in answer.commands]
    assert kinds == ["function", "function", "start", "data"], answer.text
    functions = [command.args[1].rstrip(";") for command in answer.commands if command.kind == "function"]
    assert functions == ["function pLPCommand(c,a1,a2,a3,a4){parent.pLPCommand7(c,a1,a2,a3,a4);}",
                         "function pRTLPCB(pN,data){parent.pRTLPCB7(pN,data);}"], answer.text
    assert re.fullmatch(r"[A-Za-z0-9]{16}", session.id), session.id
    assert re.fullmatch(r"[A-Za-z0-9]{32}", session.pw), session.pw
    (n, messages), = answer.batches
    assert n == 0 and len(messages) == 1, answer.text
    hello = messages[0]["d"]["d"]
    assert set(hello) >= {"ts", "v", "h", "s"}, hello
    assert hello["v"] == "5" and isinstance(hello["h"], str) and hello["h"]
    assert abs(hello["ts"] - time.time() * 1000) < 60_000, hello
    assert isinstance(hello["s"], str) and hello["s"] and hello["s"] != session.id
    session.start_polling()
    assert session.put("/started", True).ok
    assert not [a.target for a in session.answers if hello["s"] in a.target], "s appeared in a URL of the session"
    assert rest_value(server.port, ns, "/started") is True
    assert not session.protocol_errors, session.protocol_errors


@bounded(20)
def test_start_without_cb_defines_no_callbacks_and_cb_is_digits_only(server, ns, lp):
    session = lp.track(LongPollSession(server.port, ns, cb=None))
    answer = session.start()
    assert [command.kind for command in answer.commands] == ["start", "data"], answer.text
    # cb goes into JavaScript: anything but digits must not reach the answer.
    hostile = lp_request(server.port, [("start", "t"), ("ser", "1"), ("cb", "1);alert(document.cookie);//"),
                                       ("v", "5"), ("ns", ns)])
    assert hostile.status == 400 or "alert" not in hostile.text, hostile.describe()
    end_raw_start(server.port, hostile)


@bounded(20)
def test_a_namespace_the_client_may_not_create_gets_shutdown_then_close(start_server):
    # Off loopback (reached through 127.0.0.1) namespaces are not created on first use (test_namespace_creation.py).
    server = start_server("--host", "0.0.0.0", "--allow-open", "--admin-token", "the-admin-secret-token",
                          open_namespaces=False)
    session = LongPollSession(server.port, "made-up")
    answer = session.start(expect_hello=False)
    (n, messages), = answer.batches
    assert n == 0 and [control_type(message) for message in messages] == ["s"], answer.text
    assert "does not exist" in messages[0]["d"]["d"], messages
    assert answer.close == 0 and session.closed, answer.text
    assert session.request_now().status == 404
    assert sorted(path.name for path in server.data_dir.iterdir()) == ["default"]


async def test_a_set_over_long_polling_reaches_websocket_clients_and_back(server, ns, lp):
    session = await lp.aopen(server.port, ns)
    async with Clients(server.port) as clients:
        ws = await clients.connect(ns)
        view, _ = await ws.listen("/room")
        assert (await session.alisten("/room/from-ws")).ok
        assert (await session.aput("/room/from-lp", "over long polling")).ok
        await ws.sync()  # the push to the listener went out before the writer's acknowledgement
        assert view.cache == {"from-lp": "over long polling"}
        assert (await ws.put("/room/from-ws", {"n": 1})).ok
        await session.await_message(lambda m: is_push(m, "/room/from-ws") and m["d"]["b"]["d"] == {"n": 1},
                                    what="the WebSocket client's set")
        assert (await session.aget("/room")).data == {"from-lp": "over long polling", "from-ws": {"n": 1}}
    assert not session.protocol_errors, session.protocol_errors


@pytest.mark.timeout(90)
async def test_requests_arriving_out_of_order_take_effect_in_segment_order(server, ns, lp):
    port = server.port
    session = await lp.aopen(port, ns, polling=False)
    async with Clients(port) as clients:
        watcher = await clients.connect(ns)
        pair, _ = await watcher.listen("/pair")
        counter, _ = await watcher.listen("/counter")

        # Segment 1's request reaches the server before segment 0's is even sent.
        first = one_segment(session, put_message(session.take_r(), "/pair", "first"))
        second = one_segment(session, put_message(session.take_r(), "/pair", "second"))
        ahead = session.send_segments([second])
        probe = session.poll()
        # Whichever of the two is answered first, both have arrived (the older is answered when the newer comes).
        await asyncio.to_thread(wait_any, [ahead, probe])
        session.send_segments([first])
        session.start_polling()
        responses = [await session.aresponse(r) for r in (1, 2)]
        assert all(response.ok for response in responses), responses
        order = [m["d"]["r"] for m in session.messages() if is_response(m)]
        assert order == [1, 2], order
        await await_rest(port, ns, "/pair", "second")
        await watcher.sync()
        assert [value for value in pair.history if value is not None] == ["first", "second"], pair.history

        # 200 sets of increasing values, one request each, sent in shuffled order (within blocks of 8), many on
        # their way at once.
        writes = [(session.take_r(), k) for k in range(200)]
        segments = [one_segment(session, put_message(r, "/counter", k)) for r, k in writes]
        order = list(range(200))
        shuffler = random.Random(20240611)
        for block in range(0, 200, 8):
            chunk = order[block:block + 8]
            shuffler.shuffle(chunk)
            order[block:block + 8] = chunk
        assert order != sorted(order)

        def send_shuffled() -> None:
            sent: list[Pending] = []
            for position, index in enumerate(order):
                wait_unanswered(sent, 15)  # at most 16 on their way (never 64 waiting segments)
                sent.append(session.send_segments([segments[index]]))

        await asyncio.to_thread(send_shuffled)
        answers = [await session.aresponse(r, timeout=30) for r, _ in writes]
        assert [answer.status for answer in answers] == ["ok"] * 200, [a.status for a in answers if not a.ok][:5]
        acknowledged = [m["d"]["r"] for m in session.messages() if is_response(m)]
        assert acknowledged == [1, 2] + [r for r, _ in writes], acknowledged
        assert rest_value(port, ns, "/counter") == 199
        await watcher.sync()
        seen = [value for value in counter.history if value is not None]
        assert seen == sorted(seen) and len(set(seen)) == len(seen) and seen[-1] == 199, seen
    assert not session.protocol_errors, session.protocol_errors
    assert not session.ended


@bounded(30)
def test_replayed_segments_are_ignored_and_standard_base64_is_accepted(server, ns, lp):
    port = server.port
    session = lp.open(port, ns)
    segment = one_segment(session, put_message(session.take_r(), "/dup/a", 1))
    assert session.send_segments([segment]).wait().status == 200
    assert session.response(1).ok
    # The same request again (a retry), and another message under the taken number: both ignored, no error.
    assert session.request_now(segment_params([segment])).status == 200
    other = Segment(segment.number, 1, encode_message(put_message(99, "/dup/a", "replaced")))
    assert session.request_now(segment_params([other])).status == 200
    # A three-segment message with its middle segment sent twice.
    big = "x" * 4000
    pieces = session.segments_for(put_message(session.take_r(), "/dup/big", big))
    assert len(pieces) == 3
    for group in ([pieces[0], pieces[1]], [pieces[1]], [pieces[2]]):
        assert session.send_segments(group).wait().status == 200
    assert session.response(2).ok
    # Standard base64 (+ and / percent-encoded, = padding), and base64 without its padding.
    text = "??>>~~" * 3
    standard = base64.b64encode(model_json(put_message(session.take_r(), "/dup/standard", text))).decode()
    assert "+" in standard and "/" in standard, standard
    quoted = standard.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    session.submit([("seg0", str(session.take_segments(1))), ("ts0", "1"), ("d0", quoted)])
    assert session.response(3).ok
    r = session.take_r()
    padded = next(data for data in (encode_message(put_message(r, "/dup/unpadded", "a" * size)) for size in range(3))
                  if data.endswith("."))
    session.submit([("seg0", str(session.take_segments(1))), ("ts0", "1"), ("d0", padded.rstrip("."))])
    assert session.response(4).ok
    responses = [m["d"]["r"] for m in session.messages() if is_response(m)]
    assert responses == [1, 2, 3, 4], responses
    stored = rest_value(port, ns, "/dup")
    assert {key: stored[key] for key in ("a", "big", "standard")} == {"a": 1, "big": big, "standard": text}, stored
    assert "unpadded" in stored
    assert not session.ended and not session.protocol_errors, session.protocol_errors


# ---------------------------------------------------------------------------------------------------------------
# 2. Limits (§2, §8)


@bounded(30)
def test_long_poll_sessions_count_toward_max_connections(start_server, ns, lp):
    """Every request goes over one kept-alive connection, so the server holds exactly that connection and the
    sessions: with --max-connections 4, three sessions fill it."""
    server = start_server("--max-connections", "4")
    port = server.port
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        started: list[LongPollSession] = []
        for _ in range(3):
            session = lp.track(LongPollSession(port, ns))
            session.start(connection=connection)
            started.append(session)
        refused = LongPollSession(port, ns).start(refusable=True, connection=connection)
        assert refused.status == 503, refused.describe()
        if connection.sock is None:
            connection.connect()  # the refusal closed it: take the place again
        # The sessions hold their places as connections do: a new peer is refused too.
        status, body = http_get(port, "/.health")
        assert status == 503, (status, body)
        ended = started[0].disconnect("GET", connection=connection)
        assert ended.status < 300, ended.describe()
        lp.track(LongPollSession(port, ns)).start(connection=connection)  # room for one again
        assert LongPollSession(port, ns).start(refusable=True, connection=connection).status == 503
        if connection.sock is None:
            connection.connect()
        for session in lp.opened[1:]:
            assert session.disconnect("POST", connection=connection).status < 300
    finally:
        connection.close()
    assert http_get(port, "/.health")[0] == 200  # every place given back


async def test_listen_and_outstanding_limits_apply_to_a_long_poll_session(start_server, tmp_path, ns, lp):
    config = tmp_path / "canopy.json"
    config.write_text(json.dumps({"gateway": {"maxListensPerConnection": 3,
                                              "maxOutstandingRequestsPerConnection": 4}}))
    port = start_server("--config", str(config)).port
    greedy = await lp.aopen(port, ns)
    eager = await lp.aopen(port, ns)
    neighbour = await lp.aopen(port, ns)
    for index in range(3):
        assert (await greedy.alisten(f"/l/{index}")).ok
    refused = await greedy.alisten("/l/3")
    assert refused.status == "limit_exceeded" and "maxListensPerConnection" in json.dumps(refused.data), refused
    assert (await greedy.arequest("n", {"p": "/l/1"})).ok
    assert (await greedy.alisten("/l/3")).ok  # room again after an unlisten

    # Ten writes in one request are decoded in one pass: none is answered before all are taken.
    rs = [eager.take_r() for _ in range(10)]
    segments = [one_segment(eager, put_message(r, f"/o/{index}", index)) for index, r in enumerate(rs)]
    eager.send_segments(segments)
    answers = [await eager.aresponse(r) for r in rs]
    statuses = [answer.status for answer in answers]
    # Within the limit every request is taken; past it a request is refused (as on a WebSocket) or waits until
    # answers made room (the session stops taking messages, as a WebSocket stops reading): never more than 4.
    assert statuses[:4] == ["ok"] * 4 and set(statuses) <= {"ok", "limit_exceeded"}, statuses
    refused_writes = [answer for answer in answers if answer.status == "limit_exceeded"]
    assert all("maxOutstandingRequestsPerConnection" in json.dumps(a.data) for a in refused_writes), refused_writes
    assert [m["d"]["r"] for m in eager.messages() if is_response(m)] == rs, "answers out of request order"
    assert (await eager.aput("/o/again", True)).ok

    # The neighbour session is unaffected: it listens, writes and reads.
    assert (await neighbour.alisten("/l/0")).ok and (await neighbour.alisten("/o")).ok
    assert (await greedy.aput("/l/0", "hello")).ok
    await neighbour.await_message(lambda m: is_push(m, "/l/0") and m["d"]["b"]["d"] == "hello")
    written = {str(index): index for index, status in enumerate(statuses) if status == "ok"}
    assert (await neighbour.aget("/o")).data == {**written, "again": True}
    values = await asyncio.to_thread(metrics, port)
    assert values.get("canopy_limit_listens_refused_total") == 1, values
    assert values.get("canopy_limit_outstanding_refused_total", 0) == len(refused_writes), values
    for session in (greedy, eager, neighbour):
        assert not session.ended and not session.protocol_errors, session.protocol_errors


# ---------------------------------------------------------------------------------------------------------------
# 3. Expiry and disconnect (§4, §5, §6)


@pytest.fixture
def quick_server(start_server):
    """Sessions idle for 2 s expire; polls are held 1 s."""
    with EnvironmentFor(CANOPY_GATEWAY_LONG_POLL_IDLE_TIMEOUT_SECONDS="2", CANOPY_GATEWAY_LONG_POLL_HOLD_SECONDS="1"):
        return start_server()


@bounded(40)
def test_a_session_that_stops_polling_expires_and_one_that_polls_does_not(quick_server, ns, lp):
    port = quick_server.port
    quiet = lp.open(port, ns)
    busy = lp.open(port, ns)
    assert quiet.request("o", {"p": "/gone/quiet", "d": "expired"}).ok
    assert busy.request("o", {"p": "/gone/busy", "d": "expired"}).ok
    # A poll nothing came for is answered empty after the hold time (1 s).
    empty = busy.wait_for(lambda: [a for a in busy.answers if not a.commands and a.elapsed >= 0.5], 5, "held poll")
    assert empty[0].status == 200 and empty[0].elapsed <= 3.0, empty[0].describe()
    quiet.stop_polling(wait=True)  # its last poll is answered empty within the hold time; none follows
    stopped = time.monotonic()
    answered_before = len(busy.answers)
    wait_rest(port, ns, "/gone/quiet", "expired", timeout=10)
    assert time.monotonic() - stopped <= 6.0
    assert quiet.request_now().status == 404
    # The busy session polled through several idle timeouts and lives on.
    busy.wait_for(lambda: len(busy.answers) >= answered_before + 5, 15, "five more poll answers")
    assert busy.put("/still", "alive").ok
    assert rest_value(port, ns, "/gone") == {"quiet": "expired"}
    assert metric(port, "canopy_longpoll_expired_total") == 1
    assert not busy.ended and not busy.protocol_errors, busy.protocol_errors


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_disconn_ends_the_session_at_once_and_runs_ondisconnect(server, ns, lp, method):
    port = server.port
    session = await lp.aopen(port, ns, polling=False)
    async with Clients(port) as clients:
        watcher = await clients.connect(ns)
        view, _ = await watcher.listen("/bye")
        assert (await session.arequest("o", {"p": f"/bye/{method}", "d": "gone"})).ok
        held = await session.run(session.hold_poll)
        started = time.monotonic()
        answer = await session.run(session.disconnect, method)
        assert 200 <= answer.status < 300, answer.describe()
        await watcher.wait_for(lambda _: view.cache == {method: "gone"}, timeout=5)
        assert time.monotonic() - started < 5.0  # at once, not at the idle timeout (30 s)
        await held.await_()
        await session.run(session.wait_closed, 5)  # the held poll got the close command
        assert (await session.run(session.request_now)).status == 404


@bounded(20)
def test_the_disconnect_frame_is_html_sending_the_beacon(server, ns, lp):
    session = lp.open(server.port, ns)
    frame = session.dframe()
    assert frame.status == 200, frame.describe()
    assert (frame.header("Content-Type") or "").startswith("text/html"), frame.headers
    text = frame.text
    assert "sendBeacon" in text and "disconn=t" in text, text
    assert session.id in text and session.pw in text, text
    assert session.put("/after-frame", 1).ok  # loading the frame ends nothing


# ---------------------------------------------------------------------------------------------------------------
# 4. The password (§3)


async def test_a_wrong_password_or_unknown_id_gets_404_and_changes_nothing(server, ns, lp):
    port = server.port
    session = await lp.aopen(port, ns, polling=False)
    async with Clients(port) as clients:
        writer = await clients.connect(ns)
        assert (await session.alisten("/pw/watch")).ok
        assert (await session.arequest("o", {"p": "/pw/od", "d": "ended"})).ok
        held = await session.run(session.hold_poll)
        next_number = session.next_seg
        stolen = [Segment(next_number, 1, encode_message(put_message(99, "/pw/stolen", 1)))]
        wrong_pw = await session.run(session.request_now, segment_params(stolen), pw=random_id(32))
        assert wrong_pw.status == 404, wrong_pw.describe()
        unknown = await session.run(session.request_now, segment_params(stolen), id=random_id(16))
        assert unknown.status == 404, unknown.describe()
        no_pw = await asyncio.to_thread(lp_request, port, [("id", session.id), ("ser", random_serial())])
        assert no_pw.status in (400, 404), no_pw.describe()
        for method in ("POST", "GET"):
            guessed = await session.run(session.disconnect, method, pw=random_id(32))
            assert guessed.status == 404, guessed.describe()
        assert not held.done(), "a request of a wrong password answered the session's held poll"
        # Still alive: the held poll delivers, the number the wrong request used is still free.
        assert (await writer.put("/pw/watch", "still here")).ok
        answer = await held.await_()
        assert any(is_push(m, "/pw/watch") and m["d"]["b"]["d"] == "still here" for m in answer.messages), \
            answer.describe()
        session.start_polling()
        assert (await session.aput("/pw/real", "mine")).ok
        assert session.next_seg - 1 == next_number
        assert (await asyncio.to_thread(rest_value, port, ns, "/pw")) == {"watch": "still here", "real": "mine"}
    assert not session.ended and not session.protocol_errors, session.protocol_errors


# ---------------------------------------------------------------------------------------------------------------
# 5. The admin credential from another site's page (§2)


async def test_the_admin_credential_is_refused_from_another_sites_page(server, ns, lp):
    port = server.port
    cross = await lp.aopen(port, ns, headers={"Sec-Fetch-Site": "cross-site"})
    refused = await cross.arequest("auth", {"cred": "owner"})
    assert refused.status == "permission_denied", refused
    async with Clients(port) as clients:
        ws = await clients.connect(ns, headers={"Sec-Fetch-Site": "cross-site"})
        over_ws = await ws.auth("owner")
        assert over_ws.status == "permission_denied"
        assert refused.message == over_ws.inbound.message, (refused.message, over_ws.inbound.text)
    assert (await cross.aput("/cross", "data is still usable")).ok
    same = await lp.aopen(port, ns)
    accepted = await same.arequest("auth", {"cred": "owner"})
    assert accepted.ok, accepted


# ---------------------------------------------------------------------------------------------------------------
# 6. TLS (§8)


@pytest.fixture
def tls_server(start_server, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    port_file = tmp_path / "tls-port"
    server = start_server("--tls-cert", str(cert), "--tls-key", str(key), "--tls-port", "0",
                          "--tls-port-file", str(port_file))
    # The plain port file comes first; the TLS one may follow a moment later.
    text = wait_until(lambda: port_file.read_text() if port_file.exists() else "", lambda t: t.strip().isdigit(), 10,
                      "the TLS port file")
    server.tls_port = int(text)
    return server


@bounded(30)
def test_long_polling_over_https(tls_server, ns, lp):
    session = lp.open(tls_server.tls_port, ns, tls=True)
    assert session.hello["v"] == "5"
    assert session.listen("/secure").ok
    assert session.put("/secure", {"over": "https"}).ok
    assert session.get("/secure").data == {"over": "https"}
    session.wait_message(lambda m: is_push(m, "/secure") and m["d"]["b"]["d"] == {"over": "https"})
    assert rest_value(tls_server.tls_port, ns, "/secure", tls=True) == {"over": "https"}
    assert not session.protocol_errors, session.protocol_errors


# ---------------------------------------------------------------------------------------------------------------
# 7. Hostile segments (§3)


def _message(k: int) -> str:
    return encode_message(put_message(900 + k, f"/hostile/{k}", k))


def _halves() -> tuple[str, str]:
    data = encode_message(put_message(900, "/hostile/split", "y" * 40))
    return data[:len(data) // 2], data[len(data) // 2:]


def _seg(number: Any, total: Any, data: str) -> Segment:
    return Segment(number, total, data)


def _waiting(first: int, last: int) -> list[Segment]:
    return [_seg(number, 1, _message(number)) for number in range(first, last + 1)]


# name: (requests accepted first, the hostile request, words one of which the explanation should contain)
HOSTILE: dict[str, tuple[list[Any], Any, tuple[str, ...]]] = {
    "not-base64": ([], [_seg(0, 1, "not*base64!")], ("base64",)),
    "ts-0": ([], [_seg(0, 0, _message(0))], ("ts", "count")),
    "ts-20001": ([], [_seg(0, 20_001, _message(0))], ("ts", "count")),
    "ts-differs-in-one-message": ([], [_seg(0, 2, _halves()[0]), _seg(1, 3, _halves()[1])], ("ts", "count")),
    "ts-contradicts-a-held-segment": ([[_seg(1, 2, _halves()[1])]], [_seg(0, 3, _halves()[0])], ("ts", "count")),
    "ts-not-a-number": ([], [_seg(0, "one", _message(0))], ("ts", "count", "number")),
    "seg-not-a-number": ([], [_seg("zero", 1, _message(0))], ("seg", "number")),
    "seg-2-to-the-53": ([], [_seg(2**53, 1, _message(0))], ("seg", "number")),
    "index-100000000": ([], "seg100000000=0&ts100000000=1&d100000000=" + _message(0), ("seg", "index", "number")),
    "65-waiting-behind-a-gap": ([_waiting(1, 32), _waiting(33, 64)], _waiting(65, 65), ("64", "waiting", "gap")),
}


def _params(step: Any) -> Any:
    return step if isinstance(step, str) else segment_params(step)


@pytest.mark.parametrize("case", list(HOSTILE))
@bounded(30)
def test_a_hostile_request_ends_its_session_with_400_and_neighbours_go_on(server, ns, lp, case):
    port = server.port
    accepted, hostile, words = HOSTILE[case]
    neighbour = lp.open(port, ns)
    victim = lp.open(port, ns, polling=False)
    assert victim.next_seg == 0
    held = victim.hold_poll()
    for step in accepted:
        pending = victim.submit(_params(step))
        assert held.wait(5).status == 200  # answered because the newer request arrived
        held = pending
    request = victim.submit(_params(hostile))
    try:
        refused = request.wait(3)
    except LongPollTimeout:
        pytest.fail(f"{case}: the hostile request was taken and held as a poll, not refused: {request.target[:300]}")
    assert refused.status == 400, refused.describe()
    explanation = refused.text.strip()
    assert len(explanation) >= 10 and "pRTLPCB" not in explanation, refused.describe()
    assert any(word in explanation.lower() for word in words), f"{case}: unclear explanation {explanation!r}"
    # The held request gets the error message and the close command; the session is gone.
    try:
        last = held.wait(5)
    except LongPollTimeout:
        pytest.fail(f"{case}: answered {refused.status} {explanation!r}, but the session did not end: "
                    "its held poll got no close command within 5 s")
    assert last.status == 200 and last.close is not None, last.describe()
    victim.wait_closed(5)
    assert any(control_type(m) == "e" for m in victim.messages()), victim.texts()
    assert victim.request_now().status == 404
    assert rest_value(port, ns, "/hostile") is None
    # The neighbour and the server go on.
    assert neighbour.put(f"/neighbour/{case}", "fine").ok
    assert rest_value(port, ns, f"/neighbour/{case}") == "fine"
    assert not neighbour.ended and not neighbour.protocol_errors, neighbour.protocol_errors


# A reassembled message that is not a wire message is the session's to refuse, as on a WebSocket (§3): the `e` error
# message and the end of the session, on the request that carried it, which the session held as its poll.
NOT_WIRE_MESSAGES = {
    "not-json": websafe_b64(b"this is not json"),
    "not-utf8": websafe_b64(b'{"t":"\xff\xfe"}'),
    "two-json-values": websafe_b64(b'{"t":"c","d":{}}{"t":"c","d":{}}'),
}


@pytest.mark.parametrize("case", list(NOT_WIRE_MESSAGES))
@bounded(30)
def test_a_message_that_is_not_a_wire_message_ends_its_session_as_on_a_websocket(server, ns, lp, case):
    port = server.port
    neighbour = lp.open(port, ns)
    victim = lp.open(port, ns, polling=False)
    held = victim.hold_poll()
    request = victim.submit(segment_params([_seg(0, 1, NOT_WIRE_MESSAGES[case])]))
    assert held.wait(5).status == 200  # the older poll leaves when the newer arrives
    answer = request.wait(5)
    assert answer.status == 200 and answer.close is not None, answer.describe()
    victim.wait_closed(5)
    assert any(control_type(m) == "e" for m in victim.messages()), victim.texts()
    assert victim.request_now().status == 404
    assert neighbour.put(f"/neighbour/{case}", "fine").ok
    assert not neighbour.ended


@bounded(400)
def test_a_message_over_16_mib_is_refused_and_ends_its_session(server, ns, lp):
    """A message announced in 20,000 segments of 1,200 characters: 24 million base64 characters, over the 16 MiB
    a WebSocket message may have. Sent as a page would (six segments a request, a few requests on their way); the
    request that takes it past the limit (or the first, if such a count is refused outright) gets 400."""
    port = server.port
    neighbour = lp.open(port, ns)
    victim = lp.open(port, ns, polling=False)
    total, size, per_request = 20_000, 1_200, 6
    data = "A" * size
    sent: list[Pending] = []
    number = 0
    while number < total and not any(item.done() and item.wait(0).status != 200 for item in sent[-6:]):
        group = [Segment(n, total, data) for n in range(number, min(number + per_request, total))]
        number += len(group)
        wait_unanswered(sent, 3)
        sent.append(victim.send_segments(group))
    try:
        # 24 million characters in about 3,300 requests: on a loaded machine the last answers come late.
        answers = [item.wait(120) for item in sent]
    except LongPollTimeout:
        pytest.fail(f"all {number} segments were taken, none refused; the last request is held as a poll")
    statuses = [answer.status for answer in answers]
    first = next(index for index, status in enumerate(statuses) if status != 200)
    refused = answers[first]
    assert refused.status == 400, refused.describe()
    assert statuses.count(400) == 1 and set(statuses) <= {200, 400, 404}, statuses[first - 3:]
    explanation = refused.text.lower()
    assert any(word in explanation for word in ("16", "limit", "large", "ts", "count")), refused.describe()
    victim.wait_closed(30)
    assert any(control_type(m) == "e" for m in victim.messages()), victim.texts()
    assert victim.request_now().status == 404
    assert neighbour.put("/after-16-mib", "fine").ok
    assert rest_value(port, ns, "/") == {"after-16-mib": "fine"}


@bounded(30)
def test_64_segments_may_wait_behind_a_gap(server, ns, lp):
    session = lp.open(server.port, ns)
    messages = [put_message(session.take_r(), f"/gap/{k}", k) for k in range(65)]
    segments = [one_segment(session, message) for message in messages]
    session.send_segments(segments[1:33])
    session.send_segments(segments[33:65])
    # Nothing was taken yet: no answer to any of them.
    session.send_segments(segments[:1])
    answers = [session.response(r) for r in range(1, 66)]
    assert all(answer.ok for answer in answers)
    assert [m["d"]["r"] for m in session.messages() if is_response(m)] == list(range(1, 66))
    assert rest_value(server.port, ns, "/gap") == list(range(65))


# ---------------------------------------------------------------------------------------------------------------
# 8. Metrics and inspection (§8)


async def test_sessions_and_requests_in_metrics_and_inspection(start_server, ns, lp):
    port = start_server().port
    before = await asyncio.to_thread(metrics, port)
    assert before.get("canopy_longpoll_sessions", 0) == 0, before
    first = await lp.aopen(port, ns)
    second = await lp.aopen(port, ns)
    assert (await first.alisten("/watched")).ok
    await asyncio.to_thread(wait_until, lambda: metric(port, "canopy_longpoll_sessions"), lambda v: v == 2, 5,
                            "canopy_longpoll_sessions == 2")
    async with Clients(port) as clients:
        ws = await clients.connect(ns)
        await ws.listen("/other")
        status, body = await asyncio.to_thread(http_get, port, "/.inspect/connections.json", ADMIN)
        assert status == 200, body
        listed = json.loads(body)
        ours = [entry for entry in listed["connections"] if entry.get("namespace") == ns]
        polling = [entry for entry in ours if entry.get("transport") == "long-polling"]
        assert len(ours) == 3 and len(polling) == 2, listed
        assert {"path": "/watched", "query": None} in [listen for e in polling for listen in e["listens"]], polling
        assert [e for e in ours if e not in polling][0]["listens"] == [{"path": "/other", "query": None}]
    requests = metric(port, "canopy_longpoll_requests_total")
    assert requests >= 4, requests  # two starts, two polls at least
    assert (await first.run(first.disconnect, "POST")).status < 300
    await asyncio.to_thread(wait_until, lambda: metric(port, "canopy_longpoll_sessions"), lambda v: v == 1, 5,
                            "canopy_longpoll_sessions == 1")
    assert (await second.aput("/x", 1)).ok
    assert metric(port, "canopy_longpoll_requests_total") > requests
    assert (await second.run(second.disconnect, "GET")).status < 300
    await asyncio.to_thread(wait_until, lambda: metric(port, "canopy_longpoll_sessions"), lambda v: v == 0, 5,
                            "canopy_longpoll_sessions == 0")


# ---------------------------------------------------------------------------------------------------------------
# 9. Upgrade to WebSocket (§7)


async def open_upgrade(port: int, ns: str, s: str) -> WireClient:
    return await WireClient.connect(port, ns, params=f"v=5&ns={ns}&s={s}", wait_hello=False)


@pytest.mark.timeout(90)
async def test_upgrade_to_websocket_loses_nothing_and_sends_nothing_twice(server, ns, lp):
    port = server.port
    session = await lp.aopen(port, ns)
    upgrades_before = metric(port, "canopy_longpoll_upgrades_total")
    async with Clients(port) as clients:
        writer = await clients.connect(ns)
        assert (await session.alisten("/up/v")).ok
        assert (await session.arequest("o", {"p": "/up/od", "d": "bye"})).ok

        async def write(values: range) -> None:
            for value in values:
                assert (await writer.put("/up/v", value)).ok

        await write(range(0, 200))
        await session.await_message(lambda m: is_push(m, "/up/v") and m["d"]["b"]["d"] == 199)
        during = asyncio.create_task(write(range(200, 350)))

        ws = await open_upgrade(port, ns, session.session_id)
        clients.open.append(ws)
        ack = await ws.wait_for(lambda entry: entry.is_control, timeout=5)
        assert ack.message == SWITCH_ACK, ack.text
        assert ws.hello is None
        await ws.ping()
        await ws.ping()
        await ws.send_json(SWITCH_ACK)
        lp_r = session.send_request("p", {"p": "/up/seq", "d": "long poll"})
        ws.next_r = session.take_r()
        ws_write = await ws.send_request("p", {"p": "/up/seq", "d": "websocket"})  # waits for n
        session.send_json(END_OF_TRANSMISSION)
        await session.run(session.wait_closed, 10)
        await during
        await write(range(350, 500))
        assert (await ws.wait_response(ws_write)).ok
        after = await ws.put("/up/after", "acknowledged on the WebSocket")
        assert after.ok, after

        lp_messages = session.messages()
        ends = [index for index, m in enumerate(lp_messages) if m == END_OF_TRANSMISSION]
        assert ends == [len(lp_messages) - 1], [json.dumps(m)[:100] for m in lp_messages[-5:]]
        ws_messages = [entry.message for entry in ws.log[1:] if control_type(entry.message) != "o"]
        combined = lp_messages[:-1] + ws_messages
        values = [m["d"]["b"]["d"] for m in combined if is_push(m, "/up/v")]
        assert values == list(range(500)), (len(values), values[:5], values[-5:])
        over_ws = [m["d"]["b"]["d"] for m in ws_messages if is_push(m, "/up/v")]
        assert over_ws and over_ws[-1] == 499 and 199 not in over_ws
        answered = [m["d"]["r"] for m in combined if is_response(m)]
        assert answered == [1, 2, lp_r, lp_r + 1, lp_r + 2], answered  # each once, in order
        assert rest_value(port, ns, "/up/seq") == "websocket"  # taken after everything before n
        assert not ws.protocol_errors and not session.protocol_errors, (ws.protocol_errors, session.protocol_errors)

        # The long-poll side ended; a disconn for it leaves the WebSocket session alone.
        assert (await session.run(session.request_now)).status == 404
        await session.run(session.disconnect, "POST")
        assert (await ws.put("/up/still", True)).ok
        assert rest_value(port, ns, "/up/od") is None
        assert metric(port, "canopy_longpoll_upgrades_total") == upgrades_before + 1
        await ws.close()
        await await_rest(port, ns, "/up/od", "bye")  # the WebSocket closing ended the session


async def test_a_websocket_naming_no_live_session_gets_the_reset(server, ns, lp):
    ws = await open_upgrade(server.port, ns, "unknown")
    try:
        reset = await ws.wait_for(lambda entry: entry.is_control, timeout=5)
        assert reset.control_type == "r" and isinstance(reset.body.get("d"), str) and reset.body["d"], reset.text
        await ws.wait_closed(5)
        assert ws.hello is None
    finally:
        await ws.aclose()


async def test_a_websocket_closed_before_n_leaves_the_session_on_long_polling(server, ns, lp):
    session = await lp.aopen(server.port, ns)
    assert (await session.aput("/stay", 1)).ok
    ws = await open_upgrade(server.port, ns, session.session_id)
    ack = await ws.wait_for(lambda entry: entry.is_control, timeout=5)
    assert ack.message == SWITCH_ACK, ack.text
    await ws.ping()
    await ws.close()
    assert (await session.aput("/stay", 2)).ok
    assert (await session.aget("/stay")).data == 2
    assert not session.ended and not session.protocol_errors, session.protocol_errors
