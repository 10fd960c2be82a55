"""Failover in cluster mode (issues 15 and 28): the longest gap between acknowledged writes when the namespace's
JetStream stream leader is killed or stalled (SIGSTOP for --stall-seconds, then SIGCONT, as a long pause or a frozen
VM would), and when the Canopy node a writer uses is killed, with the count of acknowledged writes lost (must be
0). The stream leader is killed twice: wherever JetStream placed it, and after it was moved to the
server that also leads JetStream's metadata (one kill then costs both elections). Real processes on loopback: 3 nats-server (R3 file streams) and 3 Canopy nodes.

    .venv/bin/python benchmarks/cluster-failover.py [--binary PATH] [--rounds N]

Prints one Markdown table row per fault. Uses the test harness in Tests/Python (cluster.py, the wire client).
"""

import argparse
import asyncio
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Tests" / "Python"))

import firebase_model as model  # noqa: E402
from cluster import (Connections, NatsCluster, Writer, move_stream_leader_to_meta_leader,  # noqa: E402
                     start_canopy_node, stream_leader, stream_of)
from rest_client import Rest  # noqa: E402


def longest_gap(times: list[float], since: float) -> float:
    """The longest gap between consecutive acknowledgements from the last one before `since` on."""
    before = [t for t in times if t < since]
    moments = sorted(([max(before)] if before else [since]) + [t for t in times if t >= since])
    return max((b - a for a, b in zip(moments, moments[1:])), default=0.0)


def describe_gap(writer: Writer, since: float) -> str:
    """When the longest gap from `since` on began and ended, on the wall clock (to find it in the servers' logs)."""
    to_wall = time.time() - time.monotonic()
    moments = sorted(writer.acked.values())
    pairs = [(a, b) for a, b in zip(moments, moments[1:]) if b >= since] or [(since, since)]
    start, end = max(pairs, key=lambda pair: pair[1] - pair[0])

    def clock(moment: float) -> str:
        wall = moment + to_wall
        return time.strftime("%H:%M:%S", time.localtime(wall)) + f"{wall % 1:.3f}"[1:]

    return f"{clock(start)}–{clock(end)} ({end - start:.2f} s; the fault at {clock(since)})"


async def lost(nodes, ns: str, writer: Writer, timeout: float = 30.0) -> int:
    """Acknowledged writes missing on some surviving node once every node had `timeout` seconds to apply them."""
    deadline = time.monotonic() + timeout
    while True:
        missing = 0
        for node in nodes:
            rest = Rest(node.port, ns)
            try:
                stored = model.normalize(rest.value("/")) or {}
            except TimeoutError:
                stored = {}  # still opening the namespace (catching up): nothing counts as there yet
            finally:
                rest.close()
            # The writer's children once (a lookup per write from the root copies every level: quadratic).
            written = model.children_of(model.get(stored, f"/w/{writer.name}"))
            missing += sum(1 for i in writer.acked if written.get(str(i)) != i)
        if missing == 0 or time.monotonic() > deadline:
            return missing
        await asyncio.sleep(0.2)


async def one_round(binary: str, fault: str, round_number: int, stall_seconds: float) -> tuple[float, int]:
    directory = Path(tempfile.mkdtemp(prefix="canopy-failover-"))
    ns = f"failover-{fault}-{round_number}"
    with NatsCluster(directory / "nats") as cluster:
        nodes = [start_canopy_node(binary, directory, cluster.urls) for _ in range(3)]
        try:
            async with Connections() as connections:
                writer = Writer("a", nodes, ns, connections, window=16)
                task = asyncio.create_task(writer.run())
                while len(writer.acked) < 200:
                    await asyncio.sleep(0.05)
                if fault == "stream-and-meta-leader":
                    await asyncio.to_thread(move_stream_leader_to_meta_leader, cluster, stream_of(ns))
                    while writer.acked_since(time.monotonic() - 1) == 0:
                        await asyncio.sleep(0.05)  # writes flow again after the moves
                killed_at = time.monotonic()
                if fault in ("stream-leader", "stream-and-meta-leader", "stream-leader-stall"):
                    leader = stream_leader(cluster, stream_of(ns))
                    print(f"  round {round_number}: stream leader {leader}, JetStream meta leader "
                          f"{cluster.meta_leader()}", file=sys.stderr)
                    index = next(i for i, s in enumerate(cluster.servers) if s.name == leader)
                    if fault == "stream-leader-stall":
                        process = cluster.servers[index].process
                        process.send_signal(signal.SIGSTOP)
                        try:
                            await asyncio.sleep(stall_seconds)
                        finally:
                            process.send_signal(signal.SIGCONT)
                    else:
                        cluster.kill(index)
                    survivors = nodes
                else:
                    used = next(node for node in nodes if node.name == writer.nodes_used[-1])
                    used.kill()
                    survivors = [node for node in nodes if node is not used]
                while writer.acked_since(killed_at) < 200 and time.monotonic() - killed_at < 40:
                    await asyncio.sleep(0.05)
                writer.stopping = True
                await asyncio.wait_for(task, 60)
                gap = longest_gap(list(writer.acked.values()), killed_at)
                print(f"  round {round_number}: {directory}: the longest gap {describe_gap(writer, killed_at)}, "
                      f"writing through {', '.join(writer.nodes_used)}", file=sys.stderr)
                if writer.acked_since(killed_at) == 0:
                    raise RuntimeError(f"no write acknowledged after the {fault} was killed")
                return gap, await lost(survivors, ns, writer)
        finally:
            for node in nodes:
                node.stop() if node.alive() else None


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=str(Path(__file__).resolve().parent.parent / ".build/release/canopy"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--faults", default="stream-leader,stream-and-meta-leader,stream-leader-stall,canopy-node")
    parser.add_argument("--stall-seconds", type=float, default=8.0)
    options = parser.parse_args()
    print("| fault | longest gap between acknowledgements (median; rounds) | acknowledged writes lost |")
    print("|---|---|---|")
    for fault in options.faults.split(","):
        results = [await one_round(options.binary, fault, r, options.stall_seconds) for r in range(options.rounds)]
        gaps = [gap for gap, _ in results]
        what = (f"SIGSTOP the stream leader for {options.stall_seconds:g} s" if fault == "stream-leader-stall"
                else f"kill -9 the {fault.replace('-', ' ')}")
        print(f"| {what} | {statistics.median(gaps):.2f} s; "
              f"{', '.join(f'{g:.2f}' for g in gaps)} s | {sum(l for _, l in results)} |", flush=True)


asyncio.run(main())
