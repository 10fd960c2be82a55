"""A raw long-polling (``/.lp``) client for the tests, written from docs/protocol/long-polling.md.

It speaks the transport the way the JS SDK's ``BrowserPollConnection`` does, over ``http.client`` with one TCP
connection per request (as a page's ``<script>`` tags do):

* :meth:`LongPollSession.start` sends ``start=t`` and parses the JavaScript answer: the two callback definitions
  (with ``cb``), ``pLPCommand('start','<id>','<pw>')`` and the hello as ``pRTLPCB(0,[...])`` (§2);
* messages go out as the web-safe base64 (``-`` ``_``, padded with ``.``) of their UTF-8 JSON, cut into segments of
  at most 1,840 characters numbered from 0 across the session, packed into requests of about 1,870 characters of
  segment data (``seg<i>``, ``ts<i>``, ``d<i>``) (§3); raw and hostile segments and raw query strings can be sent too;
* every request is a poll: answers are parsed (``pRTLPCB(<n>,[...]);``, ``pLPCommand('close',<n>);``) and their
  messages are delivered in ``<n>`` order whatever order the answers arrived in, as the page does (§4, §5).

Requests run on threads. A poller thread keeps one bare poll outstanding (:meth:`start_polling`), or a test steps
the polls itself (:meth:`poll`, :meth:`hold_poll`). Everything that arrives is recorded under one condition
variable; :meth:`wait_for` waits for an observable state with a timeout. ``a``-prefixed methods are the same calls
for ``async def`` tests (run on this module's own thread pool, so blocking waits never starve the event loop's).
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import http.client
import json
import random
import re
import ssl
import string
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

SEGMENT_CHARS = 1840  # longest segment the SDK sends (MAX_URL_DATA_SIZE - some room)
REQUEST_DATA_CHARS = 1870  # segment characters the SDK packs into one request
DEFAULT_TIMEOUT = 10.0
HTTP_TIMEOUT = 40.0  # longer than a held poll (gateway.longPollHoldSeconds, 20 s by default)

_EXECUTOR = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="longpoll")

Params = list[tuple[str, str]]


class LongPollTimeout(AssertionError):
    """Something the test waited for did not arrive in time."""


# ---------------------------------------------------------------------------------------------------------------
# Encoding (§3)


def websafe_b64(data: bytes) -> str:
    """The SDK's web-safe base64: ``+`` → ``-``, ``/`` → ``_``, padding ``=`` → ``.``."""
    return base64.b64encode(data).decode("ascii").replace("+", "-").replace("/", "_").replace("=", ".")


def encode_message(message: Any) -> str:
    """The web-safe base64 of a message's compact UTF-8 JSON (a ``str`` is taken as the JSON text itself)."""
    text = message if isinstance(message, str) else json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    return websafe_b64(text.encode("utf-8"))


def cut(data: str, size: int = SEGMENT_CHARS) -> list[str]:
    return [data[index:index + size] for index in range(0, len(data), size)] or [""]


@dataclass
class Segment:
    """One segment: its number across the session, its message's segment count, its data (sent as written)."""

    number: int | str
    total: int | str
    data: str

    def params(self, index: int | str) -> Params:
        return [(f"seg{index}", str(self.number)), (f"ts{index}", str(self.total)), (f"d{index}", self.data)]


def segment_params(segments: Iterable[Segment], first_index: int = 0) -> Params:
    params: Params = []
    for offset, segment in enumerate(segments):
        params += segment.params(first_index + offset)
    return params


def pack(segments: list[Segment], limit: int = REQUEST_DATA_CHARS) -> list[list[Segment]]:
    """Groups segments into requests as the SDK does: add segments while the request's data is under ``limit``."""
    requests: list[list[Segment]] = []
    current: list[Segment] = []
    size = 0
    for segment in segments:
        if current and size + len(segment.data) > limit:
            requests.append(current)
            current, size = [], 0
        current.append(segment)
        size += len(segment.data)
    if current:
        requests.append(current)
    return requests


def random_serial() -> str:
    return str(random.randrange(100_000_000))


def query_string(params: Params) -> str:
    """``name=value`` pairs joined as written: the SDK does not percent-encode (the server decodes when encoded)."""
    return "&".join(f"{name}={value}" for name, value in params)


# ---------------------------------------------------------------------------------------------------------------
# Answers (§2, §4, §5)

_FUNCTION = re.compile(r"function\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)\s*\{([^{}]*)\}\s*;?")
_DATA = re.compile(r"pRTLPCB\((\d+),")
_STRING = re.compile(r"'((?:[^'\\]|\\.)*)'")
_NUMBER = re.compile(r"-?\d+")


@dataclass
class Command:
    """One statement of an answer: ``function`` (name, source), ``start`` (id, pw), ``data`` (n, messages),
    ``close`` (n) or another ``pLPCommand`` (its arguments)."""

    kind: str
    args: tuple


def parse_script(text: str) -> tuple[list[Command], list[str]]:
    """The statements of a long-poll answer, strictly: anything else is reported as an error."""
    commands: list[Command] = []
    errors: list[str] = []
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while position < len(text) and text[position] in " \t\r\n;":
            position += 1
        if position >= len(text):
            break
        if match := _FUNCTION.match(text, position):
            commands.append(Command("function", (match.group(1), match.group(0).strip())))
            position = match.end()
            continue
        if text.startswith("pLPCommand(", position):
            position += len("pLPCommand(")
            args: list[Any] = []
            while True:
                if match := _STRING.match(text, position):
                    args.append(match.group(1).replace("\\'", "'").replace("\\\\", "\\"))
                elif match := _NUMBER.match(text, position):
                    args.append(int(match.group(0)))
                else:
                    errors.append(f"unparsable pLPCommand argument at {position}: {text[position:position + 80]!r}")
                    return commands, errors
                position = match.end()
                if text.startswith(",", position):
                    position += 1
                    continue
                if text.startswith(")", position):
                    position += 1
                    break
                errors.append(f"unterminated pLPCommand at {position}: {text[position:position + 80]!r}")
                return commands, errors
            if args and args[0] == "start" and len(args) == 3:
                commands.append(Command("start", (args[1], args[2])))
            elif args and args[0] == "close" and len(args) == 2 and isinstance(args[1], int):
                commands.append(Command("close", (args[1],)))
            else:
                commands.append(Command("command", tuple(args)))
            continue
        if match := _DATA.match(text, position):
            try:
                messages, end = decoder.raw_decode(text, match.end())
            except ValueError as error:
                errors.append(f"pRTLPCB data is not JSON ({error}): {text[match.end():match.end() + 120]!r}")
                return commands, errors
            if not text.startswith(")", end) or not isinstance(messages, list):
                errors.append(f"malformed pRTLPCB at {position}: {text[position:position + 120]!r}")
                return commands, errors
            commands.append(Command("data", (int(match.group(1)), messages)))
            position = end + 1
            continue
        errors.append(f"unexpected text at {position}: {text[position:position + 120]!r}")
        break
    return commands, errors


@dataclass
class Answer:
    """One HTTP answer to a ``/.lp`` request."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    target: str
    elapsed: float
    commands: list[Command] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    @property
    def batches(self) -> list[tuple[int, list]]:
        return [command.args for command in self.commands if command.kind == "data"]

    @property
    def close(self) -> int | None:
        closes = [command.args[0] for command in self.commands if command.kind == "close"]
        return closes[-1] if closes else None

    @property
    def messages(self) -> list[Any]:
        return [message for _, batch in self.batches for message in batch]

    def describe(self) -> str:
        return f"{self.status} {self.reason} for {self.target[:200]}: {self.text[:600]!r}"


class Pending:
    """One request on its way (run on a thread): :meth:`wait` gives its :class:`Answer`."""

    def __init__(self, future: concurrent.futures.Future, target: str):
        self.future = future
        self.target = target

    def done(self) -> bool:
        return self.future.done()

    def wait(self, timeout: float = DEFAULT_TIMEOUT) -> Answer:
        try:
            return self.future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise LongPollTimeout(f"no answer to {self.target[:200]} within {timeout}s") from None

    async def await_(self, timeout: float = DEFAULT_TIMEOUT) -> Answer:
        return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, self.wait, timeout)


def wait_any(pendings: list[Pending], timeout: float = DEFAULT_TIMEOUT) -> Pending:
    """The first of ``pendings`` to be answered."""
    done, _ = concurrent.futures.wait([item.future for item in pendings], timeout,
                                      return_when=concurrent.futures.FIRST_COMPLETED)
    for item in pendings:
        if item.future in done:
            return item
    raise LongPollTimeout(f"none of {len(pendings)} requests was answered within {timeout}s")


def wait_unanswered(pendings: list[Pending], at_most: int, timeout: float = HTTP_TIMEOUT) -> None:
    """Waits until at most ``at_most`` of ``pendings`` are unanswered. The server holds one request of a session
    and answers the older when a newer arrives, so with ``at_most`` ≥ 1 this never waits for a held poll (waiting
    for one particular request could: it may have arrived last and be the held one)."""
    deadline = time.monotonic() + timeout
    while True:
        waiting = [item.future for item in pendings if not item.future.done()]
        if len(waiting) <= at_most:
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise LongPollTimeout(f"{len(waiting)} requests still unanswered after {timeout}s")
        concurrent.futures.wait(waiting, remaining, return_when=concurrent.futures.FIRST_COMPLETED)


@dataclass
class LPResponse:
    """The answer to one numbered request (``{"t":"d","d":{"r":r,"b":{"s":status,"d":data}}}``)."""

    r: int
    status: str
    data: Any
    message: dict

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def is_response(message: Any, r: int | None = None) -> bool:
    return (isinstance(message, dict) and message.get("t") == "d" and isinstance(message.get("d"), dict)
            and "r" in message["d"] and (r is None or message["d"]["r"] == r))


def is_push(message: Any, path: str | None = None, action: str | None = None) -> bool:
    if not (isinstance(message, dict) and message.get("t") == "d" and isinstance(message.get("d"), dict)):
        return False
    body = message["d"]
    if "r" in body or "a" not in body:
        return False
    pushed = body.get("b", {}).get("p")
    return (action is None or body["a"] == action) and (
        path is None or (isinstance(pushed, str) and pushed.strip("/") == path.strip("/")))


def control_type(message: Any) -> str | None:
    if isinstance(message, dict) and message.get("t") == "c" and isinstance(message.get("d"), dict):
        return message["d"].get("t")
    return None


def envelope(r: int, action: str, body: dict) -> dict:
    return {"t": "d", "d": {"r": r, "a": action, "b": body}}


# ---------------------------------------------------------------------------------------------------------------
# HTTP


class Endpoint:
    """Where the server is: host, port, and TLS (any certificate accepted) or not."""

    def __init__(self, port: int, host: str = "127.0.0.1", tls: bool = False):
        self.port = port
        self.host = host
        self.tls = tls

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method: str, target: str, headers: dict[str, str] | None = None, body: bytes | None = None,
                timeout: float = HTTP_TIMEOUT, parse: bool = True,
                connection: http.client.HTTPConnection | None = None) -> Answer:
        """One request on a connection of its own (or on ``connection``, kept open); the answer parsed as a
        long-poll script when it is one."""
        started = time.monotonic()
        own = connection is None
        connection = connection or self.connection(timeout)
        try:
            connection.request(method, target, body=body, headers=headers or {})
            response = connection.getresponse()
            data = response.read()
            answer = Answer(response.status, response.reason, list(response.getheaders()), data, target,
                            time.monotonic() - started)
        finally:
            if own:
                connection.close()
        content_type = (answer.header("Content-Type") or "").lower()
        if parse and answer.status == 200 and "javascript" in content_type:
            answer.commands, answer.errors = parse_script(answer.text)
        return answer

    def lp(self, params: Params | str, method: str = "GET", headers: dict[str, str] | None = None,
           body: bytes | None = None, timeout: float = HTTP_TIMEOUT,
           connection: http.client.HTTPConnection | None = None) -> Answer:
        query = params if isinstance(params, str) else query_string(params)
        return self.request(method, "/.lp?" + query, headers, body, timeout, connection=connection)


def lp_request(port: int, params: Params | str, *, tls: bool = False, method: str = "GET",
               headers: dict[str, str] | None = None, body: bytes | None = None,
               timeout: float = HTTP_TIMEOUT) -> Answer:
    """One ``/.lp`` request outside of any session object (unknown ids, raw starts)."""
    return Endpoint(port, tls=tls).lp(params, method, headers, body, timeout)


# ---------------------------------------------------------------------------------------------------------------
# Sessions


class LongPollSession:
    """One long-poll session: start, segments out, polls in, messages delivered in answer-number order."""

    def __init__(self, port: int, ns: str | None = "test", *, tls: bool = False, host: str = "127.0.0.1",
                 cb: str | None = "1", timeout: float = DEFAULT_TIMEOUT):
        self.endpoint = Endpoint(port, host, tls)
        self.ns = ns
        self.cb = cb
        self.timeout = timeout
        self.id: str | None = None
        self.pw: str | None = None
        self.hello: dict | None = None
        self.start_answer: Answer | None = None
        self.answers: list[Answer] = []  # every answer of this session's requests, in arrival order
        self.delivered: list[tuple[int, Any]] = []  # (answer number, message) in the order the page runs them
        self.protocol_errors: list[str] = []
        self.close_n: int | None = None
        self.ended_status: int | None = None  # a request of the session answered 404 (or another failure)
        self.next_seg = 0
        self.next_r = 1
        self._held: dict[int, list] = {}  # answers that arrived ahead of their turn
        self._next_n = 0
        self._seen_n: set[int] = set()
        self._condition = threading.Condition()
        self._poller: threading.Thread | None = None
        self._polling = False
        self._outstanding: list[Pending] = []
        self._segment_lock = threading.Lock()

    # -- starting ----------------------------------------------------------------------------------------------------

    def start_params(self, extra: Params | None = None) -> Params:
        params: Params = [("start", "t"), ("ser", random_serial())]
        if self.cb is not None:
            params.append(("cb", self.cb))
        params.append(("v", "5"))
        if self.ns is not None:
            params.append(("ns", self.ns))
        return params + list(extra or [])

    def start(self, *, headers: dict[str, str] | None = None, extra: Params | None = None,
              expect_hello: bool = True, refusable: bool = False,
              connection: http.client.HTTPConnection | None = None) -> Answer:
        """Sends the start request (on ``connection`` when given, a kept-alive one); records the id, password and
        hello (response 0). A refusal raises, or with ``refusable`` is returned (and the session has no id)."""
        answer = self.endpoint.lp(self.start_params(extra), headers=headers, timeout=self.timeout,
                                  connection=connection)
        self.start_answer = answer
        if answer.status != 200:
            if refusable:
                return answer
            raise AssertionError(f"start refused: {answer.describe()}")
        assert not answer.errors, f"start answer does not parse: {answer.errors}; {answer.text!r}"
        starts = [command.args for command in answer.commands if command.kind == "start"]
        assert len(starts) == 1, f"start answer without one start command: {answer.text!r}"
        self.id, self.pw = starts[0]
        self._ingest(answer)
        if expect_hello:
            first = answer.batches[0][1][0] if answer.batches and answer.batches[0][1] else None
            assert control_type(first) == "h", f"response 0 does not begin with the hello: {answer.text!r}"
            self.hello = first["d"]["d"]
        return answer

    @classmethod
    def open(cls, port: int, ns: str | None = "test", *, polling: bool = True, **kw: Any) -> "LongPollSession":
        """A started session, with its poller running unless ``polling`` is off."""
        headers = kw.pop("headers", None)
        session = cls(port, ns, **kw)
        session.start(headers=headers)
        if polling:
            session.start_polling()
        return session

    @classmethod
    async def aopen(cls, port: int, ns: str | None = "test", **kw: Any) -> "LongPollSession":
        return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, lambda: cls.open(port, ns, **kw))

    @property
    def session_id(self) -> str:
        """The hello's ``s``: what a WebSocket upgrade presents (§7)."""
        assert self.hello is not None
        return self.hello["s"]

    # -- requests ------------------------------------------------------------------------------------------------------

    def session_params(self, *, id: str | None = None, pw: str | None = None) -> Params:
        return [("id", self.id if id is None else id), ("pw", self.pw if pw is None else pw),
                ("ser", random_serial())]

    def submit(self, params: Params | str = (), *, id: str | None = None, pw: str | None = None,
               method: str = "GET", headers: dict[str, str] | None = None, body: bytes | None = None,
               ingest: bool | None = None, raw: bool = False) -> Pending:
        """Sends one request of this session (its id, pw and a serial first, then ``params``) on a thread.

        ``raw`` sends ``params`` (a query string or pairs) as the whole query. Answers to requests with this
        session's own id and password are ingested (their messages delivered, a 404 marks the session ended);
        ``ingest`` overrides that."""
        if raw:
            query = params if isinstance(params, str) else query_string(list(params))
        else:
            extra = params if isinstance(params, str) else query_string(list(params))
            query = query_string(self.session_params(id=id, pw=pw)) + (("&" + extra) if extra else "")
        if ingest is None:
            ingest = not raw and id is None and pw is None
        target = "/.lp?" + query

        def run() -> Answer:
            try:
                answer = self.endpoint.request(method, target, headers, body)
            except Exception as error:  # noqa: BLE001 - recorded; the waiter sees it too
                with self._condition:
                    self.protocol_errors.append(f"request failed: {error!r} ({target[:120]})")
                    self._condition.notify_all()
                raise
            if ingest:
                self._ingest(answer)
            return answer

        pending = Pending(_EXECUTOR.submit(run), target)
        with self._condition:
            self._outstanding = [item for item in self._outstanding if not item.done()] + [pending]
        return pending

    def request_now(self, params: Params | str = (), **kw: Any) -> Answer:
        """:meth:`submit` and wait for the answer (for requests that are not held: refusals, disconnects)."""
        timeout = kw.pop("timeout", self.timeout)
        return self.submit(params, **kw).wait(timeout)

    def poll(self) -> Pending:
        """A bare poll (no segments)."""
        return self.submit()

    def hold_poll(self, timeout: float = DEFAULT_TIMEOUT) -> Pending:
        """A poll the server is known to hold: two bare polls, and once one is answered (the server answers the
        older when the newer arrives) the other is the held one. Call with no poller running."""
        first, second = self.poll(), self.poll()
        done, _ = concurrent.futures.wait([first.future, second.future], timeout,
                                          return_when=concurrent.futures.FIRST_COMPLETED)
        if not done:
            raise LongPollTimeout(f"neither of two polls was answered within {timeout}s")
        answered, other = (first, second) if first.future in done else (second, first)
        answered.wait(0)
        return other

    def disconnect(self, method: str = "POST", *, id: str | None = None, pw: str | None = None,
                   connection: http.client.HTTPConnection | None = None) -> Answer:
        """``disconn=t`` (as the beacon's POST, or as a GET), answered at once."""
        params: Params = [("disconn", "t"), ("id", self.id if id is None else id), ("pw", self.pw if pw is None else pw)]
        return self.endpoint.lp(params, method=method, body=b"" if method == "POST" else None, timeout=self.timeout,
                                connection=connection)

    def dframe(self) -> Answer:
        return self.endpoint.lp([("dframe", "t"), ("id", self.id), ("pw", self.pw)], timeout=self.timeout)

    # -- sending messages ----------------------------------------------------------------------------------------------

    def take_segments(self, count: int) -> int:
        with self._segment_lock:
            first = self.next_seg
            self.next_seg += count
            return first

    def segments_for(self, message: Any) -> list[Segment]:
        """The segments of one message, numbered from the session's next segment number."""
        pieces = cut(encode_message(message))
        first = self.take_segments(len(pieces))
        return [Segment(first + index, len(pieces), piece) for index, piece in enumerate(pieces)]

    def send_segments(self, segments: list[Segment], **kw: Any) -> Pending:
        """One request carrying these segments (as ``seg0``, ``ts0``, ``d0``, ``seg1``, …)."""
        return self.submit(segment_params(segments), **kw)

    def send_json(self, message: Any, window: int = 4) -> list[Pending]:
        """Sends one message: its segments packed into requests as the SDK does, sent one after another with at
        most ``window`` of them unanswered (the server answers an older request when a newer one arrives), so
        they may arrive out of order but never far apart."""
        sent: list[Pending] = []
        for group in pack(self.segments_for(message)):
            wait_unanswered(sent, window - 1)
            sent.append(self.send_segments(group))
        return sent

    def take_r(self) -> int:
        with self._segment_lock:
            r = self.next_r
            self.next_r += 1
            return r

    def send_request(self, action: str, body: dict, *, r: int | None = None) -> int:
        r = self.take_r() if r is None else r
        self.send_json(envelope(r, action, body))
        return r

    def request(self, action: str, body: dict, *, timeout: float | None = None) -> LPResponse:
        return self.response(self.send_request(action, body), timeout)

    def put(self, path: str, data: Any, **kw: Any) -> LPResponse:
        return self.request("p", {"p": path, "d": data}, **kw)

    def get(self, path: str, **kw: Any) -> LPResponse:
        return self.request("g", {"p": path, "q": {}}, **kw)

    def listen(self, path: str, **kw: Any) -> LPResponse:
        return self.request("q", {"p": path, "h": ""}, **kw)

    # -- receiving -----------------------------------------------------------------------------------------------------

    def _ingest(self, answer: Answer) -> None:
        with self._condition:
            self.answers.append(answer)
            if answer.status != 200:
                if self.ended_status is None:
                    self.ended_status = answer.status
                self._condition.notify_all()
                return
            if answer.errors:
                self.protocol_errors += answer.errors
            content_type = answer.header("Content-Type") or ""
            if content_type != "text/javascript; charset=utf-8":
                self.protocol_errors.append(f"answer Content-Type {content_type!r}")
            if (answer.header("Cache-Control") or "") != "no-store":
                self.protocol_errors.append(f"answer Cache-Control {answer.header('Cache-Control')!r}")
            for command in answer.commands:
                if command.kind == "data":
                    n, messages = command.args
                    if n in self._seen_n or n < self._next_n:
                        self.protocol_errors.append(f"answer number {n} used twice")
                        continue
                    if not messages:
                        self.protocol_errors.append(f"answer {n} carries no messages")
                    self._seen_n.add(n)
                    self._held[n] = messages
                elif command.kind == "close":
                    if self.close_n is not None and self.close_n != command.args[0]:
                        self.protocol_errors.append(f"close {command.args[0]} after close {self.close_n}")
                    self.close_n = command.args[0]
            while self._next_n in self._held:
                for message in self._held.pop(self._next_n):
                    self.delivered.append((self._next_n, message))
                self._next_n += 1
            self._condition.notify_all()

    @property
    def closed(self) -> bool:
        """The page ran everything up to the close command's number, then closed the transport."""
        with self._condition:
            return self.close_n is not None and self._next_n > self.close_n

    @property
    def ended(self) -> bool:
        return self.closed or self.ended_status is not None

    def messages(self) -> list[Any]:
        with self._condition:
            return [message for _, message in self.delivered]

    def texts(self, last: int = 12) -> list[str]:
        return [json.dumps(message)[:300] for message in self.messages()[-last:]]

    def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None, what: str = "state") -> Any:
        """Waits until ``predicate()`` (called under the lock) is truthy; returns its value."""
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        with self._condition:
            while True:
                value = predicate()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise LongPollTimeout(
                        f"no {what} within {timeout}s (close_n={self.close_n}, ended_status={self.ended_status}, "
                        f"errors={self.protocol_errors[-3:]}); last messages={self.texts()}")
                self._condition.wait(remaining)

    def wait_message(self, predicate: Callable[[Any], bool], timeout: float | None = None,
                     what: str = "message") -> Any:
        def find() -> Any:
            for _, message in self.delivered:
                if predicate(message):
                    return message
            return None

        return self.wait_for(find, timeout, what)

    def response(self, r: int, timeout: float | None = None) -> LPResponse:
        message = self.wait_message(lambda item: is_response(item, r), timeout, f"response {r}")
        body = message["d"].get("b", {})
        return LPResponse(r, body.get("s"), body.get("d"), message)

    def wait_closed(self, timeout: float | None = None) -> None:
        self.wait_for(lambda: self.close_n is not None and self._next_n > self.close_n, timeout, "close command")

    def pushes(self, path: str | None = None) -> list[dict]:
        return [message for message in self.messages() if is_push(message, path)]

    # -- polling -------------------------------------------------------------------------------------------------------

    def start_polling(self) -> None:
        """A thread that keeps one bare poll outstanding until the session closes or :meth:`stop_polling`."""
        if self._polling:
            return
        self._polling = True

        def loop() -> None:
            while self._polling and not self.ended:
                try:
                    self.poll().wait(HTTP_TIMEOUT + 5)
                except Exception:  # noqa: BLE001 - recorded by submit
                    break
            self._polling = False

        self._poller = threading.Thread(target=loop, name=f"lp-poller-{self.id}", daemon=True)
        self._poller.start()

    def stop_polling(self, wait: bool = False, timeout: float = DEFAULT_TIMEOUT) -> None:
        """No new polls after the outstanding one (which the server answers when it has something, or empty
        after its hold time)."""
        self._polling = False
        if wait and self._poller is not None:
            self._poller.join(timeout)

    def outstanding(self) -> list[Pending]:
        with self._condition:
            return [item for item in self._outstanding if not item.done()]

    def close(self) -> None:
        """Ends the session (``disconn``) unless it ended, and stops polling."""
        self._polling = False
        if not self.ended and self.id is not None:
            try:
                self.disconnect("POST")
            except Exception:  # noqa: BLE001 - best effort at the end of a test
                pass

    # -- async wrappers ------------------------------------------------------------------------------------------------

    async def run(self, function: Callable, *args: Any, **kw: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, lambda: function(*args, **kw))

    async def arequest(self, action: str, body: dict, **kw: Any) -> LPResponse:
        return await self.run(self.request, action, body, **kw)

    async def aput(self, path: str, data: Any, **kw: Any) -> LPResponse:
        return await self.run(self.put, path, data, **kw)

    async def aget(self, path: str, **kw: Any) -> LPResponse:
        return await self.run(self.get, path, **kw)

    async def alisten(self, path: str, **kw: Any) -> LPResponse:
        return await self.run(self.listen, path, **kw)

    async def aresponse(self, r: int, timeout: float | None = None) -> LPResponse:
        return await self.run(self.response, r, timeout)

    async def await_for(self, predicate: Callable[[], Any], timeout: float | None = None, what: str = "state") -> Any:
        return await self.run(self.wait_for, predicate, timeout, what)

    async def await_message(self, predicate: Callable[[Any], bool], timeout: float | None = None,
                            what: str = "message") -> Any:
        return await self.run(self.wait_message, predicate, timeout, what)

    async def aclose(self) -> None:
        await self.run(self.close)


def random_id(length: int) -> str:
    return "".join(random.choice(string.ascii_letters + string.digits) for _ in range(length))
