"""Replays the spec's example exchanges (fixtures/*.json, from wire-protocol.md §13) against a fresh server.

Fixture format (one JSON object per file):

* ``server_args``: extra ``canopy serve`` flags (``<<secret>>`` is the HS256 test secret); ``tokens``: HS256 ID
  tokens to mint, ``{name: {"claims": {...}, "lifetime": seconds}}``; ``seed``: ``[{"path", "data"}]`` written before
  the exchange by a separate connection; ``rules``: a rules document the server enforces; ``skip``: a reason not to
  run it.
* ``steps``, in order: ``{"client", "connect": {"params"}}`` opens ``/.ws?<params>``;
  ``{"client", "send": frame}`` sends one raw text frame; ``{"client", "send_split": message}`` sends a message
  split per §2.1 (``expect_frames`` lists the count frame and the piece lengths it must produce);
  ``{"client", "expect": frame, "match": "exact"|"json", "optional", "timeout"}`` requires the client's next
  message to be that frame; ``{"client", "expect_any": [frames]}`` one of several; ``{"client", "abort"}`` resets
  the TCP connection without a close frame; ``{"client", "close"}`` closes cleanly; ``{"event"}`` is narrative;
  ``assert_different`` / ``assert_order`` compare bound values.
* Placeholders: ``<<host>>`` is the ``Host`` the client sent; ``<<ts>>`` an integer within a minute of now;
  ``<<session:NAME>>`` any session id, bound to NAME; ``<<server_time:NAME>>`` a millisecond time within the
  exchange, equal wherever NAME recurs; ``<<any>>`` any JSON value; in sent text ``<<token:NAME>>``,
  ``<<var:NAME>>`` (a bound value) and ``<<fill:C:N>>`` (N copies of C).

"exact" compares the text byte for byte (placeholders aside); "json" compares parsed JSON (member order inside
data objects may differ — Canopy writes members in Firebase key order). Messages are compared per client in order;
messages to different clients are independent. At the end every open client must have nothing left unread: a ping
is sent and the pong must be the next message.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

import firebase_model as model
import tokens as token_mint
from firebase_wire import WireClient, split_for_wire

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
SECRET = "canopy-fixture-secret-0123456789abcdef"
PLACEHOLDER = re.compile(r"<<([a-z_]+)(?::([^>]*))?>>")
STEP_TIMEOUT = 5.0


class Exchange:
    def __init__(self, fixture: dict, port: int):
        self.fixture = fixture
        self.port = port
        self.clients: dict[str, WireClient] = {}
        self.cursors: dict[str, int] = {}
        self.bound: dict[str, Any] = {}
        self.started_ms = int(time.time() * 1000)
        self.tokens = {
            name: token_mint.hs256(SECRET, dict(token_mint.claims(spec["claims"].get("sub", name),
                                                                 lifetime=spec.get("lifetime", 3600)),
                                                **spec["claims"]))
            for name, spec in fixture.get("tokens", {}).items()
        }

    # -- substitution and matching -----------------------------------------------------------------------------

    def substitute(self, text: str, client: str | None = None) -> str:
        def replace(match: re.Match) -> str:
            kind, argument = match.group(1), match.group(2)
            if kind == "token":
                return self.tokens[argument]
            if kind == "var":
                return str(self.bound[argument])
            if kind == "fill":
                char, count = argument.split(":")
                return char * int(count)
            if kind == "host":
                return f"127.0.0.1:{self.port}"
            return match.group(0)

        return PLACEHOLDER.sub(replace, text)

    def check_placeholder(self, kind: str, name: str | None, value: Any, where: str) -> None:
        now = int(time.time() * 1000)
        if kind == "any":
            return
        if kind == "ts":
            assert type(value) is int and abs(value - now) < 60_000, f"{where}: ts {value!r}"
            return
        if kind == "session":
            assert isinstance(value, str) and value, f"{where}: session id {value!r}"
        elif kind == "server_time":
            assert type(value) is int and self.started_ms - 2000 <= value <= now + 2000, \
                f"{where}: server time {value!r} outside the exchange [{self.started_ms}, {now}]"
        else:
            raise AssertionError(f"unknown placeholder <<{kind}>>")
        if name:
            if name in self.bound:
                assert self.bound[name] == value, f"{where}: <<{kind}:{name}>> was {self.bound[name]!r}, now {value!r}"
            self.bound[name] = value

    def matches_exact(self, expected: str, actual: str, where: str) -> bool:
        expected = self.substitute(expected)
        pattern, groups, position = "", [], 0
        for match in PLACEHOLDER.finditer(expected):
            pattern += re.escape(expected[position:match.start()])
            kind = match.group(1)
            pattern += {"ts": r"(-?\d+)", "server_time": r"(-?\d+)", "session": r'([^"\\]+)'}.get(kind, r"(.+?)")
            groups.append((kind, match.group(2)))
            position = match.end()
        pattern += re.escape(expected[position:])
        found = re.fullmatch(pattern, actual, re.S)
        if not found:
            return False
        for (kind, name), text in zip(groups, found.groups()):
            value = text if kind == "session" else json.loads(text)
            self.check_placeholder(kind, name, value, where)
        return True

    def matches_json(self, expected: str, actual: str, where: str) -> bool:
        quoted = re.sub(r'(?<!")(<<[a-z_]+(?::[^>]*)?>>)', r'"\1"', self.substitute(expected))
        try:
            parsed = json.loads(actual)
        except ValueError:
            return False
        checks: list[tuple[str, str | None, Any]] = []
        if not self._json_equal(json.loads(quoted), parsed, checks):
            return False
        for kind, name, value in checks:
            self.check_placeholder(kind, name, value, where)
        return True

    def _json_equal(self, expected: Any, actual: Any, checks: list) -> bool:
        if isinstance(expected, str):
            placeholder = PLACEHOLDER.fullmatch(expected)
            if placeholder:
                checks.append((placeholder.group(1), placeholder.group(2), actual))
                return True
            return expected == actual
        if isinstance(expected, dict):
            return (isinstance(actual, dict) and expected.keys() == actual.keys()
                    and all(self._json_equal(expected[key], actual[key], checks) for key in expected))
        if isinstance(expected, list):
            return (isinstance(actual, list) and len(expected) == len(actual)
                    and all(self._json_equal(e, a, checks) for e, a in zip(expected, actual)))
        if isinstance(expected, bool) or isinstance(actual, bool) or expected is None or actual is None:
            return expected is actual or (type(expected) is type(actual) and expected == actual)
        return model.nodes_equal(expected, actual)

    def matches(self, step: dict, expected: str, actual: str, where: str) -> bool:
        bound_before = dict(self.bound)
        ok = (self.matches_json if step.get("match") == "json" else self.matches_exact)(expected, actual, where)
        if not ok:
            self.bound = bound_before
        return ok

    # -- steps -------------------------------------------------------------------------------------------------

    async def next_message(self, name: str, timeout: float) -> str | None:
        client = self.clients[name]
        index = self.cursors[name]
        deadline = time.monotonic() + timeout
        while len(client.log) <= index:
            if client.closed.is_set() or time.monotonic() > deadline:
                return None
            try:
                await client.wait_for(lambda entry: entry.seq == index, max(0.01, deadline - time.monotonic()),
                                      consume=False)
            except AssertionError:
                pass
        return client.log[index].text

    async def run_step(self, number: int, step: dict) -> None:
        where = f"{self.fixture['name']} step {number}"
        name = step.get("client")
        if "event" in step:
            return
        if "connect" in step:
            params = self.substitute(step["connect"]["params"])
            self.clients[name] = await WireClient.connect(self.port, params=params, wait_hello=False)
            self.cursors[name] = 0
            return
        if "assert_different" in step:
            first, second = step["assert_different"]
            assert self.bound[first] != self.bound[second], f"{where}: {first} and {second} are both {self.bound[first]!r}"
            return
        if "assert_order" in step:
            values = [self.bound[key] for key in step["assert_order"]]
            assert values == sorted(values), f"{where}: {step['assert_order']} = {values} out of order"
            return
        client = self.clients[name]
        if "send" in step:
            await client.send_frame(self.substitute(step["send"]))
        elif "send_split" in step:
            frames = split_for_wire(self.substitute(step["send_split"]))
            if "expect_frames" in step:
                shape = [frames[0]] + [model.utf16_length(frame) for frame in frames[1:]]
                assert shape == step["expect_frames"], f"{where}: split into {shape}"
            for frame in frames:
                await client.send_frame(frame)
        elif step.get("abort"):
            client.abort()
            await client.aclose()
            del self.clients[name]
        elif step.get("close"):
            await client.close()
            del self.clients[name]
        elif "expect" in step or "expect_any" in step:
            candidates = [step["expect"]] if "expect" in step else step["expect_any"]
            actual = await self.next_message(name, step.get("timeout", STEP_TIMEOUT))
            if actual is not None and any(self.matches(step, c, actual, where) for c in candidates):
                self.cursors[name] += 1
                return
            if step.get("optional"):
                return
            got = "nothing (closed)" if actual is None and client.closed.is_set() else (
                "nothing" if actual is None else actual[:2000])
            raise AssertionError(f"{where}: client {name} expected\n  {candidates[0][:2000]}"
                                 + "".join(f"\n  or {c[:2000]}" for c in candidates[1:]) + f"\ngot\n  {got}")
        else:
            raise AssertionError(f"{where}: unknown step {step}")

    async def finish(self) -> None:
        for name, client in list(self.clients.items()):
            if client.closed.is_set():
                continue
            await client.ping()
            leftover = [entry.text[:500] for entry in client.log[self.cursors[name]:]
                        if entry.control_type != "o"]
            assert not leftover, f"{self.fixture['name']}: client {name} got unexpected messages: {leftover}"
        for client in self.clients.values():
            await client.aclose()


async def seed(port: int, fixture: dict) -> None:
    if not fixture.get("seed"):
        return
    client = await WireClient.connect(port, params="v=5&ns=demo-app-default-rtdb")
    for item in fixture["seed"]:
        response = await client.put(item["path"], item["data"])
        assert response.ok, response.inbound.text
    await client.close()


@pytest.mark.timeout(40)
@pytest.mark.parametrize("path", FIXTURES, ids=[path.stem for path in FIXTURES])
async def test_spec_exchange(path: Path, start_server, tmp_path):
    fixture = json.loads(path.read_text())
    if fixture.get("skip"):
        pytest.skip(fixture["skip"])
    args = [arg.replace("<<secret>>", SECRET) for arg in fixture.get("server_args", [])]
    if "rules" in fixture:
        rules = tmp_path / "database.rules.json"
        rules.write_text(json.dumps(fixture["rules"]))
        args += ["--rules", str(rules)]
    server = start_server(*args)
    await seed(server.port, fixture)
    exchange = Exchange(fixture, server.port)
    try:
        for number, step in enumerate(fixture["steps"]):
            await exchange.run_step(number, step)
        await exchange.finish()
    finally:
        for client in exchange.clients.values():
            await client.aclose()


def test_fixtures_cover_the_spec_examples():
    names = [path.stem for path in FIXTURES]
    for number in range(1, 13):
        assert any(name.startswith(f"example-{number:02d}-") for name in names), number
    for path in FIXTURES:
        fixture = json.loads(path.read_text())
        assert fixture["name"] == path.stem and fixture["steps"], path
