"""Rolling restarts under load: 3 ``nats-server`` and 3 Canopy nodes on loopback (cluster.py's harness), writers
pipelining acknowledged writes, and each Canopy node (then, if asked, each NATS server) restarted in turn with
SIGTERM while they write.

Each writer (``cluster.Writer``) starts on another node and, when its node goes, reconnects to the next one that
runs. Before the next restart, the restarted process must serve again: a Canopy node acknowledges a write of its
own, a NATS server is back in the cluster with a JetStream metadata leader, and every writer was acknowledged again.
At the end every acknowledged write is read back through every node (REST, after the log's head), and must be there
with its value.

The pause is measured twice over the restarts: the **longest gap between acknowledgements** of all writers merged
(how long the cluster acknowledged nothing), and the **longest gap of one writer** (what one client saw, its
reconnect included).

Run as a script for the measurement (``docs/reliability.md``)::

    .venv/bin/python Tests/Python/rolling_restart.py --binary .build/release/canopy --rounds 3 --nats
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from cluster import CanopyNode, Connections, NatsCluster, Writer, read_children, start_canopy_node
from conftest import canopy_binary
from firebase_wire import WireClient

NAMESPACE = "rolling"
WRITERS = 3
WINDOW = 16
STEADY_ACKS = 20  # each writer's acknowledgements after a restart before the next one
DEADLINE = 60.0


@dataclass
class RollingResult:
    """One rolling restart: what was restarted, the acknowledged writes, what was lost and the pauses."""

    restarts: list[str] = field(default_factory=list)
    # Per restart, the longest gap between acknowledgements of all writers merged that ended from its start until
    # the next restart's.
    gaps: list[float] = field(default_factory=list)
    acknowledged: int = 0
    lost: list[str] = field(default_factory=list)
    longest_gap: float = 0.0  # over all writers' acknowledgements merged
    longest_writer_gap: float = 0.0  # over each writer's own
    seconds: float = 0.0

    def summary(self) -> str:
        each = ", ".join(f"{restart} {gap:.2f} s" for restart, gap in zip(self.restarts, self.gaps))
        return (f"{len(self.restarts)} restarts ({each}) in {self.seconds:.1f} s: "
                f"{self.acknowledged:,} writes acknowledged, {len(self.lost)} lost; longest gap between "
                f"acknowledgements {self.longest_gap:.2f} s, longest gap of one writer {self.longest_writer_gap:.2f} s")


def longest_gap(moments: list[float]) -> float:
    ordered = sorted(moments)
    return max((later - earlier for earlier, later in zip(ordered, ordered[1:])), default=0.0)


async def until(condition, what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(0.05)


async def serves(node: CanopyNode) -> None:
    """Until ``node`` acknowledges a write of its own."""
    client = await WireClient.connect(node.port, NAMESPACE, host=node.host, timeout=DEADLINE)
    try:
        response = await client.put(f"/served/{node.name[-8:]}", True, timeout=DEADLINE)
        assert response.ok, response.status
    finally:
        await client.aclose()


async def steady(writers: list[Writer], tasks: list[asyncio.Task], since: float) -> None:
    """Until every writer was acknowledged ``STEADY_ACKS`` times since ``since``; a writer that failed fails it."""
    def done() -> bool:
        for task in tasks:
            if task.done():
                task.result()  # raises the writer's failure
                raise AssertionError("a writer stopped")
        return all(writer.acked_since(since) >= STEADY_ACKS for writer in writers)
    await until(done, "every writer acknowledged again")


async def rolling_restart(binary: Path, directory: Path, rounds: int = 1, nats: bool = False) -> RollingResult:
    """``rounds`` rolling restarts of the Canopy nodes (and of the NATS servers with ``nats``) under the writers;
    returns what happened (the caller asserts)."""
    result = RollingResult()
    cluster = NatsCluster(directory / "nats")
    nodes: list[CanopyNode] = []
    connections = Connections()
    tasks: list[asyncio.Task] = []
    writers: list[Writer] = []
    try:
        await asyncio.to_thread(cluster.start)
        nodes += [await asyncio.to_thread(start_canopy_node, binary, directory, cluster.urls) for _ in range(3)]
        for node in nodes:
            await serves(node)
        writers = [Writer(f"w{number}", nodes[number:] + nodes[:number], NAMESPACE, connections, window=WINDOW)
                   for number in range(WRITERS)]
        tasks = [asyncio.create_task(writer.run()) for writer in writers]
        await steady(writers, tasks, 0.0)
        began = time.monotonic()
        starts: list[float] = []
        for _ in range(rounds):
            for node in nodes:
                starts.append(time.monotonic())
                await asyncio.to_thread(node.restart)
                result.restarts.append(f"canopy {node.name[-8:]}")
                await serves(node)
                await steady(writers, tasks, time.monotonic())
            if nats:
                for index, server in enumerate(cluster.servers):
                    starts.append(time.monotonic())
                    await asyncio.to_thread(cluster.restart, index)
                    result.restarts.append(f"nats {server.name}")
                    await steady(writers, tasks, time.monotonic())
        ended = time.monotonic()
        for writer in writers:
            writer.stopping = True
        await asyncio.wait_for(asyncio.gather(*tasks), DEADLINE)
        result.seconds = ended - began
        during = [[at for at in writer.acked.values() if began <= at <= ended] for writer in writers]
        merged = sorted([at for moments in during for at in moments] + [began, ended])
        result.longest_gap = longest_gap(merged)
        for start, end in zip(starts, starts[1:] + [ended]):
            result.gaps.append(max((later - earlier for earlier, later in zip(merged, merged[1:])
                                    if start < later <= end), default=0.0))
        result.longest_writer_gap = max(longest_gap(moments + [began, ended]) for moments in during)
        result.acknowledged = sum(len(writer.acked) for writer in writers)
        for node in nodes:
            for writer in writers:
                stored = await asyncio.to_thread(read_children, node, NAMESPACE, f"/w/{writer.name}")
                result.lost += [f"{writer.name}/{number} on {node.name[-8:]}" for number in sorted(writer.acked)
                                if stored.get(str(number)) != number]
        return result
    finally:
        for writer in writers:
            writer.stopping = True
        for task in tasks:
            task.cancel()
        await connections.aclose()
        for node in nodes:
            await asyncio.to_thread(node.stop)
        await asyncio.to_thread(cluster.stop)


def main(arguments: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", type=Path, default=canopy_binary())
    parser.add_argument("--rounds", type=int, default=3, help="rolling restarts, one after the other (each a run)")
    parser.add_argument("--nats", action="store_true", help="restart the NATS servers in turn too")
    options = parser.parse_args(arguments)
    results = []
    for run in range(options.rounds):
        directory = Path(tempfile.mkdtemp(prefix="canopy-rolling-"))
        result = asyncio.run(rolling_restart(options.binary.resolve(), directory, nats=options.nats))
        results.append(result)
        print(f"run {run + 1}/{options.rounds}: {result.summary()}", flush=True)
    return 0 if all(not result.lost for result in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
