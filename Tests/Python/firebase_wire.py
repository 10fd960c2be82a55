"""A Firebase Realtime Database wire-protocol (version 5) test client over ``websockets``.

Written from docs/protocol/wire-protocol.md. It speaks the protocol the way the JS SDK does (request numbers from 1,
paths with a leading slash, messages above 16384 UTF-16 code units split into a count frame and pieces), but every
knob a test needs is exposed: raw frames, other request numbering, Android/iOS spellings.

Inbound messages are recorded in :attr:`WireClient.log` in arrival order (after reassembly of split messages), so
tests can assert ordering (echo before ack, data before listen ok). Responses are matched to their request number;
pushes can be awaited with filters; :class:`View` applies pushes like an SDK's server cache for one listen.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import websockets
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

import firebase_model as model

MAX_FRAME_CHARS = 16384
DEFAULT_TIMEOUT = 10.0


class WireTimeout(AssertionError):
    """Something the test waited for did not arrive in time."""


@dataclass
class Inbound:
    """One complete inbound message."""

    seq: int
    text: str
    message: Any  # parsed JSON (None when the text was not JSON)
    frames: list[str]  # the raw WebSocket frames it came in (count frame first when split)
    received_at: float

    @property
    def layer(self) -> str | None:
        return self.message.get("t") if isinstance(self.message, dict) else None

    @property
    def body(self) -> dict:
        return self.message.get("d", {}) if isinstance(self.message, dict) else {}

    @property
    def is_control(self) -> bool:
        return self.layer == "c"

    @property
    def control_type(self) -> str | None:
        return self.body.get("t") if self.is_control else None

    @property
    def is_response(self) -> bool:
        return self.layer == "d" and "r" in self.body

    @property
    def is_push(self) -> bool:
        return self.layer == "d" and "r" not in self.body and "a" in self.body

    @property
    def action(self) -> str | None:
        return self.body.get("a") if self.is_push else None

    @property
    def payload(self) -> dict:
        """``b`` of a data message."""
        return self.body.get("b", {}) if self.layer == "d" else {}

    @property
    def path(self) -> str | None:
        path = self.payload.get("p")
        return model.path_string(path) if isinstance(path, str) else None

    @property
    def tag(self) -> int | None:
        return self.payload.get("t")


@dataclass
class Response:
    """The answer to one request."""

    r: int
    status: str
    data: Any
    inbound: Inbound

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def split_for_wire(text: str, limit: int = MAX_FRAME_CHARS) -> list[str]:
    """The frames to send ``text`` as (§2.1): the text itself, or a count frame then pieces of at most ``limit``
    UTF-16 code units, never cutting a surrogate pair (unlike the JS SDK)."""
    pieces: list[str] = []
    current: list[str] = []
    units = 0
    for char in text:
        width = 2 if ord(char) > 0xFFFF else 1
        if units + width > limit:
            pieces.append("".join(current))
            current, units = [], 0
        current.append(char)
        units += width
    pieces.append("".join(current))
    return pieces if len(pieces) == 1 else [str(len(pieces))] + pieces


def envelope_request(r: int, action: str, body: dict) -> dict:
    return {"t": "d", "d": {"r": r, "a": action, "b": body}}


class WireClient:
    """One WebSocket connection speaking the Firebase protocol."""

    def __init__(self, ws: ClientConnection, url: str):
        self.ws = ws
        self.url = url
        self.log: list[Inbound] = []
        self.hello: dict | None = None
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self.close_reason: str | None = None
        self.protocol_errors: list[str] = []  # problems in what the server sent (framing, JSON)
        self.sent_frames: list[str] = []
        self.views: list[View] = []
        self.next_r = 1
        self._responses: dict[int, asyncio.Future] = {}
        self._pong_waiters: list[asyncio.Future] = []
        self._consumed: set[int] = set()
        self._changed = asyncio.Condition()
        self._hello_event = asyncio.Event()
        self._pending_count = 0
        self._pending_frames: list[str] = []
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())

    # -- connecting ------------------------------------------------------------------------------------------------

    @classmethod
    async def connect(
        cls,
        port: int,
        ns: str | None = "test",
        *,
        host: str = "127.0.0.1",
        params: str | None = None,
        host_header: str | None = None,
        wait_hello: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        headers: dict[str, str] | None = None,
        compression: str | None = None,
        receive_buffer: int | None = None,
    ) -> "WireClient":
        """Opens ``ws://host:port/.ws?v=5&ns=ns`` (or ``?params``) and waits for the hello.

        ``host_header`` makes the URL (and so the ``Host`` header) name another host while the socket still goes to
        ``host``; the hello's ``h`` should echo it. ``compression="deflate"`` offers permessage-deflate, as
        browsers and the Node SDK do.
        """
        query = params if params is not None else ("v=5" + (f"&ns={ns}" if ns is not None else ""))
        url_host = host_header or f"{host}:{port}"
        url = f"ws://{url_host}/.ws?{query}"
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)  # before connect: a small window
        sock.settimeout(timeout)
        sock.connect((host, port))
        sock.setblocking(False)
        ws = await asyncio.wait_for(
            connect(
                url,
                sock=sock,
                compression=compression,
                max_size=None,
                ping_interval=None,
                open_timeout=timeout,
                close_timeout=2,
                additional_headers=headers,
            ),
            timeout,
        )
        client = cls(ws, url)
        if wait_hello:
            await client.wait_hello(timeout)
        return client

    async def wait_hello(self, timeout: float = DEFAULT_TIMEOUT) -> dict:
        try:
            await asyncio.wait_for(self._hello_event.wait(), timeout)
        except asyncio.TimeoutError:
            raise WireTimeout(f"no hello within {timeout}s; log={self.texts()}") from None
        assert self.hello is not None
        return self.hello

    @property
    def server_ts(self) -> int:
        return self.hello["ts"]

    @property
    def server_host(self) -> str:
        return self.hello["h"]

    @property
    def session_id(self) -> str:
        return self.hello["s"]

    # -- reading -----------------------------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            async for frame in self.ws:
                if isinstance(frame, bytes):
                    self.protocol_errors.append(f"binary frame from server ({len(frame)} bytes)")
                    continue
                await self._on_frame(frame)
        except ConnectionClosed:
            pass
        except Exception as error:  # noqa: BLE001 - recorded for the test to assert on
            self.protocol_errors.append(f"reader failed: {error!r}")
        finally:
            rcvd = self.ws.protocol.close_rcvd  # the close frame the server sent, if any
            self.close_code = rcvd.code if rcvd else None
            self.close_reason = rcvd.reason if rcvd else None
            self.closed.set()
            for future in list(self._responses.values()) + self._pong_waiters:
                if not future.done():
                    future.set_exception(ConnectionError(f"connection closed: {self.close_code} {self.close_reason}"))
            async with self._changed:
                self._changed.notify_all()

    async def _on_frame(self, frame: str) -> None:
        if self._pending_count:
            self._pending_frames.append(frame)
            self._pending_count -= 1
            if self._pending_count:
                return
            frames, self._pending_frames = self._pending_frames, []
            await self._on_message("".join(frames[1:]), frames)
            return
        if len(frame) <= 6 and frame.isdigit() and frame.isascii():
            count = int(frame)
            if count < 1:
                self.protocol_errors.append(f"count frame {frame!r}")
                return
            self._pending_count = count
            self._pending_frames = [frame]
            return
        await self._on_message(frame, [frame])

    async def _on_message(self, text: str, frames: list[str]) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            message = None
            self.protocol_errors.append(f"non-JSON message: {text[:200]!r}")
        if message is not None and not isinstance(message, dict):
            self.protocol_errors.append(f"message is not an object: {text[:200]!r}")
        inbound = Inbound(len(self.log), text, message, frames, time.monotonic())
        self.log.append(inbound)
        if inbound.is_control:
            kind = inbound.control_type
            if kind == "h" and self.hello is None:
                self.hello = inbound.body.get("d")
                self._hello_event.set()
            elif kind == "o":
                for waiter in self._pong_waiters:
                    if not waiter.done():
                        waiter.set_result(inbound)
                self._pong_waiters.clear()
        elif inbound.is_response:
            body = inbound.body
            payload = body.get("b", {})
            future = self._responses.pop(body.get("r"), None)
            response = Response(body.get("r"), payload.get("s"), payload.get("d"), inbound)
            if future is not None and not future.done():
                future.set_result(response)
        elif inbound.is_push:
            for view in self.views:
                view.apply(inbound)
        async with self._changed:
            self._changed.notify_all()

    def texts(self) -> list[str]:
        return [(entry.text if len(entry.text) < 300 else entry.text[:300] + "…") for entry in self.log]

    # -- sending -----------------------------------------------------------------------------------------------------

    async def send_frame(self, frame: str | bytes) -> None:
        """Sends one raw WebSocket frame (text for ``str``, binary for ``bytes``)."""
        if isinstance(frame, str):
            self.sent_frames.append(frame)
        await self.ws.send(frame)

    async def send_text(self, text: str) -> None:
        """Sends one message, split per §2.1 when longer than 16384 UTF-16 code units."""
        for frame in split_for_wire(text):
            await self.send_frame(frame)

    async def send_json(self, message: Any) -> None:
        await self.send_text(model.dumps(message))

    def take_r(self) -> int:
        r = self.next_r
        self.next_r += 1
        return r

    async def send_request(self, action: str, body: dict, *, r: int | None = None) -> asyncio.Future:
        """Sends a request and returns the future of its response (without waiting)."""
        r = self.take_r() if r is None else r
        future = asyncio.get_running_loop().create_future()
        self._responses[r] = future
        await self.send_json(envelope_request(r, action, body))
        return future

    async def request(self, action: str, body: dict, *, r: int | None = None,
                      timeout: float = DEFAULT_TIMEOUT) -> Response:
        future = await self.send_request(action, body, r=r)
        return await self.wait_response(future, timeout, f"{action} {model.dumps(body)[:200]}")

    async def wait_response(self, future: asyncio.Future, timeout: float = DEFAULT_TIMEOUT,
                            what: str = "request") -> Response:
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            raise WireTimeout(f"no response to {what} within {timeout}s; log={self.texts()[-10:]}") from None

    # -- actions (JS spellings) --------------------------------------------------------------------------------------

    async def put(self, path: str, data: Any, hash: str | None = None, **kw) -> Response:
        body = {"p": path, "d": data}
        if hash is not None:
            body["h"] = hash
        return await self.request("p", body, **kw)

    async def merge(self, path: str, data: dict, **kw) -> Response:
        return await self.request("m", {"p": path, "d": data}, **kw)

    async def get(self, path: str, query: dict | None = None, **kw) -> Response:
        return await self.request("g", {"p": path, "q": query or {}}, **kw)

    def _register_view(self, path: str, query: dict | None, tag: int | None, hash: str) -> tuple["View", dict]:
        """A new view registered on this client (so pushes apply from the start) and the listen body for it."""
        view = View(path, query, tag)
        self.views.append(view)
        body: dict[str, Any] = {"p": path, "h": hash}
        if query is not None:
            body["q"] = query
        if tag is not None:
            body["t"] = tag
        return view, body

    async def listen(self, path: str, query: dict | None = None, tag: int | None = None, hash: str = "",
                     **kw) -> tuple["View", Response]:
        """Registers a view (so pushes are applied from the start) and sends the listen; returns both."""
        view, body = self._register_view(path, query, tag, hash)
        response = await self.request("q", body, **kw)
        view.complete = response.ok
        if response.ok and isinstance(response.data, dict):
            view.warnings = list(response.data.get("w") or [])
        return view, response

    async def listen_nowait(self, path: str, query: dict | None = None, tag: int | None = None,
                            hash: str = "") -> tuple["View", asyncio.Future]:
        """Registers a view and sends the listen without waiting (as JS does before a transaction's put)."""
        view, body = self._register_view(path, query, tag, hash)
        return view, await self.send_request("q", body)

    async def unlisten(self, view: "View", **kw) -> Response:
        body: dict[str, Any] = {"p": view.path}
        if view.tag is not None:
            body["q"] = view.query
            body["t"] = view.tag
        if view in self.views:
            self.views.remove(view)
        return await self.request("n", body, **kw)

    async def auth(self, token: str, action: str = "auth", **kw) -> Response:
        return await self.request(action, {"cred": token}, **kw)

    async def ping(self, timeout: float = DEFAULT_TIMEOUT) -> Inbound:
        """Sends a control ping and waits for the pong."""
        waiter = asyncio.get_running_loop().create_future()
        self._pong_waiters.append(waiter)
        await self.send_json({"t": "c", "d": {"t": "p", "d": {}}})
        try:
            return await asyncio.wait_for(waiter, timeout)
        except asyncio.TimeoutError:
            raise WireTimeout(f"no pong within {timeout}s") from None

    async def keepalive(self) -> None:
        await self.send_frame("0")

    async def sync(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """A round trip through this connection's outbound queue: everything the server enqueued for this
        connection before it read the request has arrived when this returns."""
        response = await self.request("s", {"c": {}}, timeout=timeout)
        assert response.ok, f"stats request failed: {response.status} {response.data}"

    # -- waiting for pushes ------------------------------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[Inbound], bool], timeout: float = DEFAULT_TIMEOUT,
                       what: str = "message", consume: bool = True) -> Inbound:
        """The first not yet consumed logged message matching ``predicate``, waiting for it if needed."""
        deadline = time.monotonic() + timeout
        async with self._changed:
            while True:
                for entry in self.log:
                    if entry.seq not in self._consumed and predicate(entry):
                        if consume:
                            self._consumed.add(entry.seq)
                        return entry
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.closed.is_set():
                    raise WireTimeout(
                        f"no {what} within {timeout}s (closed={self.closed.is_set()}); "
                        f"log={self.texts()[-10:]}")
                try:
                    await asyncio.wait_for(self._changed.wait(), remaining)
                except asyncio.TimeoutError:
                    pass

    async def next_push(self, path: str | None = None, tag: int | None = None, action: str | None = None,
                        timeout: float = DEFAULT_TIMEOUT) -> Inbound:
        wanted = model.path_string(path) if path is not None else None

        def matches(entry: Inbound) -> bool:
            return (entry.is_push and (wanted is None or entry.path == wanted)
                    and (tag is None or entry.tag == tag) and (action is None or entry.action == action))

        return await self.wait_for(matches, timeout, f"push a={action} p={path} t={tag}")

    def pushes(self, since: int = 0) -> list[Inbound]:
        return [entry for entry in self.log[since:] if entry.is_push]

    async def wait_closed(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        try:
            await asyncio.wait_for(self.closed.wait(), timeout)
        except asyncio.TimeoutError:
            raise WireTimeout(f"connection still open after {timeout}s") from None

    # -- closing -----------------------------------------------------------------------------------------------------

    async def close(self) -> None:
        """A clean WebSocket close."""
        try:
            await asyncio.wait_for(self.ws.close(), 3)
        except (asyncio.TimeoutError, ConnectionError):
            self.abort()
        await self._finish()

    def pause_reading(self) -> None:
        """Stops reading from the socket (a slow or frozen mobile client); the server's output backs up."""
        self.ws.transport.pause_reading()

    def resume_reading(self) -> None:
        self.ws.transport.resume_reading()

    def abort(self) -> None:
        """Kills the TCP connection without a close frame (RST, like a crashed or vanished client)."""
        transport = self.ws.transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            except OSError:
                pass
        transport.abort()

    async def _finish(self) -> None:
        try:
            await asyncio.wait_for(self._reader, 3)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self._reader.cancel()

    async def aclose(self) -> None:
        if not self.closed.is_set():
            self.abort()
        await self._finish()


class View:
    """A client-side view of one listen, fed by pushes like an SDK's server cache (§11).

    Untagged views take every untagged push at, below or above their path; tagged views only pushes with their tag.
    ``history`` holds every state (after each applied push) and ``events`` the child events between consecutive
    states (computed with the query's index, §12)."""

    def __init__(self, path: str, query: dict | None = None, tag: int | None = None):
        self.path = model.path_string(path)
        self.parts = model.segments(path)
        self.query = query
        self.tag = tag
        self.cache: Any = None
        self.complete = False
        self.history: list[Any] = []
        self.events: list[list[tuple[str, str]]] = []
        self.errors: list[str] = []
        self.revoked = False
        self.warnings: list[str] = []  # the listen ok's "w" (e.g. no_index: the client filters itself)

    @property
    def visible(self) -> Any:
        """What the SDK shows: the cache, filtered client-side when the server warned that it did not filter."""
        if self.tag is not None and "no_index" in self.warnings:
            return model.evaluate_query(self.cache, self.query)
        return self.cache

    def apply(self, inbound: Inbound) -> None:
        action = inbound.action
        if action == "c":
            if inbound.path == self.path and (self.tag is None) == ("q" not in inbound.payload):
                self.revoked = True
            return
        if action not in ("d", "m"):
            return
        if self.tag is not None:
            if inbound.tag != self.tag:
                return
        elif inbound.tag is not None:
            return
        push_parts = model.segments(inbound.payload.get("p", "/"))
        data = inbound.payload.get("d")
        before = self.cache
        if self.tag is not None and not model.is_prefix(self.parts, push_parts):
            self.errors.append(f"tagged push outside the query path: {inbound.text[:200]}")
            return
        if action == "d":
            new = self._apply_set(self.cache, push_parts, data)
        else:
            if not isinstance(data, dict):
                self.errors.append(f"merge push without an object: {inbound.text[:200]}")
                return
            new = self.cache
            for relative, value in data.items():
                new = self._apply_set(new, push_parts + model.segments(relative), value)
        if new is None and before is None and action == "d" and push_parts == self.parts:
            self.history.append(new)  # a null initial push is still a state
            self.events.append([])
            return
        if new is before:
            return
        self.cache = new
        self.history.append(new)
        self.events.append(model.child_events(before, new, self.query))

    def _apply_set(self, cache: Any, target: list[str], data: Any) -> Any:
        if model.is_prefix(self.parts, target):
            new = model.set_at(cache, target[len(self.parts):], data)
            return self._drop_root_priority(new)
        if model.is_prefix(target, self.parts):
            return self._drop_root_priority(model.get(model.normalize(data), self.parts[len(target):]))
        return cache

    def _drop_root_priority(self, node: Any) -> Any:
        if self.tag is not None and isinstance(node, dict) and model.PRIORITY in node:
            return model.with_priority(node, None)
        return node

    @property
    def keys(self) -> list[str]:
        """The children in the view's query order (what ``forEach`` on the snapshot would visit)."""
        return model.ordered_keys(self.cache, self.query)

    def all_events(self) -> list[tuple[str, str]]:
        return [event for batch in self.events for event in batch]
