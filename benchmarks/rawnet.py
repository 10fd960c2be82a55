"""Shared by `soak.py` and `crash.py`: one `canopy serve` process on ephemeral ports, and raw asyncio clients for
HTTP/1.1 (keep-alive, chunked bodies, server-sent events) and the Firebase wire protocol over WebSocket (RFC 6455
frames written and parsed here, no WebSocket library), so a script controls every byte and how each connection
ends: a close handshake, a TCP reset in the middle of a frame or request, a half-close, or silence.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import resource
import socket
import ssl
import struct
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 60.0

OP_TEXT, OP_CLOSE, OP_PING, OP_PONG = 0x1, 0x8, 0x9, 0xA


class ProtocolFailure(Exception):
    """The server answered something other than what the script expected."""


def raise_open_file_limit() -> int:
    """Raises the soft limit on open descriptors to the hard limit; returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


class Server:
    """One `canopy serve` process on 127.0.0.1, port 0 (and a TLS listener on port 0 when certificates are given),
    configured by a JSON file written into `directory`, which is also its working directory (so the repository's
    Config/ stays out of it)."""

    def __init__(self, binary: Path, directory: Path, data_dir: Path, config: dict,
                 tls: tuple[Path, Path] | None = None):
        self.binary = binary
        self.directory = directory
        self.data_dir = data_dir
        self.config = config
        self.tls = tls
        self.log_path = directory / "server.log"
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.tls_port = 0

    def start(self) -> "Server":
        """Starts the server and waits for its port files; raises RuntimeError if it exits or does not listen."""
        config_path = self.directory / "canopy.json"
        config_path.write_text(json.dumps(self.config))
        port_file, tls_port_file = self.directory / "port", self.directory / "tls-port"
        for stale in (port_file, tls_port_file):
            stale.unlink(missing_ok=True)
        command = [str(self.binary), "serve", "--config", str(config_path), "--host", "127.0.0.1", "--port", "0",
                   "--port-file", str(port_file), "--data-dir", str(self.data_dir), "--log-level", "warning",
                   "--namespaces", "*"]
        if self.tls:
            command += ["--tls-cert", str(self.tls[0]), "--tls-key", str(self.tls[1]), "--tls-port", "0",
                        "--tls-port-file", str(tls_port_file)]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(command, cwd=self.directory, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode} at start: {self.log_tail()}")
            port = read_port(port_file)
            tls_port = read_port(tls_port_file) if self.tls else 0
            if port and (tls_port or not self.tls):
                self.port, self.tls_port = port, tls_port
                return self
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"the server did not listen within {START_TIMEOUT:.0f} s: {self.log_tail()}")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL, and reap the process."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.wait(10)

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM and wait; the exit status, or None when it had to be killed."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        return self.process.returncode

    def log_tail(self, limit: int = 3000) -> str:
        try:
            return self.log_path.read_bytes()[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""

    def open_descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def resident_kib(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS in /proc/PID/status")


def read_port(path: Path) -> int:
    try:
        text = path.read_text().strip()
    except OSError:
        return 0
    return int(text) if text.isdigit() else 0


def generate_certificates(directory: Path) -> tuple[Path, Path]:
    """A throw-away self-signed certificate (scripts/gen-test-certs) and its key."""
    subprocess.run([str(ROOT / "scripts" / "gen-test-certs"), str(directory)], check=True, timeout=60)
    return directory / "cert.pem", directory / "key.pem"


def client_tls_context(certificate: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(str(certificate))
    return context


def mask_payload(payload: bytes, mask: bytes) -> bytes:
    n = len(payload)
    repeated = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big")


def ws_frame(opcode: int, payload: bytes) -> bytes:
    """One final, masked client frame."""
    n = len(payload)
    if n < 126:
        header = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    mask = os.urandom(4)
    return header + mask + mask_payload(payload, mask)


def wire_request(r: int, action: str, body: dict) -> bytes:
    """A Firebase wire-protocol request as one text frame."""
    return ws_frame(OP_TEXT, json.dumps({"t": "d", "d": {"r": r, "a": action, "b": body}}).encode())


class Peer:
    """One TCP connection, optionally TLS, over asyncio streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int, tls: ssl.SSLContext | None = None) -> "Peer":
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=tls, server_hostname="127.0.0.1" if tls else None)
        return cls(reader, writer)

    @property
    def socket(self):
        return self.writer.get_extra_info("socket")

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    def reset(self) -> None:
        """Closes with a TCP reset (SO_LINGER 0), whatever is unsent or unread."""
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()

    def half_close(self) -> None:
        """Sends FIN and keeps reading (on TLS too: the TCP stream ends without a close_notify)."""
        self.socket.shutdown(socket.SHUT_WR)

    async def wait_eof(self, timeout: float, on_bytes=None) -> None:
        """Reads until the server ends the connection (end of stream, a reset, or an unclean TLS end);
        `on_bytes(data)` sees what arrives meanwhile. Raises ProtocolFailure after `timeout` seconds."""
        deadline = asyncio.get_running_loop().time() + timeout
        try:
            while True:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    raise ProtocolFailure(f"the server did not close within {timeout:.0f} s")
                try:
                    data = await asyncio.wait_for(self.reader.read(65536), remaining)
                except asyncio.TimeoutError:
                    continue
                if not data:
                    return
                if on_bytes:
                    on_bytes(data)
        except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
            return
        finally:
            self.writer.transport.abort()

    def abort(self) -> None:
        self.writer.transport.abort()

    # -- HTTP/1.1 -------------------------------------------------------------------------------------------------

    async def read_head(self) -> tuple[int, dict[str, str]]:
        """A response's status and headers (names lower-cased)."""
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ProtocolFailure(f"bad status line {lines[0]!r}")
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        return int(parts[1]), headers

    async def read_chunk(self) -> bytes:
        """One chunk of a chunked body (empty for the last one)."""
        size_line = await self.reader.readuntil(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        data = await self.reader.readexactly(size + 2)
        if size == 0:
            # The last chunk: trailers would follow until an empty line; Canopy sends none.
            return b""
        return data[:-2]

    async def read_response(self) -> tuple[int, dict[str, str], bytes]:
        status, headers = await self.read_head()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while chunk := await self.read_chunk():
                body += chunk
        else:
            body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, headers, body

    async def http(self, method: str, target: str, body: object = None, close: bool = False,
                   headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        """One request on this keep-alive connection and its answer."""
        await self.send(http_request(method, target, body, close, headers))
        status, _, payload = await self.read_response()
        return status, payload

    # -- WebSocket ------------------------------------------------------------------------------------------------

    async def upgrade(self, target: str) -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        await self.send((f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        status, _ = await self.read_head()
        if status != 101:
            raise ProtocolFailure(f"upgrade answered {status}")

    async def read_frame(self) -> tuple[int, bytes]:
        first, second = await self.reader.readexactly(2)
        if second & 0x80:
            raise ProtocolFailure("the server masked a frame")
        if not first & 0x80:
            raise ProtocolFailure("a fragmented server message")
        n = second & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
        return first & 0x0F, await self.reader.readexactly(n)

    async def read_message(self) -> dict:
        """The next wire-protocol message; pings are answered, a close frame raises ProtocolFailure."""
        while True:
            opcode, payload = await self.read_frame()
            if opcode == OP_TEXT:
                return json.loads(payload)
            if opcode == OP_PING:
                await self.send(ws_frame(OP_PONG, payload))
            elif opcode == OP_CLOSE:
                raise ProtocolFailure(f"closed by the server: {payload[:2].hex()} {payload[2:]!r}")
            elif opcode != OP_PONG:
                raise ProtocolFailure(f"unexpected opcode {opcode}")

    async def wire_hello(self, ns: str) -> dict:
        await self.upgrade(f"/.ws?v=5&ns={ns}")
        hello = await self.read_message()
        if hello.get("t") != "c" or hello["d"].get("t") != "h":
            raise ProtocolFailure(f"no hello: {hello}")
        return hello

    async def wire_responses(self, wanted: set[int]) -> dict[int, dict]:
        """Reads until every request number in `wanted` has its response body; pushes are skipped."""
        responses: dict[int, dict] = {}
        while not wanted <= responses.keys():
            message = await self.read_message()
            body = message.get("d", {}) if message.get("t") == "d" else {}
            if "r" in body:
                responses[body["r"]] = body.get("b", {})
        return responses

    async def close_handshake(self, timeout: float) -> None:
        """Sends a close frame (1000), reads to the server's close frame, then waits for the end of the stream."""
        await self.send(ws_frame(OP_CLOSE, struct.pack("!H", 1000)))
        async with asyncio.timeout(timeout):
            while (await self.read_frame())[0] != OP_CLOSE:
                pass
        await self.wait_eof(timeout)


def http_request(method: str, target: str, body: object = None, close: bool = False,
                 headers: dict[str, str] | None = None) -> bytes:
    payload = b"" if body is None else json.dumps(body).encode()
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(payload)}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload
