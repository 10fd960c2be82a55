"""Connection soak (issue 17): many short connections of every kind, ended in every way, against one release
`canopy serve`; the server's open descriptors must come back to where they were and its memory must not grow.

    .venv/bin/python benchmarks/soak.py [--connections 100000] [--seconds 600] [--concurrency 500]
                                        [--idle-timeout 5] [--binary .build/release/canopy]

The script starts the server itself (plain and TLS listeners on ephemeral ports, a throw-away certificate from
scripts/gen-test-certs, a temporary data directory, `server.idleTimeoutSeconds` set low so idle connections are
cut inside the run) and opens `--connections` connections paced evenly over `--seconds`, at most `--concurrency`
at a time. Connection i is of kind i mod 4, each kind cycling through its endings:

  kinds    ws    Firebase wire protocol: upgrade, hello, then listen (`q`), put (`p`) and get (`g`) pipelined;
                 every response must be `ok` and the get must return the value put
           wss   the same over TLS
           rest  keep-alive HTTP: PUT, GET (the value put), PATCH, GET ?shallow=true on one connection
           sse   `Accept: text/event-stream`: the first `put` event, then a PUT from a second short connection
                 (`Connection: close`) and its `put` event on the stream
  endings  close       WebSocket close handshake / a last request with `Connection: close` / SSE: the client
                       closes its socket
           reset       half a WebSocket frame or half an HTTP request, then close with SO_LINGER 0 (a TCP reset)
           half-close  shutdown(SHUT_WR), then read until the server closes
           idle        nothing more is sent until the server closes the connection (ws/wss/rest: a WebSocket gets
                       an unanswered ping after the idle timeout and is closed one timeout later); not for sse,
                       whose streams have no idle timeout (they get keep-alive events)

Writes go to 4,096 keys reused round-robin, so the stored data does not grow with the run. A warm-up at the same
pace (`--warmup-seconds`) comes first; once the server's descriptor count is steady, its open descriptors
(/proc/PID/fd) and resident memory (VmRSS) are the baseline. After the last connection has finished, and the
server's count has settled (at most `--settle-seconds`), they are measured again. Both times the server is first
left idle for `--idle-seconds` (70), so that its periodic work has run as on any idle server: it gives the
allocator's free memory back to the kernel once a minute.

Pass: every connection behaved as expected, the descriptors are back to the baseline, the RSS is within 10% of
the baseline, and the server exits 0 on SIGTERM. The summary gives counts per kind and ending, errors (with
samples), idle-close times, the descriptor and RSS figures and the server's connection gauges; the exit status
is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rawnet import (ROOT, Peer, ProtocolFailure, Server, client_tls_context, generate_certificates, http_request,
                    raise_open_file_limit, wire_request)

NS = "soak"
SLOTS = 4096
KINDS = ("ws", "wss", "rest", "sse")
ENDINGS = ("close", "reset", "half-close", "idle")
SSE_ENDINGS = ("close", "reset", "half-close")
CONNECTION_TIMEOUT = 60.0
CLOSE_TIMEOUT = 10.0
RSS_TOLERANCE = 0.10
GAUGES = ("canopy_connections", "canopy_wire_sessions", "canopy_event_streams", "canopy_listens", "canopy_views")
# The allocator's view of the heap (/.metrics): in use grows when the server holds more; free grows when the
# allocator keeps what was freed instead of giving it back, which shows in RSS alone.
HEAP = ("canopy_heap_in_use_bytes", "canopy_heap_free_bytes", "canopy_heap_mapped_bytes")


def plan(i: int) -> tuple[str, str]:
    """The kind and the ending of connection i."""
    kind = KINDS[i % len(KINDS)]
    endings = SSE_ENDINGS if kind == "sse" else ENDINGS
    return kind, endings[(i // len(KINDS)) % len(endings)]


class Soak:
    """Runs connections against the server and counts how they went."""

    def __init__(self, server: Server, tls, idle_timeout: float):
        self.server = server
        self.tls = tls
        self.idle_timeout = idle_timeout
        self.done: collections.Counter = collections.Counter()
        self.errors: collections.Counter = collections.Counter()
        self.error_samples: dict[str, int] = {}
        self.idle_close_seconds: dict[str, list[float]] = collections.defaultdict(list)
        self.sse_writes = 0
        self.active = 0

    # -- one connection -------------------------------------------------------------------------------------------

    async def connection(self, i: int) -> None:
        kind, ending = plan(i)
        self.active += 1
        try:
            async with asyncio.timeout(CONNECTION_TIMEOUT):
                if kind == "sse":
                    await self.sse(i, ending)
                elif kind == "rest":
                    await self.rest(i, ending)
                else:
                    await self.wire(i, ending, kind == "wss")
            self.done[kind, ending] += 1
        except Exception as error:  # every failure is counted and sampled, none stops the run
            self.errors[kind, ending] += 1
            sample = f"{kind}/{ending}: {type(error).__name__}: {error}"[:300]
            self.error_samples[sample] = self.error_samples.get(sample, 0) + 1
        finally:
            self.active -= 1

    async def wire(self, i: int, ending: str, tls: bool) -> None:
        peer = await Peer.open(self.server.tls_port if tls else self.server.port, self.tls if tls else None)
        try:
            await peer.wire_hello(NS)
            path = f"/soak/ws/k{i % SLOTS}"
            value = {"i": i, "kind": "wss" if tls else "ws"}
            await peer.send(wire_request(1, "q", {"p": path, "h": ""}) + wire_request(2, "p", {"p": path, "d": value})
                            + wire_request(3, "g", {"p": path, "q": {}}))
            responses = await peer.wire_responses({1, 2, 3})
            if any(responses[r].get("s") != "ok" for r in (1, 2, 3)):
                raise ProtocolFailure(f"not ok: {responses}")
            if responses[3].get("d") != value:
                raise ProtocolFailure(f"get returned {responses[3].get('d')!r}, put {value!r}")
            if ending == "reset":
                await self.reset_after_half(peer, wire_request(4, "p", {"p": path, "d": value}))
            else:
                await self.end(peer, ending, "wss" if tls else "ws",
                               lambda: peer.close_handshake(CLOSE_TIMEOUT), idle_rounds=2)
        finally:
            peer.abort()

    async def rest(self, i: int, ending: str) -> None:
        peer = await Peer.open(self.server.port)
        try:
            target = f"/soak/rest/k{i % SLOTS}.json?ns={NS}"
            value = {"i": i, "kind": "rest"}
            answers = [await peer.http("PUT", target, value), await peer.http("GET", target),
                       await peer.http("PATCH", target, {"p": i}), await peer.http("GET", target + "&shallow=true")]
            if any(status != 200 for status, _ in answers):
                raise ProtocolFailure(f"statuses {[status for status, _ in answers]}")
            if answers[1][1] != answers[0][1]:
                raise ProtocolFailure(f"GET returned {answers[1][1][:100]!r} after PUT {answers[0][1][:100]!r}")
            if ending == "reset":
                await self.reset_after_half(peer, http_request("PUT", target, value))
            else:
                await self.end(peer, ending, "rest", lambda: self.last_request(peer), idle_rounds=1)
        finally:
            peer.abort()

    async def sse(self, i: int, ending: str) -> None:
        peer = await Peer.open(self.server.port)
        try:
            target = f"/soak/sse/k{i % SLOTS}.json?ns={NS}"
            await peer.send(http_request("GET", target, headers={"Accept": "text/event-stream"}))
            status, headers = await peer.read_head()
            if status != 200 or headers.get("transfer-encoding") != "chunked":
                raise ProtocolFailure(f"stream answered {status} {headers}")
            events = EventReader(peer)
            name, _ = await events.next()
            if name != "put":
                raise ProtocolFailure(f"first event {name!r}")
            value = {"i": i, "kind": "sse"}
            writer = await Peer.open(self.server.port)
            try:
                status, _ = await writer.http("PUT", target, value, close=True)
                self.sse_writes += 1
                if status != 200:
                    raise ProtocolFailure(f"PUT for the stream answered {status}")
                await writer.wait_eof(CLOSE_TIMEOUT)
            finally:
                writer.abort()
            while (await events.next()) != ("put", {"path": "/", "data": value}):
                pass
            if ending == "reset":
                await self.reset_after_half(peer, http_request("GET", target))
            elif ending == "close":
                peer.writer.close()
                await peer.writer.wait_closed()
            else:  # half-close
                peer.half_close()
                await peer.wait_eof(CLOSE_TIMEOUT)
        finally:
            peer.abort()

    # -- endings --------------------------------------------------------------------------------------------------

    async def last_request(self, peer: Peer) -> None:
        status, _ = await peer.http("GET", "/.health", close=True)
        if status != 200:
            raise ProtocolFailure(f"last request answered {status}")
        await peer.wait_eof(CLOSE_TIMEOUT)

    @staticmethod
    async def reset_after_half(peer: Peer, message: bytes) -> None:
        """Sends the first half of `message`, lets the server read it, then resets the connection."""
        await peer.send(message[: len(message) // 2])
        await asyncio.sleep(0.05)
        peer.reset()

    async def end(self, peer: Peer, ending: str, kind: str, close, idle_rounds: int) -> None:
        """Ends a connection by `close()`, a half-close, or silence until the server closes it, which must take
        `idle_rounds` idle timeouts."""
        if ending == "close":
            await close()
        elif ending == "half-close":
            peer.half_close()
            await peer.wait_eof(CLOSE_TIMEOUT)
        else:
            started = time.monotonic()
            await peer.wait_eof(idle_rounds * self.idle_timeout + CLOSE_TIMEOUT)
            waited = time.monotonic() - started
            if waited < idle_rounds * self.idle_timeout - 0.5:
                raise ProtocolFailure(f"closed after {waited:.1f} s, before the idle timeout")
            self.idle_close_seconds[kind].append(waited)


class EventReader:
    """Server-sent events from a chunked stream."""

    def __init__(self, peer: Peer):
        self.peer = peer
        self.buffer = b""

    async def next(self) -> tuple[str, object]:
        while b"\n\n" not in self.buffer:
            chunk = await self.peer.read_chunk()
            if not chunk:
                raise ProtocolFailure("the stream ended")
            self.buffer += chunk
        event, self.buffer = self.buffer.split(b"\n\n", 1)
        fields = dict(line.split(b": ", 1) for line in event.split(b"\n"))
        return fields[b"event"].decode(), json.loads(fields[b"data"])


# -- running ----------------------------------------------------------------------------------------------------------

async def run_connections(soak: Soak, first: int, count: int, seconds: float, concurrency: int
                          ) -> tuple[float, float]:
    """Starts connections first … first + count - 1 evenly over `seconds` (later when `concurrency` are busy) and
    waits for all of them; returns the seconds until the last one started and until all had finished."""
    loop = asyncio.get_running_loop()
    slots = asyncio.Semaphore(concurrency)
    tasks = set()
    started = loop.time()
    for n in range(count):
        delay = started + n * seconds / count - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        await slots.acquire()
        task = asyncio.create_task(soak.connection(first + n))
        tasks.add(task)
        task.add_done_callback(lambda t: (slots.release(), tasks.discard(t)))
    last_started = loop.time() - started
    while tasks:
        await asyncio.gather(*list(tasks))
    return last_started, loop.time() - started


async def sample(server: Server, peaks: dict, trace: list, soak: Soak, started: float, stop: asyncio.Event) -> None:
    """Records the peak descriptors and RSS every second; every 30 s, adds the RSS and the heap figures to `trace`
    and prints a progress line."""
    last_print = time.monotonic()
    while not stop.is_set():
        fds, rss = server.open_descriptors(), server.resident_kib()
        peaks["fds"] = max(peaks.get("fds", 0), fds)
        peaks["rss"] = max(peaks.get("rss", 0), rss)
        if time.monotonic() - last_print >= 30:
            last_print = time.monotonic()
            heap = await metrics(server, HEAP)
            done = sum(soak.done.values())
            trace.append((time.monotonic() - started, done, rss, heap))
            print(f"  {time.monotonic() - started:6.0f} s: {done:,} done, "
                  f"{sum(soak.errors.values())} errors, {soak.active} open; server {fds} fds, {rss / 1024:.1f} MiB, "
                  f"heap in use {heap.get(HEAP[0], 0) / 2**20:.1f} MiB, free {heap.get(HEAP[1], 0) / 2**20:.1f} MiB",
                  file=sys.stderr, flush=True)
        try:
            await asyncio.wait_for(stop.wait(), 1)
        except asyncio.TimeoutError:
            pass


async def settle(server: Server, limit: float, target: int | None = None) -> int:
    """Waits until the server's descriptor count is `target` or lower (or, without a target, unchanged for 3 s),
    at most `limit` seconds; returns the count."""
    deadline = time.monotonic() + limit
    history = [server.open_descriptors()]
    while time.monotonic() < deadline:
        if target is not None and history[-1] <= target:
            break
        if target is None and len(history) >= 4 and len(set(history[-4:])) == 1:
            break
        await asyncio.sleep(1)
        history.append(server.open_descriptors())
    return history[-1]


async def metrics(server: Server, names=GAUGES) -> dict[str, float]:
    """The server's gauges `names` from /.metrics."""
    peer = await Peer.open(server.port)
    try:
        status, body = await peer.http("GET", "/.metrics", close=True)
    finally:
        peer.abort()
    values = {}
    for line in body.decode().splitlines():
        name, _, value = line.partition(" ")
        if name in names:
            values[name] = float(value)
    return values


def report(soak: Soak, options, timing: tuple[float, float], warmup: int, figures: dict, gauges: dict,
           trace: list, exit_status) -> bool:
    print(f"\nSoak: {options.connections:,} connections, the last started at {timing[0]:.0f} s (target "
          f"{options.seconds:.0f} s), all finished at {timing[1]:.0f} s; after {warmup:,} warm-up connections; "
          f"concurrency ≤ {options.concurrency}, idle timeout {options.idle_timeout:g} s")
    print(f"\n| kind | {' | '.join(ENDINGS)} | errors |")
    print(f"|---|{'---|' * len(ENDINGS)}---|")
    for kind in KINDS:
        cells = [f"{soak.done[kind, ending]:,}" if ending in (SSE_ENDINGS if kind == "sse" else ENDINGS) else "—"
                 for ending in ENDINGS]
        errors = sum(soak.errors[kind, ending] for ending in ENDINGS)
        print(f"| {kind} | {' | '.join(cells)} | {errors} |")
    print(f"\nplus {soak.sse_writes:,} short REST connections writing the SSE events")
    for kind, times in soak.idle_close_seconds.items():
        print(f"idle {kind}: closed by the server after {min(times):.1f} / {statistics.median(times):.1f} / "
              f"{max(times):.1f} s (min / median / max)")
    errors = sum(soak.errors.values())
    if soak.error_samples:
        print(f"\n{errors} errors:")
        for sample, times in sorted(soak.error_samples.items(), key=lambda item: -item[1])[:15]:
            print(f"  {times} × {sample}")
    fds_ok = figures["end_fds"] <= figures["base_fds"]
    rss_ok = figures["end_rss"] <= figures["base_rss"] * (1 + RSS_TOLERANCE)
    growth = figures["end_rss"] / figures["base_rss"] - 1
    print(f"\nserver descriptors: baseline {figures['base_fds']}, peak {figures['peak_fds']}, "
          f"end {figures['end_fds']} — {'ok' if fds_ok else 'LEAK'}")
    print(f"server RSS: baseline {figures['base_rss'] / 1024:.1f} MiB, peak {figures['peak_rss'] / 1024:.1f} MiB, "
          f"end {figures['end_rss'] / 1024:.1f} MiB ({growth:+.1%}) — {'ok' if rss_ok else 'GREW'}")
    heap_growth = figures["end_heap"].get(HEAP[0], 0) - figures["base_heap"].get(HEAP[0], 0)
    print(f"server heap in use: baseline {figures['base_heap'].get(HEAP[0], 0) / 2**20:.2f} MiB, end "
          f"{figures['end_heap'].get(HEAP[0], 0) / 2**20:.2f} MiB ({heap_growth / 2**10:+,.0f} KiB, "
          f"{heap_growth / max(options.connections, 1):+.2f} B per connection); free in the allocator: baseline "
          f"{figures['base_heap'].get(HEAP[1], 0) / 2**20:.2f} MiB, end {figures['end_heap'].get(HEAP[1], 0) / 2**20:.2f} MiB")
    print("\n| time | connections done | RSS | heap in use | heap free | heap mapped |")
    print("|---|---|---|---|---|---|")
    for seconds, done, rss, heap in trace:
        print(f"| {seconds:.0f} s | {done:,} | {rss / 1024:.1f} MiB | {heap.get(HEAP[0], 0) / 2**20:.2f} MiB | "
              f"{heap.get(HEAP[1], 0) / 2**20:.2f} MiB | {heap.get(HEAP[2], 0) / 2**20:.2f} MiB |")
    print("server gauges at the end (the /.metrics request itself is one connection): "
          + ", ".join(f"{name} {value:g}" for name, value in gauges.items()))
    print(f"server exit status after SIGTERM: {exit_status}")
    passed = fds_ok and rss_ok and errors == 0 and exit_status == 0
    print("PASSED" if passed else "FAILED")
    return passed


async def main_async(options) -> bool:
    limit = raise_open_file_limit()
    if limit < 4 * options.concurrency + 256:
        raise SystemExit(f"the open-file limit {limit} is too low for --concurrency {options.concurrency}")
    directory = Path(tempfile.mkdtemp(prefix="canopy-soak-"))
    certificate, key = generate_certificates(directory / "tls")
    server = Server(Path(options.binary), directory, directory / "data",
                    {"server": {"idleTimeoutSeconds": options.idle_timeout}}, tls=(certificate, key)).start()
    print(f"server pid {server.pid}, port {server.port}, TLS port {server.tls_port}, directory {directory}",
          file=sys.stderr)
    try:
        soak = Soak(server, client_tls_context(certificate), options.idle_timeout)
        rate = options.connections / options.seconds
        warmup = max(1, round(rate * options.warmup_seconds))
        await run_connections(soak, 0, warmup, options.warmup_seconds, options.concurrency)
        base_fds = await settle(server, options.settle_seconds)
        await asyncio.sleep(options.idle_seconds)
        base_rss = server.resident_kib()
        base_heap = await metrics(server, HEAP)
        print(f"warm-up: {warmup:,} connections, {sum(soak.errors.values())} errors; baseline {base_fds} fds, "
              f"{base_rss / 1024:.1f} MiB", file=sys.stderr)
        peaks: dict = {}
        trace: list = []
        stop = asyncio.Event()
        sampler = asyncio.create_task(sample(server, peaks, trace, soak, time.monotonic(), stop))
        timing = await run_connections(soak, warmup, options.connections, options.seconds, options.concurrency)
        stop.set()
        await sampler
        end_fds = await settle(server, options.settle_seconds, target=base_fds)
        await asyncio.sleep(options.idle_seconds)
        figures = {"base_fds": base_fds, "base_rss": base_rss, "end_fds": end_fds, "end_rss": server.resident_kib(),
                   "peak_fds": peaks["fds"], "peak_rss": peaks["rss"], "base_heap": base_heap,
                   "end_heap": await metrics(server, HEAP)}
        gauges = await metrics(server)
        exit_status = server.stop()
    finally:
        server.kill()  # when the run broke off: a stopped server is only reaped
    passed = report(soak, options, timing, warmup, figures, gauges, trace, exit_status)
    if passed:
        shutil.rmtree(directory)
    else:
        print(f"server log: {server.log_path}\n{server.log_tail()}", file=sys.stderr)
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=str(ROOT / ".build" / "release" / "canopy"))
    parser.add_argument("--connections", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--idle-timeout", type=float, default=5, help="server.idleTimeoutSeconds")
    parser.add_argument("--warmup-seconds", type=float, default=30)
    parser.add_argument("--settle-seconds", type=float, default=30)
    parser.add_argument("--idle-seconds", type=float, default=70,
                        help="idle time before each memory reading (the server trims the allocator once a minute)")
    options = parser.parse_args()
    sys.exit(0 if asyncio.run(main_async(options)) else 1)


if __name__ == "__main__":
    main()
