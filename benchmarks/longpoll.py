#!/usr/bin/env python3
"""The long-polling transport's figures (issue 24), against the WebSocket in the same run.

    longpoll.py fanout     [--binary B] [--rounds 3] [--subscribers 1000] [--updates 10000] [--warmup 500]
                           [--window 128] [--payload 64]
    longpoll.py memory     [--binary B] [--rounds 3] [--sessions 2000]
    longpoll.py regression --baseline OLD_CANOPY [--binary B] [--rounds 3] [--subscribers 1000]
                           [--fanout-messages 20000] [--writes-messages 100000]
    common: [--out DIR] [--json FILE]

fanout: 1 writer -> N subscribers of /bench/room0, 64-byte objects {"pad":"x…","seq":S,"ts":T,"w":0}, all on long
    polling (`/.lp`) or all on the WebSocket (`/.ws`), alternating LP and WS rounds, a fresh server per round. The
    writer keeps at most --window updates that are not yet acknowledged to it or not yet received by every
    subscriber. Every subscriber checks that it gets every sequence number once and in order (any gap, repeat or
    control message fails the round). Deliveries/s = updates x subscribers / seconds from the first measured write
    to the last delivery (after --warmup updates, which are drained first); server CPU per delivery = the server
    process' utime+stime (/proc/PID/stat) over that interval / deliveries.
memory: N idle long-poll sessions, each with one listen (/bench/conn/c<i>) and holding its poll on its one
    keep-alive connection, against N idle WebSockets with one listen each; server VmRSS (/proc/PID/status) before
    (after a warm-up connection created the namespace) and once all are ready and 2 s passed; (after-before)/N.
regression: `canopy bench fanout` (N subscribers, window 128) and `canopy bench writes` (100 writers, window 8, 2
    listeners) against the baseline binary and --binary in alternating rounds, the --binary's `canopy bench`
    driving both; medians and candidate/baseline.

The client is one asyncio process on raw sockets: hand-written HTTP/1.1 keep-alive GETs that parse the
`pRTLPCB(n,[...])` answers, and a minimal RFC 6455 client (no permessage-deflate). A long-poll session behaves as
the JS SDK's BrowserPollConnection: one request outstanding, two while it has segments to send (messages are
web-safe base64, cut into 1,840-character segments, as many per request as fit in 1,870 characters), every
request also a poll; answers are taken in their number's order.

Servers run as deployed: `canopy serve --host 127.0.0.1 --port 0 --port-file F --data-dir D --namespaces '*'
--rules R --max-connections 50000` from an empty working directory (so the built-in defaults: fsync always), with
R = {"rules": {"bench": {".read": true, ".write": true}}}.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICK_SECONDS = 1.0 / os.sysconf("SC_CLK_TCK")
RULES = {"rules": {"bench": {".read": True, ".write": True}}}
NAMESPACE = "bench"
SEQ = re.compile(rb'"seq":(\d+)')
START = re.compile(rb"pLPCommand\('start','([A-Za-z0-9]+)','([A-Za-z0-9]+)'\)")
MAX_SEGMENT = 1840       # the SDK's MAX_PAYLOAD_SIZE
MAX_URL_DATA = 1870      # the SDK's MAX_URL_DATA_SIZE
SEGMENT_HEADER = 30      # the SDK's SEG_HEADER_SIZE


class Failure(Exception):
    pass


# ---------------------------------------------------------------------------------------------------------- server

class Server:
    """One fresh `canopy serve` with an empty data directory, in its own working directory."""

    def __init__(self, binary: Path, base: Path, name: str):
        self.binary = binary
        self.dir = base / name
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.process: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> "Server":
        rules = self.dir / "rules.json"
        rules.write_text(json.dumps(RULES))
        port_file = self.dir / "port"
        command = [str(self.binary), "serve", "--host", "127.0.0.1", "--port", "0", "--port-file", str(port_file),
                   "--data-dir", str(self.dir / "data"), "--namespaces", "*", "--rules", str(rules),
                   "--max-connections", "50000", "--log-level", "warning"]
        self.log = open(self.dir / "server.log", "wb")
        self.process = subprocess.Popen(command, cwd=self.dir, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise Failure(f"server exited at start: {self.log_text()}")
            try:
                text = port_file.read_text().strip()
                if text:
                    self.port = int(text)
                    return self
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        raise Failure("server did not listen within 60 s")

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu_seconds(self) -> float:
        text = Path(f"/proc/{self.pid}/stat").read_text()
        fields = text[text.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) * TICK_SECONDS

    def rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise Failure("no VmRSS")

    def log_text(self) -> str:
        try:
            return (self.dir / "server.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> int | None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                return None
        self.log.close()
        return self.process.returncode if self.process else None

    def cleanup(self) -> None:
        shutil.rmtree(self.dir / "data", ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------- workload

def update_object(seq: int, payload: int) -> bytes:
    """`{"pad":"x…","seq":S,"ts":T,"w":0}` padded to `payload` bytes (as canopy bench writes)."""
    body = b'","seq":%d,"ts":%d,"w":0}' % (seq, time.time_ns() // 1000)
    pad = max(0, payload - len(b'{"pad":"') - len(body))
    return b'{"pad":"' + b"x" * pad + body


def put_message(request: int, path: str, value: bytes) -> bytes:
    return b'{"t":"d","d":{"r":%d,"a":"p","b":{"p":"%s","d":%s}}}' % (request, path.encode(), value)


def listen_message(request: int, path: str) -> bytes:
    return b'{"t":"d","d":{"r":%d,"a":"q","b":{"p":"%s","h":""}}}' % (request, path.encode())


class Fanout:
    """What the subscribers and the writer of one round share."""

    def __init__(self, subscribers: int, total: int):
        self.subscribers = subscribers
        self.total = total
        self.received = [0] * total          # subscribers that have update s
        self.all_delivered = 0               # every update below it reached every subscriber
        self.deliveries = 0
        self.errors: list[str] = []
        self.progress = asyncio.Event()

    def error(self, text: str) -> None:
        if len(self.errors) < 20:
            self.errors.append(text)
        self.progress.set()

    def deliver(self, subscriber, seqs: list[bytes]) -> None:
        expected = subscriber.expected
        received = self.received
        total = self.total
        for raw in seqs:
            seq = int(raw)
            if seq != expected:
                self.error(f"subscriber {subscriber.index} got seq {seq}, expected {expected}")
            expected = seq + 1
            if seq < total:
                received[seq] += 1
                if received[seq] == self.subscribers:
                    self.all_delivered = seq + 1
                    self.progress.set()
        self.deliveries += len(seqs)
        subscriber.expected = expected


# ---------------------------------------------------------------------------------------------------------- HTTP / LP

class HTTPConnection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection, one request at a time (browsers do not pipeline)."""

    def __init__(self, host: bytes, on_lost):
        self.host = host
        self.transport = None
        self.buffer = bytearray()
        self.callback = None
        self.on_lost = on_lost

    def connection_made(self, transport):
        self.transport = transport

    def request(self, target: bytes, callback) -> None:
        assert self.callback is None
        self.callback = callback
        self.transport.write(b"GET " + target + b" HTTP/1.1\r\nHost: " + self.host + b"\r\n\r\n")

    def data_received(self, data):
        buffer = self.buffer
        buffer += data
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buffer[:end]).lower()
            at = head.find(b"\r\ncontent-length:")
            if at < 0:
                raise Failure(f"answer without Content-Length: {head[:200]!r}")
            line_end = head.find(b"\r\n", at + 2)
            length = int(head[at + 17: line_end if line_end > 0 else len(head)])
            total = end + 4 + length
            if len(buffer) < total:
                return
            status = int(head[9:12])
            body = bytes(buffer[end + 4:total])
            del buffer[:total]
            callback, self.callback = self.callback, None
            callback(status, body)

    def connection_lost(self, exc):
        self.on_lost(self, exc)


class LongPollSession:
    """One long-poll session as the SDK's BrowserPollConnection runs it."""

    def __init__(self, client: "Client", index: int, connections: int):
        self.client = client
        self.index = index
        self.connection_count = connections
        self.idle: list[HTTPConnection] = []
        self.connections: list[HTTPConnection] = []
        self.pending: list[tuple[int, int, bytes]] = []
        self.next_segment = 0
        self.outstanding = 0
        self.serial = 0
        self.next_answer = 1
        self.early: dict[int, bytes] = {}
        self.prefix = b""
        self.closing = False
        self.on_messages = None   # callback(array_bytes) for each answer's messages, in order

    def lost(self, connection, exc):
        if not self.closing:
            self.client.error(f"long-poll session {self.index}: connection lost ({exc})")

    async def start(self) -> list:
        loop = asyncio.get_running_loop()
        for _ in range(self.connection_count):
            _, connection = await loop.create_connection(
                lambda: HTTPConnection(self.client.host, self.lost), "127.0.0.1", self.client.port)
            self.idle.append(connection)
            self.connections.append(connection)
        answer = loop.create_future()
        connection = self.idle.pop()
        connection.request(b"/.lp?start=t&ser=%d&v=5&ns=%s" % (os.getpid() * 1000 + self.index, NAMESPACE.encode()),
                           lambda status, body: answer.set_result((status, body)))
        status, body = await answer
        self.idle.append(connection)
        match = START.search(body)
        if status != 200 or not match or b"pRTLPCB(0,[" not in body:
            raise Failure(f"start answered {status}: {body[:300]!r}")
        self.prefix = b"/.lp?id=" + match.group(1) + b"&pw=" + match.group(2) + b"&ser="
        array = body[body.index(b"pRTLPCB(0,") + 10: body.rindex(b"]") + 1]
        return json.loads(array)

    def send(self, message: bytes) -> None:
        data = base64.urlsafe_b64encode(message).replace(b"=", b".")
        pieces = [data[i:i + MAX_SEGMENT] for i in range(0, len(data), MAX_SEGMENT)]
        for piece in pieces:
            self.pending.append((self.next_segment, len(pieces), piece))
            self.next_segment += 1
        self.pump()

    def pump(self) -> None:
        """newRequest_: a request while fewer than 1 are out (2 while segments wait), segments added as they fit."""
        while self.outstanding < (2 if self.pending else 1) and not self.closing:
            if not self.idle:
                raise Failure(f"long-poll session {self.index}: no idle connection")
            self.serial += 1
            target = self.prefix + b"%d" % self.serial
            size = 0
            index = 0
            pending = self.pending
            while pending:
                seg, ts, data = pending[0]
                if len(data) + SEGMENT_HEADER + size > MAX_URL_DATA:
                    break
                piece = b"&seg%d=%d&ts%d=%d&d%d=%s" % (index, seg, index, ts, index, data)
                target += piece
                size += len(piece)
                index += 1
                pending.pop(0)
            connection = self.idle.pop()
            self.outstanding += 1
            self.client.requests += 1
            connection.request(target, lambda status, body, c=connection: self.answered(c, status, body))

    def answered(self, connection: HTTPConnection, status: int, body: bytes) -> None:
        self.outstanding -= 1
        self.idle.append(connection)
        if status != 200:
            self.client.error(f"long-poll session {self.index}: HTTP {status}: {body[:200]!r}")
            return
        if body:
            if b"pLPCommand" in body:
                self.client.error(f"long-poll session {self.index} closed by the server: {body[-200:]!r}")
            if body.startswith(b"pRTLPCB("):
                comma = body.index(b",", 8)
                number = int(body[8:comma])
                array = body[comma + 1: body.rindex(b"]") + 1]
                if number == self.next_answer:
                    self.take(array)
                else:
                    self.early[number] = array
            elif b"pRTLPCB" in body:
                self.client.error(f"long-poll session {self.index}: unexpected answer {body[:200]!r}")
        self.pump()

    def take(self, array: bytes) -> None:
        self.on_messages(array)
        self.next_answer += 1
        while self.next_answer in self.early:
            self.on_messages(self.early.pop(self.next_answer))
            self.next_answer += 1

    def close(self) -> None:
        self.closing = True
        for connection in self.connections:
            connection.transport.close()


# ---------------------------------------------------------------------------------------------------------- WebSocket

class WebSocketConnection(asyncio.Protocol):
    """A minimal RFC 6455 client: text frames, pings answered, Firebase frame-count splitting reassembled."""

    def __init__(self, client: "Client", index: int, on_message):
        self.client = client
        self.index = index
        self.on_message = on_message
        self.buffer = bytearray()
        self.upgraded = False
        self.split_left = 0
        self.split_parts: list[bytes] = []
        self.ready = asyncio.get_running_loop().create_future()
        self.closing = False

    def connection_made(self, transport):
        self.transport = transport
        key = base64.b64encode(os.urandom(16))
        transport.write(b"GET /.ws?v=5&ns=" + NAMESPACE.encode() + b" HTTP/1.1\r\nHost: " + self.client.host +
                        b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
                        b"\r\nSec-WebSocket-Version: 13\r\n\r\n")

    def send(self, message: bytes) -> None:
        """A masked text frame; the masking key is 0, which leaves the payload as it is (legal, and cheapest)."""
        n = len(message)
        if n < 126:
            header = bytes((0x81, 0x80 | n))
        elif n < 65536:
            header = bytes((0x81, 0x80 | 126)) + n.to_bytes(2, "big")
        else:
            header = bytes((0x81, 0x80 | 127)) + n.to_bytes(8, "big")
        self.transport.write(header + b"\0\0\0\0" + message)

    def data_received(self, data):
        buffer = self.buffer
        buffer += data
        position = 0
        if not self.upgraded:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buffer.startswith(b"HTTP/1.1 101"):
                self.client.error(f"WebSocket {self.index}: {bytes(buffer[:200])!r}")
                return
            self.upgraded = True
            position = end + 4
        size = len(buffer)
        while size - position >= 2:
            b0 = buffer[position]
            length = buffer[position + 1] & 0x7F
            start = position + 2
            if length == 126:
                if size - position < 4:
                    break
                length = int.from_bytes(buffer[position + 2:position + 4], "big")
                start = position + 4
            elif length == 127:
                if size - position < 10:
                    break
                length = int.from_bytes(buffer[position + 2:position + 10], "big")
                start = position + 10
            if size < start + length:
                break
            payload = bytes(buffer[start:start + length])
            position = start + length
            opcode = b0 & 0x0F
            if opcode == 1 or opcode == 0:
                self.message(payload)
            elif opcode == 9:
                self.transport.write(bytes((0x8A, 0x80 | len(payload))) + b"\0\0\0\0" + payload)
            elif opcode == 8:
                if not self.closing:
                    self.client.error(f"WebSocket {self.index} closed by the server: {payload!r}")
        del buffer[:position]

    def message(self, payload: bytes) -> None:
        if self.split_left:
            self.split_parts.append(payload)
            self.split_left -= 1
            if self.split_left == 0:
                payload = b"".join(self.split_parts)
                self.split_parts = []
            else:
                return
        elif payload.isdigit() and len(payload) < 6:
            self.split_left = int(payload)
            return
        self.on_message(payload)

    def connection_lost(self, exc):
        if not self.closing:
            self.client.error(f"WebSocket {self.index}: connection lost ({exc})")

    def close(self) -> None:
        self.closing = True
        self.transport.close()


# ---------------------------------------------------------------------------------------------------------- clients

class Client:
    def __init__(self, port: int, fanout: Fanout | None = None):
        self.port = port
        self.host = b"127.0.0.1:%d" % port
        self.fanout = fanout
        self.errors: list[str] = []
        self.requests = 0

    def error(self, text: str) -> None:
        if self.fanout:
            self.fanout.error(text)
        elif len(self.errors) < 20:
            self.errors.append(text)


class LPSubscriber:
    """A long-poll session listening to one path; once its listen is acknowledged every `seq` it gets is checked."""

    def __init__(self, client: Client, index: int, path: str):
        self.client = client
        self.index = index
        self.path = path
        self.expected = 0
        self.ready = asyncio.get_running_loop().create_future()
        self.session = LongPollSession(client, index, 1)
        self.session.on_messages = self.messages

    async def open(self) -> None:
        await self.session.start()
        self.session.send(listen_message(1, self.path))
        await self.ready

    def messages(self, array: bytes) -> None:
        if self.ready.done():
            if b'"t":"c"' in array or b'"r":' in array:
                self.client.error(f"long-poll subscriber {self.index}: unexpected {array[:300]!r}")
            seqs = SEQ.findall(array)
            if seqs:
                self.client.fanout.deliver(self, seqs)
            return
        for message in json.loads(array):
            body = message.get("d", {})
            if message.get("t") == "d" and body.get("r") == 1:
                if body["b"]["s"] != "ok":
                    self.client.error(f"listen refused: {message}")
                self.ready.set_result(None)
            elif message.get("t") == "c":
                self.client.error(f"long-poll subscriber {self.index}: {message}")

    def close(self) -> None:
        self.session.close()


class WSSubscriber:
    def __init__(self, client: Client, index: int, path: str):
        self.client = client
        self.index = index
        self.path = path
        self.expected = 0
        self.connection: WebSocketConnection | None = None
        self.state = 0  # 0: waiting for the hello, 1: for the listen's ok, 2: ready
        self.ready = asyncio.get_running_loop().create_future()

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        _, self.connection = await loop.create_connection(
            lambda: WebSocketConnection(self.client, self.index, self.message), "127.0.0.1", self.client.port)
        await self.ready

    def message(self, payload: bytes) -> None:
        if self.state == 2:
            seqs = SEQ.findall(payload)
            if len(seqs) != 1:
                self.client.error(f"WebSocket subscriber {self.index}: unexpected {payload[:300]!r}")
            self.client.fanout.deliver(self, seqs)
            return
        message = json.loads(payload)
        if self.state == 0:
            if message.get("t") == "c" and message["d"].get("t") == "h":
                self.state = 1
                self.connection.send(listen_message(1, self.path))
            return
        body = message.get("d", {})
        if message.get("t") == "d" and body.get("r") == 1:
            if body["b"]["s"] != "ok":
                self.client.error(f"listen refused: {message}")
            self.state = 2
            self.ready.set_result(None)

    def close(self) -> None:
        self.connection.close()


class Writer:
    """Writes updates 0, 1, … to /bench/room0; at most `window` not yet acknowledged or not yet everywhere."""

    def __init__(self, client: Client, transport: str, window: int, payload: int):
        self.client = client
        self.transport = transport
        self.window = window
        self.payload = payload
        self.sent = 0
        self.acked = 0
        self.limit = 0
        self.request = 0
        self.lp: LongPollSession | None = None
        self.ws: WebSocketConnection | None = None
        self.hello = asyncio.get_running_loop().create_future()

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        if self.transport == "lp":
            self.lp = LongPollSession(self.client, -1, 2)
            self.lp.on_messages = self.lp_messages
            await self.lp.start()
        else:
            _, self.ws = await loop.create_connection(
                lambda: WebSocketConnection(self.client, -1, self.ws_message), "127.0.0.1", self.client.port)
            await self.hello

    def lp_messages(self, array: bytes) -> None:
        for message in json.loads(array):
            self.response(message)

    def ws_message(self, payload: bytes) -> None:
        message = json.loads(payload)
        if not self.hello.done():
            self.hello.set_result(None)
            return
        self.response(message)

    def response(self, message: dict) -> None:
        body = message.get("d", {})
        if message.get("t") != "d" or "r" not in body:
            self.client.error(f"writer: unexpected {message}")
            return
        if body["b"]["s"] != "ok":
            self.client.error(f"writer: write refused {message}")
        self.acked += 1
        self.client.fanout.progress.set()
        self.fill()

    def fill(self) -> None:
        fanout = self.client.fanout
        floor = min(self.acked, fanout.all_delivered)
        while self.sent < self.limit and self.sent - floor < self.window:
            self.request += 1
            message = put_message(self.request, "/bench/room0", update_object(self.sent, self.payload))
            self.sent += 1
            if self.lp:
                self.lp.send(message)
            else:
                self.ws.send(message)

    async def run_to(self, limit: int, timeout: float) -> None:
        """Sends updates up to `limit` and waits until all are acknowledged and everywhere."""
        self.limit = limit
        fanout = self.client.fanout
        deadline = time.monotonic() + timeout
        self.fill()
        while self.acked < limit or fanout.all_delivered < limit:
            if fanout.errors:
                raise Failure("; ".join(fanout.errors[:5]))
            fanout.progress.clear()
            try:
                await asyncio.wait_for(fanout.progress.wait(), max(0.01, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise Failure(f"timed out: {self.acked} acknowledged, {fanout.all_delivered} everywhere of {limit}")
            self.fill()
        if fanout.errors:
            raise Failure("; ".join(fanout.errors[:5]))

    def close(self) -> None:
        if self.lp:
            self.lp.close()
        if self.ws:
            self.ws.close()


async def open_all(items, concurrency: int = 200) -> None:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(item):
        async with semaphore:
            await item.open()

    await asyncio.gather(*(one(item) for item in items))


def client_cpu() -> float:
    t = os.times()
    return t.user + t.system


async def fanout_round(server: Server, transport: str, args) -> dict:
    total = args.warmup + args.updates
    fanout = Fanout(args.subscribers, total)
    client = Client(server.port, fanout)
    kind = LPSubscriber if transport == "lp" else WSSubscriber
    subscribers = [kind(client, i, "/bench/room0") for i in range(args.subscribers)]
    connect_start = time.monotonic()
    await asyncio.wait_for(open_all(subscribers), 300)
    writer = Writer(client, transport, args.window, args.payload)
    await writer.open()
    connect_seconds = time.monotonic() - connect_start
    if fanout.errors:
        raise Failure("; ".join(fanout.errors[:5]))
    await writer.run_to(args.warmup, 300)
    deliveries_before, requests_before = fanout.deliveries, client.requests
    cpu_before, client_before, start = server.cpu_seconds(), client_cpu(), time.monotonic()
    await writer.run_to(total, 900)
    elapsed = time.monotonic() - start
    cpu = server.cpu_seconds() - cpu_before
    client_seconds = client_cpu() - client_before
    deliveries = fanout.deliveries - deliveries_before
    expected = args.updates * args.subscribers
    if deliveries != expected:
        raise Failure(f"{deliveries} deliveries, expected {expected}")
    for subscriber in subscribers:
        if subscriber.expected != total:
            raise Failure(f"subscriber {subscriber.index} ended at seq {subscriber.expected}, expected {total}")
    rss = server.rss_bytes()
    for subscriber in subscribers:
        subscriber.close()
    writer.close()
    return {
        "transport": transport, "subscribers": args.subscribers, "updates": args.updates,
        "deliveries": deliveries, "seconds": elapsed, "deliveries_per_second": deliveries / elapsed,
        "writes_per_second": args.updates / elapsed,
        "server_cpu_seconds": cpu, "server_cpu_ns_per_delivery": cpu * 1e9 / deliveries,
        "client_cpu_seconds": client_seconds, "client_cpu_ns_per_delivery": client_seconds * 1e9 / deliveries,
        "http_requests": client.requests - requests_before if transport == "lp" else None,
        "connect_seconds": connect_seconds, "server_rss_end_bytes": rss, "lost": 0,
    }


async def memory_round(server: Server, transport: str, sessions: int) -> dict:
    client = Client(server.port)
    kind = LPSubscriber if transport == "lp" else WSSubscriber
    # Warm-up: one WebSocket connection creates the namespace and its store before "before" is read.
    warm = WSSubscriber(client, -1, "/bench/warm")
    await warm.open()
    warm.connection.closing = True
    warm.close()
    await asyncio.sleep(1.0)
    before = server.rss_bytes()
    items = [kind(client, i, f"/bench/conn/c{i}") for i in range(sessions)]
    await asyncio.wait_for(open_all(items), 300)
    await asyncio.sleep(2.0)
    if client.errors:
        raise Failure("; ".join(client.errors[:5]))
    after = server.rss_bytes()
    descriptors = len(os.listdir(f"/proc/{server.pid}/fd"))
    for item in items:
        item.close()
    return {"transport": transport, "sessions": sessions, "rss_before_bytes": before, "rss_after_bytes": after,
            "bytes_per_session": (after - before) / sessions, "server_descriptors": descriptors}


# ---------------------------------------------------------------------------------------------------------- runners

def load_average() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def run_server_round(binary: Path, out: Path, name: str, body) -> dict:
    server = Server(binary, out, name).start()
    try:
        result = asyncio.run(body(server))
    finally:
        status = server.stop()
        log = server.log_text().strip()
        server.cleanup()
    result["server_exit"] = status
    result["server_log"] = log[-2000:]
    if status != 0:
        print(f"  server exit status {status}", file=sys.stderr)
    if log:
        print(f"  server log: {log[-500:]}", file=sys.stderr)
    return result


def fanout_command(args) -> dict:
    rounds = []
    for round_number in range(1, args.rounds + 1):
        for transport in args.transports.split(","):
            name = f"fanout-{transport}-r{round_number}"
            load = load_average()
            result = run_server_round(args.binary, args.out, name,
                                      lambda server: fanout_round(server, transport, args))
            result.update(round=round_number, load_average=load)
            rounds.append(result)
            extra = (f", {result['deliveries'] / result['http_requests']:.1f} deliveries per poll answer"
                     if result["http_requests"] else "")
            print(f"round {round_number} {transport}: {result['deliveries_per_second']:,.0f} deliveries/s, "
                  f"server {result['server_cpu_ns_per_delivery']:,.0f} ns/delivery, client "
                  f"{result['client_cpu_ns_per_delivery']:,.0f} ns/delivery, {result['seconds']:.1f} s{extra} "
                  f"(load {load})", file=sys.stderr)
    table = ["| transport | deliveries/s (median of %d) | server CPU per delivery | client CPU per delivery "
             "| deliveries per HTTP answer | rounds: deliveries/s; server ns/delivery |" % args.rounds,
             "|---|---|---|---|---|---|"]
    medians = {}
    for transport, label in (("lp", "long polling"), ("ws", "WebSocket")):
        mine = [r for r in rounds if r["transport"] == transport]
        if not mine:
            continue
        rate = statistics.median(r["deliveries_per_second"] for r in mine)
        cpu = statistics.median(r["server_cpu_ns_per_delivery"] for r in mine)
        client = statistics.median(r["client_cpu_ns_per_delivery"] for r in mine)
        per_answer = (f"{statistics.median(r['deliveries'] / r['http_requests'] for r in mine):.1f}"
                      if transport == "lp" else "1 (a frame each)")
        medians[transport] = (rate, cpu)
        table.append(f"| {label} | {rate:,.0f} | {cpu:,.0f} ns | {client:,.0f} ns | {per_answer} | "
                     + ", ".join(f"{r['deliveries_per_second'] / 1e3:,.0f} k" for r in mine) + "; "
                     + ", ".join(f"{r['server_cpu_ns_per_delivery']:,.0f}" for r in mine) + " |")
    if len(medians) == 2:
        table.append(f"| **LP / WS** | **{medians['lp'][0] / medians['ws'][0]:.2f}×** | "
                     f"**{medians['lp'][1] / medians['ws'][1]:.2f}×** | | | |")
    return {"rounds": rounds, "table": "\n".join(table)}


def memory_command(args) -> dict:
    rounds = []
    for round_number in range(1, args.rounds + 1):
        for transport in args.transports.split(","):
            name = f"memory-{transport}-r{round_number}"
            result = run_server_round(args.binary, args.out, name,
                                      lambda server: memory_round(server, transport, args.sessions))
            result.update(round=round_number)
            rounds.append(result)
            print(f"round {round_number} {transport}: {result['bytes_per_session']:,.0f} B per session "
                  f"({result['rss_before_bytes'] / 1048576:.1f} -> {result['rss_after_bytes'] / 1048576:.1f} MiB, "
                  f"{result['server_descriptors']} descriptors)", file=sys.stderr)
    table = [f"| {args.sessions:,} idle sessions, one listen each | server RSS per session (median of {args.rounds}) "
             "| RSS before → after (median round) | rounds (B per session) |", "|---|---|---|---|"]
    medians = {}
    for transport, label in (("lp", "long polling, each holding its poll"), ("ws", "WebSocket")):
        mine = sorted((r for r in rounds if r["transport"] == transport), key=lambda r: r["bytes_per_session"])
        if not mine:
            continue
        middle = mine[len(mine) // 2]
        medians[transport] = middle["bytes_per_session"]
        table.append(f"| {label} | {middle['bytes_per_session']:,.0f} B | "
                     f"{middle['rss_before_bytes'] / 1048576:.1f} → {middle['rss_after_bytes'] / 1048576:.1f} MiB | "
                     + ", ".join(f"{r['bytes_per_session']:,.0f}" for r in rounds if r["transport"] == transport)
                     + " |")
    if len(medians) == 2:
        table.append(f"| **LP / WS** | **{medians['lp'] / medians['ws']:.2f}×** | | |")
    return {"rounds": rounds, "table": "\n".join(table)}


def bench_round(client: Path, binary: Path, out: Path, name: str, bench_args: list[str]) -> dict:
    server = Server(binary, out, name).start()
    report_path = out / f"{name}.json"
    try:
        command = [str(client), "bench", *bench_args, "--url", f"ws://127.0.0.1:{server.port}", "--threads", "1",
                   "--timeout", "300", "--server-pid", str(server.pid), "--json", str(report_path), "--quiet"]
        with open(out / f"{name}.log", "wb") as log:
            subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    finally:
        status = server.stop()
        server_log = server.log_text().strip()
        server.cleanup()
    report = json.loads(report_path.read_text())
    if report["failures"]:
        raise Failure(f"{name}: {report['failures']}")
    if server_log:
        print(f"  server log: {server_log[-500:]}", file=sys.stderr)
    return {"deliveries_per_second": report["deliveries_per_second"],
            "write_acks_per_second": report["write_acks_per_second"],
            "server_cpu_ns_per_delivery": report["server"].get("cpu_nanoseconds_per_delivery"),
            "server_cpu_seconds": report["server"].get("cpu_seconds"), "server_exit": status}


def regression_command(args) -> dict:
    scenarios = {
        "fanout": ["fanout", "--subscribers", str(args.subscribers), "--messages", str(args.fanout_messages),
                   "--window", "128"],
        "writes": ["writes", "--writers", "100", "--listeners", "2", "--messages", str(args.writes_messages),
                   "--window", "8"],
    }
    sides = {"baseline": args.baseline, "candidate": args.binary}
    rounds = []
    for round_number in range(1, args.rounds + 1):
        order = ("baseline", "candidate") if round_number % 2 else ("candidate", "baseline")
        for scenario, bench_args in scenarios.items():
            for side in order:
                name = f"regression-{scenario}-{side}-r{round_number}"
                load = load_average()
                result = bench_round(args.binary, sides[side], args.out, name, bench_args)
                result.update(round=round_number, scenario=scenario, side=side, load_average=load)
                rounds.append(result)
                figure = result["deliveries_per_second" if scenario == "fanout" else "write_acks_per_second"]
                print(f"round {round_number} {scenario} {side}: {figure:,.0f}/s, server "
                      f"{result['server_cpu_ns_per_delivery'] or 0:,.0f} ns/delivery (load {load})", file=sys.stderr)
    table = ["| scenario | baseline (median) | candidate (median) | candidate / baseline | "
             "server CPU per delivery (writes: per listener delivery): baseline; candidate | "
             "rounds: baseline; candidate |", "|---|---|---|---|---|---|"]
    for scenario, key, label in (
            ("fanout", "deliveries_per_second",
             f"`canopy bench fanout`, {args.subscribers:,} subscribers, window 128 (deliveries/s)"),
            ("writes", "write_acks_per_second",
             "`canopy bench writes`, 100 writers, window 8, 2 listeners (acked writes/s)")):
        cells = {}
        for side in ("baseline", "candidate"):
            mine = [r for r in rounds if r["scenario"] == scenario and r["side"] == side]
            cells[side] = (statistics.median(r[key] for r in mine),
                           statistics.median(r["server_cpu_ns_per_delivery"] or 0 for r in mine),
                           ", ".join(f"{r[key] / 1e6:.2f} M" if scenario == "fanout" else f"{r[key] / 1e3:.1f} k"
                                     for r in mine))
        b, c = cells["baseline"], cells["candidate"]
        table.append(f"| {label} | {b[0]:,.0f} | {c[0]:,.0f} | **{c[0] / b[0]:.2f}×** | {b[1]:,.0f} ns; "
                     f"{c[1]:,.0f} ns | {b[2]}; {c[2]} |")
    return {"rounds": rounds, "table": "\n".join(table)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["fanout", "memory", "regression"])
    parser.add_argument("--binary", type=Path, default=ROOT / ".build/release/canopy")
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--updates", type=int, default=10000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--window", type=int, default=128)
    parser.add_argument("--payload", type=int, default=64)
    parser.add_argument("--transports", default="lp,ws", help="lp,ws (both, alternating) or one of them")
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--fanout-messages", type=int, default=20000)
    parser.add_argument("--writes-messages", type=int, default=100000)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.binary = args.binary.resolve()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    args.out = (args.out or Path(tempfile.mkdtemp(prefix="canopy-longpoll-"))).resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.command == "regression":
        if not args.baseline:
            parser.error("regression needs --baseline")
        args.baseline = args.baseline.resolve()
        result = regression_command(args)
    elif args.command == "fanout":
        result = fanout_command(args)
    else:
        result = memory_command(args)
    result["command"] = " ".join(sys.argv)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print(result["table"])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
