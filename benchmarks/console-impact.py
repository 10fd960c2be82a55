"""What an open web console costs a busy namespace (issue 16): fan-out to other clients with and without a console
watching the namespace, side by side in alternating rounds on one server.

The workload is `canopy bench fanout`: one writer as fast as a window of 256 allows (or `--rate`), 100
subscribers; the namespace must be busy (≥ 10,000 acknowledged writes/s) for the comparison to count. The
console is what the console page's one WebSocket does: it connects with `coalesce=250` (its listens get the view's
latest data at most every 250 ms), signs in with the admin credential, listens at the namespace's root and reads
everything. A browser is not started: on this 2-core machine its own CPU would be the difference measured.

    .venv/bin/python benchmarks/console-impact.py [--binary .build/release/canopy] [--rounds 3]

Prints a Markdown table: deliveries/s, the server's CPU time per delivery (steadier than rates on a shared
machine) and p99, per round and their medians, and what the console received.
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parent.parent
LATENCY_TO_MS = 0.001  # the report gives microseconds


def start_server(binary: str, directory: Path) -> tuple[subprocess.Popen, int]:
    port_file = directory / "port"
    process = subprocess.Popen(
        [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--port-file", str(port_file),
         "--data-dir", str(directory / "data"), "--log-level", "warning", "--namespaces", "*"],
        cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip().isdigit():
            return process, int(port_file.read_text())
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("the server did not start")


async def console(port: int, ns: str, stop: asyncio.Event, received: dict) -> None:
    """The console page's connection: coalesced, admin, listening at the root, reading everything."""
    url = f"ws://127.0.0.1:{port}/.ws?v=5&ns={ns}&coalesce=250"
    async with websockets.connect(url, max_size=None, origin=f"http://127.0.0.1:{port}") as socket:
        await socket.recv()  # hello
        await socket.send(json.dumps({"t": "d", "d": {"r": 1, "a": "auth", "b": {"cred": "owner"}}}))
        await socket.send(json.dumps({"t": "d", "d": {"r": 2, "a": "q", "b": {"p": "/", "h": ""}}}))
        while not stop.is_set():
            try:
                frame = await asyncio.wait_for(socket.recv(), 0.5)
            except asyncio.TimeoutError:
                continue
            received["frames"] += 1
            received["bytes"] += len(frame)


def bench(binary: str, port: int, pid: int, ns: str, options, report: Path) -> dict:
    """One fan-out run: paced at `--rate` for `--duration` seconds, or (rate 0) `--messages` as fast as a window
    of 256 unacknowledged writes allows."""
    pacing = (["--rate", str(options.rate), "--duration", str(options.duration)] if options.rate
              else ["--messages", str(options.messages)])
    subprocess.run(
        [binary, "bench", "fanout", "--url", f"ws://127.0.0.1:{port}", "--ns", ns,
         "--subscribers", str(options.subscribers), *pacing, "--window", "256", "--server-pid", str(pid),
         "--quiet", "--json", str(report)],
        check=True, timeout=600)
    return json.loads(report.read_text())


def figures(result: dict) -> tuple[float, float, float, float]:
    """Deliveries per second, acknowledged writes per second, p99 latency (ms) and server CPU nanoseconds per
    delivery from a bench report."""
    if result.get("lost") or result.get("failures"):
        raise RuntimeError(f"the run failed: lost {result.get('lost')}, {result.get('failures')}")
    return (float(result["deliveries_per_second"]), float(result["write_acks_per_second"]),
            float(result["latency"]["p99"]) * LATENCY_TO_MS, float(result["server"]["cpu_nanoseconds_per_delivery"]))


async def one_round(binary: str, port: int, pid: int, ns: str, with_console: bool, options, directory: Path) -> dict:
    stop = asyncio.Event()
    received = {"frames": 0, "bytes": 0}
    watcher = asyncio.create_task(console(port, ns, stop, received)) if with_console else None
    if watcher:
        await asyncio.sleep(0.5)
    report = directory / f"{ns}.json"
    started = time.monotonic()
    result = await asyncio.to_thread(bench, binary, port, pid, ns, options, report)
    elapsed = time.monotonic() - started
    stop.set()
    if watcher:
        await watcher
    deliveries, writes, p99, cpu = figures(result)
    return {"deliveries": deliveries, "writes": writes, "p99": p99, "cpu_ns": cpu, "console_frames_per_second": received["frames"] / elapsed,
            "console_bytes_per_second": received["bytes"] / elapsed}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=str(ROOT / ".build/release/canopy"), type=lambda p: str(Path(p).resolve()))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=int, default=0, help="writes/s (0: as fast as the server takes them)")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--subscribers", type=int, default=100)
    options = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="canopy-console-impact-"))
    process, port = start_server(options.binary, directory)
    rows = {False: [], True: []}
    try:
        for round_number in range(options.rounds):
            for with_console in (False, True):
                ns = f"busy-{round_number}-{'console' if with_console else 'alone'}"
                rows[with_console].append(await one_round(options.binary, port, process.pid, ns, with_console,
                                                          options, directory))
                print(f"round {round_number} {'with' if with_console else 'without'} console: "
                      f"{rows[with_console][-1]}", file=sys.stderr)
    finally:
        process.terminate()
        process.wait(10)
    alone = statistics.median(row["deliveries"] for row in rows[False])
    watched = statistics.median(row["deliveries"] for row in rows[True])
    print(f"| 1 writer, {options.subscribers} subscribers | deliveries/s (rounds) | server CPU ns per delivery "
          "(rounds) | acknowledged writes/s | p99 (ms) | console frames/s | console bytes/s |")
    print("|---|---|---|---|---|---|---|")
    for label, key in (("without a console", False), ("with a console watching the namespace", True)):
        runs = rows[key]
        each = ", ".join(f"{run['deliveries']:,.0f}" for run in runs)
        cpu = ", ".join(f"{run['cpu_ns']:.0f}" for run in runs)
        print(f"| {label} | {statistics.median(r['deliveries'] for r in runs):,.0f} ({each}) | "
              f"{statistics.median(r['cpu_ns'] for r in runs):.0f} ({cpu}) | "
              f"{statistics.median(r['writes'] for r in runs):,.0f} | {statistics.median(r['p99'] for r in runs):.1f} | "
              f"{statistics.median(r['console_frames_per_second'] for r in runs):.1f} | "
              f"{statistics.median(r['console_bytes_per_second'] for r in runs):,.0f} |")
    cpu_alone = statistics.median(row["cpu_ns"] for row in rows[False])
    cpu_watched = statistics.median(row["cpu_ns"] for row in rows[True])
    print(f"\nwith a console / without: deliveries/s {watched / alone:.3f}×, server CPU per delivery "
          f"{cpu_watched / cpu_alone:.3f}×")


asyncio.run(main())
