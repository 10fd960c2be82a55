"""Raw HTTP/1.1 for the REST tests (no HTTP library in between): requests written byte by byte, responses parsed
strictly (status line, headers, Content-Length or chunked bodies), keep-alive and pipelining on one socket, and a
Server-Sent-Events reader for ``Accept: text/event-stream`` streams (rest-api.md §9).

Every blocking call has a deadline: sockets carry a timeout, and :func:`bounded` puts a whole synchronous test under
a SIGALRM time limit (the conftest's ``timeout`` mark applies to ``async def`` tests only).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import signal
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import pytest

DEFAULT_TIMEOUT = 10.0
JSON_CONTENT_TYPE = "application/json; charset=utf-8"
SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8"
ADMIN = {"Authorization": "Bearer owner"}
# Each test uses its own namespace, so servers shared by a module need room for many.
LARGE_NAMESPACE_LIMIT = {"CANOPY_DATA_MAX_NAMESPACES": "1000"}
# The rules of the suites' rules servers: a public area, per-user areas, and one indexed and one unindexed list.
RULES = {
    "rules": {
        "public": {".read": True, ".write": True},
        "users": {
            "$uid": {
                ".read": "auth != null && auth.uid == $uid",
                ".write": "auth != null && auth.uid == $uid",
            }
        },
        "indexed": {".read": True, ".write": True, ".indexOn": ["score"]},
        "unindexed": {".read": True, ".write": True},
    }
}


class TestTimeout(AssertionError):
    """A synchronous test ran past its :func:`bounded` limit."""


def bounded(seconds: float) -> Callable:
    """Runs a synchronous test under a SIGALRM limit of ``seconds`` (and marks it ``timeout(seconds)``)."""

    def decorate(test: Callable) -> Callable:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> Any:
            def expire(signum: int, frame: Any) -> None:
                raise TestTimeout(f"test did not finish within {seconds}s")

            previous = signal.signal(signal.SIGALRM, expire)
            signal.setitimer(signal.ITIMER_REAL, seconds)
            try:
                return test(*args, **kwargs)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)

        return pytest.mark.timeout(seconds)(run)

    return decorate


class EnvironmentFor:
    """Sets environment variables while a server starts (the server process inherits them), then restores them."""

    def __init__(self, **variables: str):
        self.variables = variables
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> "EnvironmentFor":
        for name, value in self.variables.items():
            self.saved[name] = os.environ.get(name)
            os.environ[name] = value
        return self

    def __exit__(self, *exc: Any) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# ---------------------------------------------------------------------------------------------------------------
# URLs


def encode(value: str) -> str:
    """Percent-encodes a query value the way JavaScript's ``encodeURIComponent`` does (``"`` → %22, ``$`` → %24)."""
    return urllib.parse.quote(value, safe="-_.!~*'()")


def url(path: str, params: dict[str, Any] | Iterable[tuple[str, Any]] | None = None, *, raw: str = "") -> str:
    """``path`` plus a query string; ``params`` values are percent-encoded (non-strings JSON-encoded first), ``raw``
    is appended as written (for curl-style unencoded quotes and deliberate junk)."""
    items = list(params.items()) if isinstance(params, dict) else list(params or [])
    parts = []
    for name, value in items:
        text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        parts.append(f"{name}={encode(text)}")
    if raw:
        parts.append(raw)
    return path + ("?" + "&".join(parts) if parts else "")


def pretty(value: Any) -> str:
    """Production's pretty JSON: 2-space indent and ``"key" : value`` (rest-api.md §3, §5)."""
    return json.dumps(value, indent=2, separators=(",", " : "), ensure_ascii=False)


def error_body(text: str) -> bytes:
    """The exact error body of the contract: ``{\\n  "error" : "<text>"\\n}\\n``."""
    return (pretty({"error": text}) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------------------------------------------
# Requests and responses


@dataclass
class HttpResponse:
    """One parsed HTTP/1.1 response."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    chunked: bool = False

    def header(self, name: str) -> str | None:
        """The first header called ``name`` (case-insensitive), or None."""
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.body)

    def describe(self) -> str:
        head = "\n".join(f"{key}: {value}" for key, value in self.headers)
        return f"HTTP {self.status} {self.reason}\n{head}\n\n{self.body[:2000]!r}"


def build_request(method: str, target: str, body: bytes | str | None = None, headers: dict[str, str] | None = None,
                  *, host: str = "127.0.0.1", json_body: Any = ...) -> bytes:
    """The bytes of one HTTP/1.1 request; ``json_body`` (any JSON value, ``None`` included) is sent compact."""
    if json_body is not ...:
        body = json.dumps(json_body, separators=(",", ":"), ensure_ascii=False)
    if isinstance(body, str):
        body = body.encode("utf-8")
    header_lines = {"Host": host}
    header_lines.update(headers or {})
    if body is None and method in ("PUT", "POST", "PATCH"):
        body = b""
    if body is not None and not any(key.lower() in ("content-length", "transfer-encoding") for key in header_lines):
        header_lines["Content-Length"] = str(len(body))
    head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{key}: {value}\r\n" for key, value in header_lines.items())
    return head.encode("utf-8") + b"\r\n" + (body or b"")


class ConnectionEnded(AssertionError):
    """The server closed (or reset) the connection where a response was expected."""


class HttpConnection:
    """One client TCP connection to the server: send requests (pipelined if wanted) and read responses in order."""

    def __init__(self, port: int, *, host: str = "127.0.0.1", timeout: float = DEFAULT_TIMEOUT,
                 receive_buffer: int | None = None, host_header: str | None = None):
        self.port = port
        self.host_header = host_header or f"127.0.0.1:{port}"
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            # Before connect, so the advertised window stays small.
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buffer = bytearray()
        self.eof = False
        self.reset = False

    # -- sending

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, method: str, target: str, body: bytes | str | None = None,
             headers: dict[str, str] | None = None, **kw: Any) -> None:
        self.send_raw(build_request(method, target, body, headers, host=kw.pop("host", self.host_header), **kw))

    def request(self, method: str, target: str, body: bytes | str | None = None,
                headers: dict[str, str] | None = None, **kw: Any) -> HttpResponse:
        self.send(method, target, body, headers, **kw)
        return self.read_response(method)

    # -- receiving

    def _fill(self, deadline: float) -> bool:
        """Reads more bytes into the buffer; False at EOF or reset."""
        if self.eof:
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("deadline passed while waiting for the server")
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError:
            self.eof = self.reset = True
            return False
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True

    def _line(self, deadline: float) -> bytes:
        while True:
            index = self.buffer.find(b"\r\n")
            if index >= 0:
                line = bytes(self.buffer[:index])
                del self.buffer[: index + 2]
                return line
            if not self._fill(deadline):
                raise ConnectionEnded(f"connection ended inside a line: {bytes(self.buffer)[:200]!r}")

    def _exactly(self, count: int, deadline: float) -> bytes:
        while len(self.buffer) < count:
            if not self._fill(deadline):
                raise ConnectionEnded(f"connection ended after {len(self.buffer)} of {count} body bytes")
        data = bytes(self.buffer[:count])
        del self.buffer[:count]
        return data

    def read_head(self, timeout: float | None = None) -> HttpResponse:
        """Status line and headers of the next response (the body is left in the stream)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        if not self.buffer and not self._fill(deadline):
            raise ConnectionEnded("connection closed before a response" + (" (reset)" if self.reset else ""))
        status_line = self._line(deadline).decode("latin-1")
        parts = status_line.split(" ", 2)
        assert len(parts) >= 2 and parts[0] == "HTTP/1.1", f"bad status line {status_line!r}"
        headers = []
        while True:
            line = self._line(deadline)
            if not line:
                break
            name, separator, value = line.decode("latin-1").partition(":")
            assert separator, f"bad header line {line!r}"
            headers.append((name.strip(), value.strip()))
        response = HttpResponse(int(parts[1]), parts[2] if len(parts) > 2 else "", headers)
        response.chunked = "chunked" in (response.header("Transfer-Encoding") or "").lower()
        return response

    def read_body(self, response: HttpResponse, method: str = "GET", timeout: float | None = None) -> HttpResponse:
        deadline = time.monotonic() + (timeout or self.timeout)
        if method == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200:
            return response
        if response.chunked:
            body = bytearray()
            while True:
                size_line = self._line(deadline).split(b";")[0].strip()
                size = int(size_line, 16)
                if size == 0:
                    while self._line(deadline):
                        pass
                    break
                body += self._exactly(size, deadline)
                assert self._exactly(2, deadline) == b"\r\n", "chunk not followed by CRLF"
            response.body = bytes(body)
        elif response.header("Content-Length") is not None:
            response.body = self._exactly(int(response.header("Content-Length") or "0"), deadline)
        else:
            while self._fill(deadline):
                pass
            response.body = bytes(self.buffer)
            self.buffer.clear()
        return response

    def read_response(self, method: str = "GET", timeout: float | None = None) -> HttpResponse:
        return self.read_body(self.read_head(timeout), method, timeout)

    def wait_closed(self, timeout: float = DEFAULT_TIMEOUT) -> bytes:
        """Reads until the server closes (EOF or reset) and returns what arrived before; fails after ``timeout``."""
        deadline = time.monotonic() + timeout
        while self._fill(deadline):
            pass
        data = bytes(self.buffer)
        self.buffer.clear()
        return data

    def is_open(self, wait: float = 0.2) -> bool:
        """True when the connection shows no EOF within ``wait`` seconds (buffered bytes are kept)."""
        try:
            self._fill(time.monotonic() + wait)
        except (socket.timeout, TimeoutError):
            return True
        return not self.eof

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "HttpConnection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def request(port: int, method: str, target: str, body: bytes | str | None = None,
            headers: dict[str, str] | None = None, *, timeout: float = DEFAULT_TIMEOUT, **kw: Any) -> HttpResponse:
    """One request on a fresh connection."""
    with HttpConnection(port, timeout=timeout, host_header=kw.pop("host_header", None)) as connection:
        return connection.request(method, target, body, headers, **kw)


class Rest:
    """Requests against one server and namespace: ``rest.get("/a")`` is ``GET /a.json?ns=<ns>``, on one keep-alive
    connection that is reopened if the server closed it."""

    def __init__(self, port: int, ns: str | None, headers: dict[str, str] | None = None):
        self.port = port
        self.ns = ns
        self.headers = dict(headers or {})
        self.connection: HttpConnection | None = None

    def target(self, path: str, params: dict[str, Any] | Iterable[tuple[str, Any]] | None = None,
               raw: str = "") -> str:
        items = list(params.items()) if isinstance(params, dict) else list(params or [])
        if self.ns is not None:
            items.append(("ns", self.ns))
        json_path = path if path.endswith(".json") else path.rstrip("/") + ("/.json" if path == "/" else ".json")
        return url(json_path, items, raw=raw)

    def call(self, method: str, path: str, params: dict[str, Any] | None = None, *, raw: str = "",
             headers: dict[str, str] | None = None, **kw: Any) -> HttpResponse:
        merged = dict(self.headers)
        merged.update(headers or {})
        target = self.target(path, params, raw)
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = HttpConnection(self.port)
            try:
                response = self.connection.request(method, target, headers=merged, **kw)
            except (ConnectionEnded, BrokenPipeError, ConnectionResetError):
                self.connection.close()
                self.connection = None
                if attempt == 2:
                    raise
                continue
            if (response.header("Connection") or "").lower() == "close":
                self.connection.close()
                self.connection = None
            return response
        raise AssertionError("unreachable")

    def get(self, path: str, params: dict[str, Any] | None = None, **kw: Any) -> HttpResponse:
        return self.call("GET", path, params, **kw)

    def put(self, path: str, value: Any, params: dict[str, Any] | None = None, **kw: Any) -> HttpResponse:
        return self.call("PUT", path, params, json_body=value, **kw)

    def post(self, path: str, value: Any, params: dict[str, Any] | None = None, **kw: Any) -> HttpResponse:
        return self.call("POST", path, params, json_body=value, **kw)

    def patch(self, path: str, value: Any, params: dict[str, Any] | None = None, **kw: Any) -> HttpResponse:
        return self.call("PATCH", path, params, json_body=value, **kw)

    def delete(self, path: str, params: dict[str, Any] | None = None, **kw: Any) -> HttpResponse:
        return self.call("DELETE", path, params, **kw)

    def value(self, path: str) -> Any:
        """The value at ``path`` read as admin (fails unless 200)."""
        response = self.get(path, headers=ADMIN)
        assert response.status == 200, response.describe()
        return response.json()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def expect_ok(response: HttpResponse, value: Any = ..., status: int = 200, *, cors: bool = True) -> HttpResponse:
    """Asserts a success with the contract's headers and, if given, the JSON ``value``; ``cors=False`` for the admin
    endpoints, which grant no other origin."""
    assert response.status == status, response.describe()
    check_rest_headers(response, cors)
    if value is not ...:
        assert response.json() == value, response.describe()
    return response


def expect_error(response: HttpResponse, status: int, text: str, *, cors: bool = True) -> HttpResponse:
    """Asserts the contract's error answer: ``status``, the pretty ``{"error": text}`` body and the REST headers."""
    assert response.status == status, f"expected {status} {text!r}, got:\n{response.describe()}"
    assert response.json() == {"error": text}, f"expected error {text!r}, got:\n{response.describe()}"
    assert response.body == error_body(text), f"error body not pretty-printed like production: {response.body!r}"
    check_rest_headers(response, cors)
    return response


def check_rest_headers(response: HttpResponse, cors: bool = True) -> None:
    """The headers every REST answer carries (rest-contract: Content-Type, Cache-Control, CORS; the admin endpoints
    grant no CORS)."""
    if response.body:
        assert response.header("Content-Type") == JSON_CONTENT_TYPE, response.describe()
    assert response.header("Cache-Control") == "no-cache", response.describe()
    assert response.header("Access-Control-Allow-Origin") == ("*" if cors else None), response.describe()


def pipeline(connection: HttpConnection, requests: Iterable[bytes], window: int = 64,
             on_response: Callable[[int, HttpResponse], None] | None = None) -> int:
    """Sends ``requests`` on one connection with up to ``window`` unanswered at a time; reads every response in order
    (``on_response(index, response)``) and returns how many were answered."""
    pending = 0
    answered = 0
    outgoing = bytearray()

    def flush() -> None:
        if outgoing:
            connection.send_raw(bytes(outgoing))
            outgoing.clear()

    for data in requests:
        outgoing += data
        pending += 1
        if pending >= window:
            flush()
            response = connection.read_response("PUT")
            if on_response:
                on_response(answered, response)
            answered += 1
            pending -= 1
    flush()
    while pending:
        response = connection.read_response("PUT")
        if on_response:
            on_response(answered, response)
        answered += 1
        pending -= 1
    return answered


# ---------------------------------------------------------------------------------------------------------------
# Server-Sent Events


@dataclass
class SseEvent:
    """One event of a stream: its ``event:`` name and the raw ``data:`` text."""

    name: str
    data: str

    def json(self) -> Any:
        return json.loads(self.data)

    @property
    def path(self) -> str:
        return self.json()["path"]

    @property
    def value(self) -> Any:
        return self.json()["data"]


class StreamEnded(AssertionError):
    """The stream ended where an event was expected."""


class SseStream:
    """A ``GET`` with ``Accept: text/event-stream`` on its own connection; parses the chunked event stream.

    ``response`` is the answer's head (status and headers); a non-200 answer's body is read in full. ``next()``
    returns the next event, ``None`` once the stream has ended (terminating chunk, EOF or reset)."""

    def __init__(self, port: int, target: str, headers: dict[str, str] | None = None, *,
                 timeout: float = DEFAULT_TIMEOUT, receive_buffer: int | None = None, read_head: bool = True):
        self.connection = HttpConnection(port, timeout=timeout, receive_buffer=receive_buffer)
        request_headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        request_headers.update(headers or {})
        self.connection.send("GET", target, headers=request_headers)
        self.decoded = bytearray()
        self.ended = False
        self.chunk_remaining = 0  # bytes of the current chunk still to come (+2 for its CRLF once > 0)
        self.in_chunk = False
        self.timeout = timeout
        self.response: HttpResponse | None = None
        self.received: list[SseEvent] = []
        if read_head:
            self.read_head()

    def read_head(self) -> HttpResponse:
        self.response = self.connection.read_head(self.timeout)
        if self.response.status != 200:
            self.connection.read_body(self.response)
            self.ended = True
        return self.response

    def _decode(self) -> None:
        """Moves complete chunk payload from the connection buffer into ``decoded``."""
        buffer = self.connection.buffer
        if self.response is not None and not self.response.chunked:
            self.decoded += buffer
            buffer.clear()
            return
        while buffer and not self.ended:
            if self.in_chunk:
                if self.chunk_remaining > 0:
                    take = min(self.chunk_remaining, len(buffer))
                    self.decoded += buffer[:take]
                    del buffer[:take]
                    self.chunk_remaining -= take
                    continue
                if len(buffer) < 2:
                    return
                assert buffer[:2] == b"\r\n", f"chunk not followed by CRLF: {bytes(buffer[:20])!r}"
                del buffer[:2]
                self.in_chunk = False
                continue
            index = buffer.find(b"\r\n")
            if index < 0:
                return
            size = int(bytes(buffer[:index]).split(b";")[0].strip(), 16)
            del buffer[: index + 2]
            if size == 0:
                self.ended = True
                return
            self.in_chunk = True
            self.chunk_remaining = size

    def _parse_one(self) -> SseEvent | None:
        while True:
            index = self.decoded.find(b"\n\n")
            if index < 0:
                return None
            block = bytes(self.decoded[:index]).decode("utf-8")
            del self.decoded[: index + 2]
            name, data_lines = "message", []
            for line in block.split("\n"):
                if not line or line.startswith(":"):
                    continue
                key, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if key == "event":
                    name = value
                elif key == "data":
                    data_lines.append(value)
            if data_lines or name != "message":
                return SseEvent(name, "\n".join(data_lines))

    def next(self, timeout: float | None = None) -> SseEvent | None:
        """The next event, or None when the stream ended; fails (socket.timeout) after ``timeout`` seconds."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            # Bytes may already be buffered (they can arrive with the head): decode them before waiting for more.
            self._decode()
            event = self._parse_one()
            if event is not None:
                self.received.append(event)
                return event
            if self.ended or self.connection.eof:
                return None
            self.connection._fill(deadline)

    def expect(self, name: str, timeout: float | None = None) -> SseEvent:
        """The next event, which must be called ``name`` (keep-alives are skipped unless expected)."""
        while True:
            event = self.next(timeout)
            if event is None:
                raise StreamEnded(f"the stream ended while waiting for {name!r}; got {self.received[-5:]}")
            if event.name == "keep-alive" and name != "keep-alive":
                continue
            assert event.name == name, f"expected event {name!r}, got {event}"
            return event

    def expect_change(self, name: str, path: str, value: Any, timeout: float | None = None) -> None:
        event = self.expect(name, timeout)
        assert (event.name, event.path, event.value) == (name, path, value), f"got {event}"

    def wait_ended(self, timeout: float = DEFAULT_TIMEOUT) -> list[SseEvent]:
        """Reads to the end of the stream (terminating chunk or closed connection); returns the events on the way."""
        events = []
        while True:
            event = self.next(timeout)
            if event is None:
                return events
            events.append(event)

    def close(self) -> None:
        self.connection.close()


def open_stream(port: int, path: str, ns: str | None, params: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None, **kw: Any) -> SseStream:
    return SseStream(port, Rest(port, ns).target(path, params), headers, **kw)


class StreamCollector(threading.Thread):
    """Reads a stream on a thread until ``count`` events (keep-alives excluded) arrived, the stream ended, or ``stop``
    is set; the raw bytes are only decoded as they come, so the reader keeps up with a fast writer."""

    def __init__(self, stream: SseStream, count: int, timeout: float):
        super().__init__(daemon=True)
        self.stream = stream
        self.count = count
        self.timeout = timeout
        self.events: list[SseEvent] = []
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + self.timeout
        try:
            while len(self.events) < self.count and not self.stop.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"collected {len(self.events)} of {self.count} events in {self.timeout}s")
                try:
                    event = self.stream.next(min(remaining, 0.5))
                except (socket.timeout, TimeoutError):
                    continue
                if event is None:
                    break
                if event.name != "keep-alive":
                    self.events.append(event)
        except BaseException as error:  # reported by the test
            self.error = error

    def result(self, timeout: float) -> list[SseEvent]:
        self.join(timeout)
        assert not self.is_alive(), f"the stream reader did not finish; {len(self.events)} events so far"
        if self.error is not None:
            raise self.error
        return self.events


def socket_is_cut_off(connection: HttpConnection, timeout: float) -> tuple[bool, int]:
    """Drains a stalled connection: (True when it ends in EOF/reset within ``timeout``, bytes received)."""
    total = len(connection.buffer)
    connection.buffer.clear()
    deadline = time.monotonic() + timeout
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False, total
            connection.sock.settimeout(remaining)
            chunk = connection.sock.recv(1 << 20)
            if not chunk:
                return True, total
            total += len(chunk)
    except ConnectionResetError:
        return True, total
    except OSError as error:
        if error.errno in (errno.ECONNRESET, errno.EPIPE):
            return True, total
        if isinstance(error, (socket.timeout, TimeoutError)):
            return False, total
        raise
