"""The server side of the web console (``/.console/``) and of its admin surface, with stdlib HTTP clients and our
wire client: the files are served from memory with ETag, gzip and HEAD; a sign-in credential printed at start is
admin; and the admin credential and admin endpoints refuse requests made by other sites' web pages."""

from __future__ import annotations

import asyncio
import gzip
import json
import http.client
import re

import pytest

from firebase_wire import WireClient
from rest_client import ADMIN

INDEX = "<!doctype html><title>console</title><script type=module src=app.js></script>\n" + "<!-- pad -->" * 200
SCRIPT = "export const greeting = 'hello';\n" * 50


@pytest.fixture
def console_server(start_server, tmp_path):
    directory = tmp_path / "console"
    (directory / "js").mkdir(parents=True)
    (directory / "index.html").write_text(INDEX)
    (directory / "js" / "app.js").write_text(SCRIPT)
    (directory / ".hidden").write_text("secret")
    return start_server("--console-dir", str(directory), "--log-level", "notice")


def request(port: int, method: str, path: str, headers: dict[str, str] | None = None,
            body: bytes | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    response.data = response.read()  # type: ignore[attr-defined]
    connection.close()
    return response


def test_console_files_are_served_with_etag_gzip_and_conditional_get(console_server):
    port = console_server.port
    index = request(port, "GET", "/.console/")
    assert index.status == 200 and index.data.decode() == INDEX
    assert index.getheader("Content-Type") == "text/html; charset=utf-8"
    assert index.getheader("Cache-Control") == "no-cache" and index.getheader("X-Content-Type-Options") == "nosniff"
    etag = index.getheader("ETag")
    assert etag and etag.startswith('"')
    script = request(port, "GET", "/.console/js/app.js", {"Accept-Encoding": "gzip, deflate"})
    assert script.status == 200 and script.getheader("Content-Encoding") == "gzip"
    assert script.getheader("Content-Type") == "text/javascript; charset=utf-8"
    assert gzip.decompress(script.data).decode() == SCRIPT and len(script.data) < len(SCRIPT)
    assert request(port, "GET", "/.console/js/app.js", {"Accept-Encoding": "gzip;q=0"}).data.decode() == SCRIPT
    unchanged = request(port, "GET", "/.console/index.html", {"If-None-Match": etag})
    assert unchanged.status == 304 and unchanged.data == b"" and unchanged.getheader("ETag") == etag
    assert request(port, "GET", "/.console/index.html", {"If-None-Match": '"other"'}).status == 200
    moved = request(port, "GET", "/.console")
    assert moved.status == 301 and moved.getheader("Location") == "/.console/"
    for missing in ("/.console/nope.js", "/.console/.hidden", "/.console/../Package.swift", "/.console/js/../../x"):
        assert request(port, "GET", missing).status == 404, missing


def test_head_is_answered_like_get_without_the_body(console_server):
    """HEAD then GET pipelined on one connection: the HEAD's answer has the GET's headers and no body (the GET's
    answer follows at once), for a console file, a REST read and the health check."""
    port = console_server.port
    for path in ("/.console/js/app.js", "/head-test.json", "/.health"):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("HEAD", path, headers={"Authorization": ADMIN["Authorization"]})
        head = connection.getresponse()
        head_body = head.read()
        connection.request("GET", path, headers={"Authorization": ADMIN["Authorization"]})
        get = connection.getresponse()
        body = get.read()
        connection.close()
        assert head.status == get.status == 200, path
        assert head_body == b"", path
        assert int(head.getheader("Content-Length")) == len(body), path
        assert head.getheader("Content-Type") == get.getheader("Content-Type"), path


def console_credential(server) -> str:
    match = re.search(r"/\.console/#token=([0-9a-f]+)", server.log_tail(20_000))
    assert match, f"no console link in the log: {server.log_tail()}"
    return match.group(1)


def test_the_printed_console_link_carries_an_admin_credential(console_server):
    port = console_server.port
    token = console_credential(console_server)
    assert len(token) >= 32
    denied = request(port, "GET", "/.settings/rules.json", {"Authorization": "Bearer not-it"})
    assert denied.status == 401
    allowed = request(port, "GET", "/.settings/rules.json", {"Authorization": f"Bearer {token}"})
    assert allowed.status == 200, allowed.data


CROSS_SITE = [
    {"Origin": "https://evil.example"},
    {"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
]


@pytest.mark.parametrize("browser", CROSS_SITE, ids=["origin", "same-site", "null-origin", "sec-fetch-site"])
def test_other_sites_pages_cannot_use_the_admin_credential(console_server, browser):
    """A page of another site sends the emulator's `owner` (or the console's credential): data reads and writes, the
    rules endpoint and rule replacement are refused with 403, nothing is written, and no CORS grant is given."""
    port = console_server.port
    for token in ("owner", console_credential(console_server)):
        headers = {**browser, "Authorization": f"Bearer {token}"}
        for method, path, body in (("GET", "/.json", None), ("PUT", "/stolen.json", b'"x"'),
                                   ("GET", "/.settings/rules.json", None),
                                   ("PUT", "/.settings/rules.json", b'{"rules":{".read":true}}'),
                                   ("GET", "/.inspect/databases.json", None)):
            response = request(port, method, path, headers, body)
            assert response.status == 403, (method, path, response.status, response.data)
            if path.startswith("/.settings") or path.startswith("/.inspect"):
                assert response.getheader("Access-Control-Allow-Origin") is None
    assert request(port, "GET", "/stolen.json", {"Authorization": "Bearer owner"}).data == b"null"
    preflight = request(port, "OPTIONS", "/.settings/rules.json",
                        {"Origin": "https://evil.example", "Access-Control-Request-Method": "PUT"})
    assert preflight.getheader("Access-Control-Allow-Origin") is None


def test_the_same_origin_and_programs_keep_the_admin_credential(console_server):
    port = console_server.port
    for headers in ({}, {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"},
                    {"Origin": f"http://127.0.0.1:{port}"}, {"Sec-Fetch-Site": "none"}):
        response = request(port, "PUT", "/mine.json", {**headers, "Authorization": "Bearer owner"}, b"1")
        assert response.status == 200, (headers, response.data)
    # A page of another site may still read and write as any client does, under the rules (open here).
    response = request(port, "GET", "/mine.json", {"Origin": "https://app.example"})
    assert response.status == 200 and response.data == b"1"


async def test_a_websocket_opened_by_another_site_cannot_authenticate_as_admin(console_server):
    port = console_server.port
    foreign = await WireClient.connect(port, "default", headers={"Origin": "https://evil.example"})
    try:
        refused = await foreign.auth("owner")
        assert refused.status == "permission_denied", refused
    finally:
        await foreign.close()
    own = await WireClient.connect(port, "default", headers={"Origin": f"http://127.0.0.1:{port}"})
    try:
        accepted = await own.auth("owner")
        assert accepted.status == "ok", accepted
    finally:
        await own.close()


def post_json(port: int, path: str, document, token: str = "owner") -> tuple[int, dict]:
    response = request(port, "POST", path, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                       json.dumps(document).encode())
    return response.status, json.loads(response.data)


RULES = {"rules": {"rooms": {"$room": {
    ".read": "auth != null",
    ".write": "auth != null && auth.uid == newData.child('owner').val()",
    "title": {".validate": "newData.isString() && newData.val().length < 20"},
}}}}


def test_the_simulator_decides_with_a_trace_and_never_writes(console_server):
    """Given rules text, the namespace's own data (none given) and three operations, the simulator answers each
    decision with the trace of every rule tried, each at its line in the rules text; the data is unchanged."""
    port = console_server.port
    assert request(port, "PUT", "/rooms/lobby.json?ns=sim", {"Authorization": "Bearer owner"},
                   b'{"owner":"alice","title":"Lobby"}').status == 200
    status, answer = post_json(port, "/.settings/simulate.json?ns=sim", {
        "rules": RULES,
        "cases": [
            {"operation": "read", "path": "/rooms/lobby", "auth": {"uid": "bob"}},
            {"operation": "read", "path": "/rooms/lobby", "auth": None},
            {"operation": "set", "path": "/rooms/lobby/title", "value": "a title far too long to pass",
             "auth": {"uid": "alice"}},
            {"name": "owner renames", "operation": "update", "path": "/rooms/lobby", "value": {"title": "Hall"},
             "auth": {"uid": "alice"}},
        ]})
    assert status == 200, answer
    results = answer["results"]
    assert [result["allowed"] for result in results] == [True, False, False, True], results
    assert results[3]["name"] == "owner renames"
    read_rule = results[0]["trace"][0]
    assert read_rule["rule"] == "/rooms/$room/.read" and read_rule["outcome"] == "true"
    assert read_rule["location"] == "/rooms/lobby" and read_rule["expression"] == "auth != null"
    # Every traced rule names its line and column in the rules text the server compiled.
    assert all("line" in step and "column" in step for result in results for step in result["trace"])
    validate = [step for step in results[2]["trace"] if step["kind"] == ".validate"]
    assert validate and validate[0]["outcome"] == "false", results[2]
    stored = request(port, "GET", "/rooms/lobby/title.json?ns=sim", {"Authorization": "Bearer owner"})
    assert json.loads(stored.data) == "Lobby"


def test_the_simulator_uses_the_rules_in_force_and_refuses_bad_rules_with_their_positions(console_server):
    port = console_server.port
    status, answer = post_json(port, "/.settings/simulate.json", {"cases": [{"operation": "set", "path": "/a",
                                                                            "value": 1}]})
    assert status == 200 and answer["results"][0]["allowed"] is True  # no rules in force: open
    broken = '{"rules": {".read": "auth != null &&", ".write": false}}'
    response = request(port, "POST", "/.settings/simulate.json", {"Authorization": "Bearer owner"},
                       ('{"rules": ' + json.dumps(json.loads(broken)["rules"]) + ', "cases": []}').encode())
    assert response.status == 400, response.data
    multiline = '{\n  "rules": {\n    ".read": "auth != null &&",\n    ".write": false\n  }\n}'
    rejected = request(port, "PUT", "/.settings/rules.json", {"Authorization": "Bearer owner"}, multiline.encode())
    assert rejected.status == 400, rejected.data
    diagnostics = json.loads(rejected.data)["diagnostics"]
    assert diagnostics and diagnostics[0]["line"] == 3 and diagnostics[0]["column"] > 14, diagnostics
    assert diagnostics[0]["rule"] == "/.read", diagnostics
    assert request(port, "POST", "/.settings/simulate.json", {"Authorization": "Bearer nobody"}, b"{}").status == 401
    assert request(port, "POST", "/.settings/simulate.json",
                   {"Authorization": "Bearer owner", "Origin": "https://evil.example"}, b"{}").status == 403


async def test_connections_are_listed_with_their_identity_and_listens(console_server):
    port = console_server.port
    watcher = await WireClient.connect(port, "inspected")
    admin = await WireClient.connect(port, "inspected")
    try:
        await watcher.listen("/rooms/lobby")
        await watcher.listen("/scores", {"i": ".value", "l": 3, "vf": "r"}, tag=1)
        assert (await admin.auth("owner")).status == "ok"
        response = request(port, "GET", "/.inspect/connections.json", {"Authorization": "Bearer owner"})
        assert response.status == 200, response.data
        listed = json.loads(response.data)
        ours = [entry for entry in listed["connections"] if entry["namespace"] == "inspected"]
        assert listed["total"] >= 2 and len(ours) == 2, listed
        by_auth = {json.dumps(entry["auth"]): entry for entry in ours}
        assert set(by_auth) == {"null", '"admin"'}, by_auth
        assert by_auth["null"]["listens"] == [
            {"path": "/rooms/lobby", "query": None},
            {"path": "/scores", "query": {"i": ".value", "l": 3, "vf": "r"}},
        ], by_auth["null"]
    finally:
        await watcher.close()
        await admin.close()


async def test_figures_history_samples_live_rates_every_second(console_server):
    """Writes and a listener's deliveries over ~3 s show up as per-second rates in the figures' samples."""
    port = console_server.port
    listener = await WireClient.connect(port, "figures")
    writer = await WireClient.connect(port, "figures")
    try:
        await listener.listen("/counter")
        deadline = asyncio.get_running_loop().time() + 3.5
        count = 0
        while asyncio.get_running_loop().time() < deadline:
            await writer.put("/counter", count)
            count += 1
        samples = []
        for _ in range(40):  # the sampler runs each second: wait for the one after the writes
            answer = json.loads(request(port, "GET", "/.inspect/figures.json", {"Authorization": "Bearer owner"}).data)
            samples = answer["samples"]
            if sum(sample["writesPerSecond"] for sample in samples) >= count:
                break
            await asyncio.sleep(0.25)
        assert answer["intervalSeconds"] == 1
        assert sum(sample["writesPerSecond"] for sample in samples) >= count, samples
        # One listener: at most one delivery a write, and its initial data (a push can carry several writes when
        # the listener falls behind).
        assert 0 < sum(sample["deliveriesPerSecond"] for sample in samples) <= count + 1, samples
        assert max(sample["bytesOutPerSecond"] for sample in samples) > 0
        assert samples[-1]["connections"] >= 2 and samples[-1]["listens"] >= 1 and samples[-1]["views"] >= 1
        times = [sample["time"] for sample in samples]
        assert times == sorted(times)
    finally:
        await listener.close()
        await writer.close()


def test_rule_evaluations_stream_live_with_traces_only_while_watched(start_server, tmp_path):
    """With rules, a watcher of /.inspect/evaluations (EventSource style: the credential in `auth`) gets each
    evaluation as a server-sent event: a denied REST write by an unauthenticated client and an allowed read, each
    with its trace and the rule's line; before anyone watched, nothing was kept."""
    rules = tmp_path / "rules.json"
    rules.write_text('{\n  "rules": {\n    ".read": true,\n    "locked": {\n      ".write": "auth != null"\n    }\n  }\n}\n')
    server = start_server("--rules", str(rules), "--console-dir", str(tmp_path))
    port = server.port
    assert request(port, "PUT", "/locked/a.json", body=b"1").status == 401  # nobody watching yet
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/.inspect/evaluations?auth=owner", headers={"Sec-Fetch-Site": "same-origin"})
    stream = connection.getresponse()
    assert stream.status == 200 and stream.getheader("Content-Type").startswith("text/event-stream")
    events = []

    def next_event() -> dict:
        while True:
            line = stream.fp.readline()
            assert line, "the stream ended"
            text = line.decode().strip()
            if text.startswith("data: "):
                return json.loads(text[len("data: "):])

    try:
        assert request(port, "PUT", "/locked/b.json", body=b"2").status == 401
        denied = next_event()
        assert request(port, "GET", "/open.json").status == 200
        allowed = next_event()
        events = [denied, allowed]
    finally:
        connection.close()
    assert denied["operation"] == "set" and denied["path"] == "/locked/b" and denied["allowed"] is False, denied
    assert denied["auth"] is None and denied["namespace"] == "default", denied
    write_rule = [step for step in denied["trace"] if step["rule"] == "/locked/.write"]
    assert write_rule and write_rule[0]["outcome"] == "false" and write_rule[0]["line"] == 5, denied
    assert allowed["operation"] == "read" and allowed["allowed"] is True and allowed["path"] == "/open", allowed
    assert all(event["path"] != "/locked/a" for event in events)
    refused = request(port, "GET", "/.inspect/evaluations?auth=owner", {"Origin": "https://evil.example"})
    assert refused.status == 403


async def test_a_coalescing_connection_gets_the_latest_data_per_interval_not_every_write(console_server):
    """`coalesce=200` (what the console asks for): 400 writes in about a second reach a plain listener one push
    each, but the coalescing listener a handful of pushes, the last of them holding the final value."""
    port = console_server.port
    plain = await WireClient.connect(port, "coalesced")
    console = await WireClient.connect(port, params="v=5&ns=coalesced&coalesce=200")
    writer = await WireClient.connect(port, "coalesced")
    try:
        plain_view, _ = await plain.listen("/busy")
        console_view, _ = await console.listen("/busy")
        for value in range(400):
            await writer.put("/busy/value", value)
        await plain.sync()
        for _ in range(100):  # the held-back data follows within one interval
            if console_view.cache == {"value": 399}:
                break
            await asyncio.sleep(0.05)
        assert console_view.cache == {"value": 399}, console_view.cache
        assert plain_view.cache == {"value": 399}
        assert len(plain_view.history) >= 400, len(plain_view.history)
        assert len(console_view.history) < 40, len(console_view.history)
        # The coalesced pushes count as deliveries in the figures (and nothing more).
        for _ in range(40):
            samples = json.loads(request(port, "GET", "/.inspect/figures.json",
                                         {"Authorization": "Bearer owner"}).data)["samples"]
            delivered = sum(sample["deliveriesPerSecond"] for sample in samples)
            if delivered >= 400 + len(console_view.history) - 1:
                break
            await asyncio.sleep(0.25)
        assert 400 + len(console_view.history) - 1 <= delivered <= 400 + len(console_view.history) + 2, samples
    finally:
        for client in (plain, console, writer):
            await client.close()


def test_the_simulator_takes_rules_text_and_leaves_the_coverage_of_the_rules_in_force_alone(start_server, tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text('{"rules": {".read": true, "locked": {".write": "auth != null"}}}')
    server = start_server("--rules", str(rules), "--console-dir", str(tmp_path))
    port = server.port

    def coverage() -> list:
        return json.loads(request(port, "GET", "/.inspect/coverage.json", {"Authorization": "Bearer owner"}).data)

    before = coverage()
    status, answer = post_json(port, "/.settings/simulate.json", {"cases": [
        {"operation": "set", "path": "/locked/x", "value": 1, "auth": None}]})
    assert status == 200 and answer["results"][0]["allowed"] is False, answer
    assert coverage() == before
    text = '{\n  // the text as written, comments and all\n  "rules": {\n    ".write": "auth.uid == \'ada\'"\n  }\n}\n'
    status, answer = post_json(port, "/.settings/simulate.json", {"rules": text, "cases": [
        {"operation": "set", "path": "/a", "value": 1, "auth": {"uid": "ada"}}]})
    assert status == 200, answer
    step = answer["results"][0]["trace"][0]
    assert answer["results"][0]["allowed"] is True and step["line"] == 4 and step["column"] > 10, answer
