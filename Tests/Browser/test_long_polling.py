"""The long-polling transport (``/.lp``) and its upgrade to WebSocket, from a real browser page.

The page (``fixtures/longpoll``) is served from another origin than the server and drives the server with our own
client (``client.js``), which uses ``/.lp`` the way docs/protocol/long-polling.md says the Firebase JS SDK does:
script tags in a hidden iframe, numbered answers run in order, the disconnect frame, the upgrade of §7, and
reconnection with backoff. Other clients (REST, a ``websockets`` wire client) check what the server did.
"""

from __future__ import annotations

import importlib.util
import json
import threading
import time
import uuid
from pathlib import Path

import pytest

from longpoll_support import (
    PageOrigin, RestWriter, Server, WireClient, assert_clean, connect, listen, open_page, poll_until, summary, view,
    wait_js, wait_value,
)


def _load_tokens():
    """Tests/Python/tokens.py (minting test JWTs), loaded by path so nothing else of Tests/Python is importable."""
    path = Path(__file__).resolve().parents[1] / "Python" / "tokens.py"
    spec = importlib.util.spec_from_file_location("canopy_test_tokens", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tokens = _load_tokens()

AUTH_SECRET = "canopy-long-polling-browser-test-secret-0123456789"  # ≥ 32 bytes

SECURED_RULES = json.dumps({
    "rules": {
        ".read": True,
        "open": {".write": True},
        "locked": {".write": False},
        "secure": {".write": "auth.uid == 'alice'"},
    }
}, indent=2)


# -- fixtures -----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def origin():
    served = PageOrigin().start()
    yield served
    served.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Open data (no rules file)."""
    process = Server(tmp_path_factory.mktemp("canopy-lp")).start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """``SECURED_RULES`` and HS256 tokens signed with ``AUTH_SECRET``."""
    process = Server(tmp_path_factory.mktemp("canopy-lp-secured"), rules=SECURED_RULES,
                     extra_args=("--auth-secret", AUTH_SECRET)).start()
    yield process
    process.stop()


@pytest.fixture
def restartable(tmp_path):
    process = Server(tmp_path).start()
    yield process
    process.stop()


@pytest.fixture
def lp_page(page, origin):
    open_page(page, origin)
    return page


def long_poll_stats(state: dict) -> list[dict]:
    return [t for t in state["transports"] if t["kind"] == "long-polling"]


# -- a) a session carried by long polling only ---------------------------------------------------------------------

def test_a_write_over_long_polling_reaches_other_clients(lp_page, server, ns):
    page = lp_page
    state = connect(page, server, ns, transport="long-polling")
    assert state["transport"] == "long-polling"
    session = state["sessionId"]
    entry = server.connection(session)
    assert entry is not None, f"session {session} missing from /.inspect/connections.json: {server.connections()}"
    assert entry["transport"] == "long-polling" and entry["namespace"] == ns

    with WireClient(server.port, ns) as other:
        assert other.listen("/greeting")["s"] == "ok"
        answer = page.evaluate("() => lp.set('greeting', {text: 'hello', n: 1})")
        assert answer["status"] == "ok", answer
        other.wait_for_push(lambda push: push["b"]["p"] == "/greeting" and push["b"]["d"] == {"text": "hello", "n": 1})
    assert server.get(ns, "greeting") == {"text": "hello", "n": 1}

    # A message of many segments (non-ASCII text, so base64 of UTF-8 over several requests).
    big = "grüße ✓ 漢字 " * 600
    assert page.evaluate("v => lp.set('big', v)", big)["status"] == "ok"
    assert server.get(ns, "big") == big

    # Pushes come back over the long poll too.
    greeting = listen(page, "greeting")
    server.put(ns, "greeting/text", "changed by REST")
    wait_value(page, greeting, {"text": "changed by REST", "n": 1})

    state = assert_clean(page)
    polls = long_poll_stats(state)
    assert len(polls) == 1, polls
    stats = polls[0]
    assert stats["multiSegmentMessages"] >= 1 and stats["maxRequestDataChars"] <= 1870, stats
    assert state["transport"] == "long-polling" and state["upgrades"] == 0 and state["connects"] == 1, state
    assert state["pushes"].get("websocket", 0) == 0
    assert server.connection(session)["transport"] == "long-polling"


def test_a_push_ids_arrive_in_key_order(lp_page, server, ns):
    page = lp_page
    connect(page, server, ns, transport="long-polling")
    children = listen(page, "list")
    # Fifty pushes sent at once: segments travel in up to two requests at a time.
    results = page.evaluate("""async () => {
        const sent = [];
        for (let i = 0; i < 50; i++) sent.push(lp.push('list', {n: i}));
        return (await Promise.all(sent)).map(r => [r.key, r.status]);
    }""")
    keys = [key for key, _ in results]
    assert all(status == "ok" for _, status in results), results
    assert keys == sorted(keys) and len(set(keys)) == 50
    wait_js(page, "id => lp.view(id).added.length >= 50", children, what="50 child adds")
    assert view(page, children)["added"] == keys
    stored = server.get(ns, "list")
    assert [stored[key]["n"] for key in keys] == list(range(50))
    assert_clean(page)


def test_a_limit_to_last_window_follows_changes(lp_page, server, ns):
    page = lp_page
    server.put(ns, "items", {"a": 1, "b": 2, "c": 3, "d": 4})
    connect(page, server, ns, transport="long-polling")
    window = listen(page, "items", limitToLast=3)
    windows = [{"b": 2, "c": 3, "d": 4}]
    wait_value(page, window, windows[-1])

    server.put(ns, "items/e", 5)
    windows.append({"c": 3, "d": 4, "e": 5})
    wait_value(page, window, windows[-1])

    server.delete(ns, "items/e")
    windows.append({"b": 2, "c": 3, "d": 4})
    wait_value(page, window, windows[-1])

    assert page.evaluate("() => lp.set('items/f', 6)")["status"] == "ok"
    windows.append({"c": 3, "d": 4, "f": 6})
    wait_value(page, window, windows[-1])

    assert page.evaluate("() => lp.update('items', {c: null, g: 7})")["status"] == "ok"
    windows.append({"d": 4, "f": 6, "g": 7})
    wait_value(page, window, windows[-1])

    server.put(ns, "items/d", 40)
    windows.append({"d": 40, "f": 6, "g": 7})
    wait_value(page, window, windows[-1])

    seen = view(page, window)["values"]
    position = 0
    for value in seen:
        if position < len(windows) and value == windows[position]:
            position += 1
    assert position == len(windows), f"windows {windows} not seen in order in {seen}"
    assert_clean(page)


def test_a_transaction_counts_exactly_beside_rest_increments(lp_page, server, ns):
    page = lp_page
    server.put(ns, "counter", 0)
    connect(page, server, ns, transport="long-polling")
    rounds = 30

    def rest_increments() -> None:
        writer = RestWriter(server, ns)
        try:
            for _ in range(rounds):
                writer.put("counter", {".sv": {"increment": 1}})
                time.sleep(0.005)  # pacing, so the increments interleave with the page's transactions
        finally:
            writer.close()

    thread = threading.Thread(target=rest_increments)
    thread.start()
    results = page.evaluate("""async (rounds) => {
        const out = [];
        for (let i = 0; i < rounds; i++) out.push(await lp.transaction('counter', v => (v || 0) + 1));
        return out;
    }""", rounds)
    thread.join(30)
    assert not thread.is_alive()
    assert all(result["committed"] for result in results), [r for r in results if not r["committed"]]
    # Each transaction starts on a fresh listen, so its first put carries the empty hash and is answered datastale.
    assert any(result["attempts"] > 1 for result in results), results
    assert server.get(ns, "counter") == 2 * rounds
    assert_clean(page)


def test_a_server_timestamp(lp_page, server, ns):
    page = lp_page
    connect(page, server, ns, transport="long-polling")
    stamp = listen(page, "stamp")
    before = time.time() * 1000
    assert page.evaluate("() => lp.set('stamp', lp.TIMESTAMP)")["status"] == "ok"
    after = time.time() * 1000
    stored = server.get(ns, "stamp")
    assert isinstance(stored, int), stored
    assert before - 5000 <= stored <= after + 5000, (before, stored, after)
    wait_js(page, "id => typeof lp.view(id).value === 'number'", stamp, what="the resolved timestamp")
    assert view(page, stamp)["value"] == stored
    assert_clean(page)


def test_a_denied_write(lp_page, secured, ns):
    page = lp_page
    connect(page, secured, ns, transport="long-polling")
    answer = page.evaluate("() => lp.set('locked/x', 1)")
    assert answer["status"] == "permission_denied", answer
    assert secured.get(ns, "locked/x") is None
    # The session goes on after a denial.
    assert page.evaluate("() => lp.set('open/x', 2)")["status"] == "ok"
    assert secured.get(ns, "open/x") == 2
    assert_clean(page)


def test_a_on_disconnect_fires_when_the_page_closes(page, origin, server, ns):
    # A page of its own: the fixture's page stays open for its screenshot.
    closing = page.context.new_page()
    open_page(closing, origin)
    state = connect(closing, server, ns, transport="long-polling")
    session = state["sessionId"]
    assert closing.evaluate("() => lp.set('presence/alice', 'online')")["status"] == "ok"
    assert closing.evaluate("() => lp.onDisconnectSet('presence/alice', 'offline')")["status"] == "ok"
    assert closing.evaluate("() => lp.onDisconnectSet('presence/lastSeen', lp.TIMESTAMP)")["status"] == "ok"
    wait_js(closing, "() => document.querySelectorAll('iframe[src*=\"dframe=t\"]').length === 1",
            what="the disconnect frame")
    assert_clean(closing)
    closed_at = time.time() * 1000
    closing.close()

    value, seconds = poll_until(lambda: server.get(ns, "presence/alice") == "offline", timeout=5.0)
    if not value:
        # Tell a missing beacon apart from no onDisconnect at all: the idle expiry (30 s) should still run it.
        late, more = poll_until(lambda: server.get(ns, "presence/alice") == "offline", timeout=35.0, interval=0.5)
        pytest.fail(f"onDisconnect value not written within 5 s of page.close() (the dframe beacon); "
                    f"{'written after ' + format(5 + more, '.1f') + ' s (idle expiry)' if late else 'never written'}; "
                    f"session {session} still listed: {server.connection(session) is not None}")
    last_seen = server.get(ns, "presence/lastSeen")
    assert isinstance(last_seen, int) and last_seen >= closed_at - 2000, (last_seen, closed_at)
    assert server.connection(session) is None, f"session {session} still listed after its page closed"


def test_a_auth_with_a_token(page, origin, secured, ns):
    alice = tokens.hs256(AUTH_SECRET, tokens.claims("alice"))
    open_page(page, origin)
    state = connect(page, secured, ns, transport="long-polling", token=alice)
    wait_js(page, "() => lp.authResults.length === 1", what="the auth answer")
    assert summary(page)["authResults"][0]["status"] == "ok", summary(page)["authResults"]
    assert page.evaluate("() => lp.set('secure/note', 'from alice')")["status"] == "ok"
    assert secured.get(ns, "secure/note") == "from alice"
    entry = secured.connection(state["sessionId"])
    assert entry is not None and entry["transport"] == "long-polling"
    assert isinstance(entry["auth"], dict) and entry["auth"].get("uid") == "alice", entry

    # Another user on the same long-poll session is refused by the rules.
    bob = tokens.hs256(AUTH_SECRET, tokens.claims("bob"))
    assert page.evaluate("t => lp.auth(t)", bob)["status"] == "ok"
    answer = page.evaluate("() => lp.set('secure/note', 'from bob')")
    assert answer["status"] == "permission_denied", answer
    assert secured.get(ns, "secure/note") == "from alice"

    # A token signed with another secret is refused.
    forged = tokens.hs256("another-secret-of-at-least-32-bytes-length", tokens.claims("alice"))
    assert page.evaluate("t => lp.auth(t)", forged)["status"] != "ok"
    assert_clean(page)


def test_a_idle_session_outlives_the_hold_and_the_idle_timeout(lp_page, server, ns):
    """Nothing to send for 32 s: held polls are answered empty (20 s) and renewed, so the 30 s idle expiry never
    ends the session."""
    page = lp_page
    state = connect(page, server, ns, transport="long-polling")
    session = state["sessionId"]
    wait_js(page, "() => lp.transportStats[0].emptyPolls >= 1", timeout=27, what="a held poll answered empty")
    wait_js(page, "() => performance.now() - lp.hellos[0].at > 32000", timeout=40, what="32 s of idleness")
    stats = long_poll_stats(summary(page))[0]
    assert 15_000 <= stats["longestEmptyPollMs"] <= 25_000, stats
    assert page.evaluate("() => lp.set('still', 'here')")["status"] == "ok"
    assert server.get(ns, "still") == "here"
    state = assert_clean(page)
    assert state["connects"] == 1 and state["sessionId"] == session and state["transport"] == "long-polling", state
    assert server.connection(session)["transport"] == "long-polling"


# -- b) the upgrade to WebSocket under a stream of writes ---------------------------------------------------------

def test_b_upgrade_during_a_thousand_writes(lp_page, server, ns):
    page = lp_page
    page.evaluate("() => lp.previousWebSocketFailure(true)")  # what makes the SDK start on long polling
    state = connect(page, server, ns, upgrade="manual")
    assert state["transport"] == "long-polling", state
    session = state["hellos"][0]["s"]
    upgrades_before = server.metric("canopy_longpoll_upgrades_total")
    sequence = listen(page, "seq")
    total = 1000

    def writes() -> None:
        writer = RestWriter(server, ns)
        try:
            for number in range(1, total + 1):
                writer.put("seq", number)
                time.sleep(0.002)  # pacing: the writes span the upgrade
        finally:
            writer.close()

    thread = threading.Thread(target=writes)
    thread.start()
    try:
        wait_js(page, "id => lp.view(id).raw.length >= 100", sequence, timeout=20, what="100 values over long polling")
        assert page.evaluate("() => lp.upgrade()") is True
        wait_js(page, "() => lp.upgrades === 1", timeout=20, what="the upgrade")
        wait_js(page, "([id, n]) => lp.view(id).raw.some(p => p.d === n)", [sequence, total], timeout=60,
                what=f"value {total}")
    finally:
        thread.join(60)

    raw = view(page, sequence)["raw"]
    numbers = [push["d"] for push in raw if push["d"] is not None]
    duplicates = sorted({n for n in numbers if numbers.count(n) > 1})
    missing = sorted(set(range(1, total + 1)) - set(numbers))
    assert numbers == list(range(1, total + 1)), (
        f"values not exactly once in order: {len(numbers)} values, missing {missing[:20]}, duplicates "
        f"{duplicates[:20]}, first disorder at {next((i for i, n in enumerate(numbers) if n != i + 1), None)}")
    carriers = [push["via"] for push in raw if push["d"] is not None]
    switch = carriers.index("websocket")
    assert switch > 0 and set(carriers[:switch]) == {"long-polling"} and set(carriers[switch:]) == {"websocket"}, \
        "values must come over long polling first, then over the WebSocket only"

    print(f"upgrade: {switch} values over long polling, {total - switch} over the WebSocket")
    state = assert_clean(page)
    print("buffered on the WebSocket until n:", state["bufferedDuringUpgrade"],
          "long-poll stats:", long_poll_stats(state))
    assert state["transport"] == "websocket" and state["connects"] == 1 and len(state["hellos"]) == 1, state
    entry = server.connection(session)
    assert entry is not None, f"session {session} missing after the upgrade: {server.connections()}"
    assert entry["transport"] == "websocket", entry
    assert [listen_["path"] for listen_ in entry["listens"]] == ["/seq"], entry
    assert [c["transport"] for c in server.connections() if c["namespace"] == ns] == ["websocket"]
    assert server.metric("canopy_longpoll_upgrades_total") > upgrades_before
    # After the answer carrying `n` the long-poll side is closed by the server (§7.4).
    wait_js(page, "() => lp.retiredClosed.length === 1", timeout=30, what="the close of the long-poll side")
    # The session goes on over the WebSocket.
    assert page.evaluate("() => lp.set('after', 'upgrade')")["status"] == "ok"
    assert server.get(ns, "after") == "upgrade"
    assert server.connection(session)["transport"] == "websocket"


# -- c) a server restart ------------------------------------------------------------------------------------------

def round_trip(page, server, ns, echo: int, label: str) -> None:
    """A write from the page reaches REST, and a REST write reaches the page's listen ``echo``."""
    token = f"{label}-{uuid.uuid4().hex[:8]}"
    answer = page.evaluate("v => lp.set('roundtrip', v)", token)
    assert answer["status"] == "ok", answer
    assert server.get(ns, "roundtrip") == token
    server.put(ns, "echo", token)
    wait_value(page, echo, token)


def outage(page, server, ns, echo: int, seconds: float) -> dict:
    connects = summary(page)["connects"]
    server.stop()
    wait_js(page, "() => lp.state !== 'connected'", timeout=10, what="the page noticing the stop")
    time.sleep(seconds)  # the outage itself, not a synchronisation
    server.start()
    restarted = time.monotonic()
    wait_js(page, "n => lp.state === 'connected' && lp.connects > n", connects, timeout=15,
            what=f"a reconnection after a {seconds} s outage")
    round_trip(page, server, ns, echo, f"after-{seconds}s")
    took = time.monotonic() - restarted
    assert took <= 15, f"connected and round-tripped {took:.1f} s after the restart"
    return summary(page)


def test_c_restart_of_the_server(lp_page, origin, restartable, ns):
    page = lp_page
    server = restartable
    page.evaluate("() => lp.previousWebSocketFailure(true)")
    state = connect(page, server, ns)
    assert state["hellos"][0]["transport"] == "long-polling", state["hellos"]
    wait_js(page, "() => lp.transport === 'websocket'", timeout=15, what="the upgrade")
    echo = listen(page, "echo")
    round_trip(page, server, ns, echo, "before")

    after_short = outage(page, server, ns, echo, 1.0)
    after_long = outage(page, server, ns, echo, 10.0)
    for state in (after_short, after_long):
        assert not state["errors"] and not state["anomalies"], state

    page.reload()
    page.wait_for_function("() => window.lp && lp.state === 'idle'", timeout=10_000)
    reloaded = connect(page, server, ns)
    echo = listen(page, "echo")
    round_trip(page, server, ns, echo, "reloaded")
    assert_clean(page)
    print("hellos before reload:", [(h["transport"], h["s"][:6]) for h in after_long["hellos"]],
          "attempts:", after_long["attemptsLog"], "delays:", after_long["reconnectDelays"],
          "after reload:", reloaded["transport"])
