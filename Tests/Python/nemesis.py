"""Nemesis runs: a cluster (3 ``nats-server`` + 3 ``canopy serve --cluster``, cluster.py's harness) under recording
clients (recording_client.py) while faults are injected at random; then the history checker (history_checker.py)
over everything recorded.

One fault at a time: a quiet while, then the next kind in a shuffled round of the kinds asked for, on a random
target, for a random time, healed (and acknowledgements flowing again) before the next:

- ``kill nats leader`` / ``kill nats follower``: kill -9 of the NATS server that leads the namespace's stream (or of
  another one), restarted on its store after a while;
- ``pause nats leader`` / ``pause nats follower``: SIGSTOP of that server, SIGCONT after a while (a GC pause, a
  frozen VM);
- ``kill canopy`` / ``pause canopy``: the same to a Canopy node (restarted on a new port: clients reconnect
  elsewhere meanwhile);
- ``partition nats leader`` / ``partition nats follower``: that NATS server cut off from the two others (its
  clients, Canopy nodes among them, still reach it), healed after a while;
- ``partition canopy``: a Canopy node cut off from every NATS server (its clients still reach it);
- ``jump canopy clock``: a Canopy node's wall clock moved 1 minute to 2 hours forward or back, then set right
  (NATS servers are Go programs, whose clocks cannot be moved from outside: clock_jumps.py).

Partitions need a ``NetworkLab`` (netlab.py): when a run asks for them, every NATS server and Canopy node runs in a
network namespace of its own, on a bridge, and a partition drops the packets between the hosts it separates. Clock
jumps need every Canopy node started with clock_jumps.py's library preloaded, its offset in a file of its own.

To add a fault kind: a ``Nemesis`` method that injects it, waits, heals it and returns its ``Fault``, and an entry in
``FAULTS``.

For each fault kind a run reports the longest gap between acknowledgements (of writes, compare-and-sets and
increments, by any client), and the longest a single one waited for its answer, during a fault of that kind or
after it until the next fault. Run as a script (``scripts/chaos RUNS SECONDS``), it prints a table per run and
exits non-zero when the checker found a violation or could not decide.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import random
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Awaitable, Callable

import pytest

import clock_jumps
from clock_jumps import WallClock
from cluster import CanopyNode, NatsCluster, start_canopy_node, stream_leader, stream_of
from netlab import NetworkLab, unavailable_reason
from conftest import canopy_binary
from firebase_wire import WireClient
from history_checker import DEFAULT_STEP_BUDGET, READ, Operation, Report, check_history
from recording_client import COUNTER_KEY, KEYS, RecordingClient, Recorder, SessionLost, read_stamps, rest_get

NAMESPACE = "chaos"
CLIENTS = 6
CANOPY_NODES = 3
OPEN_TIMEOUT = 30.0
LEADER_WAIT = 10.0  # a stream's leader election takes 4–9 s on NATS 2.9
RECOVERY_WAIT = 30.0
OVERTIME = 45.0  # how long a run may go on past its seconds to inject the faults asked for


class NodeFailed(RuntimeError):
    """A process of the cluster would not start again."""


@dataclass(frozen=True)
class FaultTiming:
    """Random ranges, in seconds: how long a killed process stays down, how long a paused one stays stopped, and
    how long the cluster is left alone between a fault's heal and the next fault; how far a clock jumps (either
    way) and how long it stays moved."""

    down: tuple[float, float] = (1.0, 4.0)
    pause: tuple[float, float] = (1.0, 8.0)
    quiet: tuple[float, float] = (2.0, 5.0)
    partition: tuple[float, float] = (2.0, 10.0)
    clock_jump: tuple[float, float] = (60.0, 7200.0)
    jumped: tuple[float, float] = (2.0, 10.0)


@dataclass(frozen=True)
class Fault:
    """One injected fault, with the run's clock (``Recorder.now``): from injection to healed."""

    kind: str
    target: str
    started: float
    healed: float


class ChaosCluster:
    """The processes of one run, under ``directory``, each in a network namespace of its own when ``partitions``
    are wanted, and each Canopy node with a wall clock of its own (``clocks``) when clock jumps are; ``heal``
    brings back whatever is stopped, dead, cut off or moved (and notes processes that died without the nemesis
    killing them)."""

    def __init__(self, binary: Path, directory: Path, partitions: bool = False, clocks: bool = False):
        self.binary = binary
        self.directory = directory
        self.partitions = partitions
        self.lab: NetworkLab | None = None
        self.nats: NatsCluster | None = None
        self.nodes: list[CanopyNode] = []
        self.clocks: dict[str, WallClock] = {}  # by node name, when clocks are wanted
        self.with_clocks = clocks
        self.paused: set[int] = set()  # pids under SIGSTOP
        self.problems: list[str] = []

    def start(self) -> None:
        if self.partitions:
            self.lab = NetworkLab()
        self.nats = NatsCluster(self.directory / "nats", lab=self.lab)
        self.nats.start()
        if self.with_clocks:
            (self.directory / "clocks").mkdir(exist_ok=True)
        for number in range(CANOPY_NODES):
            clock = WallClock(self.directory / "clocks" / f"c{number + 1}") if self.with_clocks else None
            # At notice level a node's log tells when it reaches the log again and when it read from the leader.
            node = start_canopy_node(self.binary, self.directory, self.nats.urls, "--log-level", "notice",
                                     lab_host=self.lab.add_host(f"c{number + 1}") if self.lab else None,
                                     environment=clock.environment() if clock else None)
            self.nodes.append(node)
            if clock:
                self.clocks[node.name] = clock

    def pause(self, process) -> None:
        process.send_signal(signal.SIGSTOP)
        self.paused.add(process.pid)

    def resume(self, process) -> None:
        process.send_signal(signal.SIGCONT)
        self.paused.discard(process.pid)

    def restart_node(self, node: CanopyNode) -> None:
        try:
            node.restart()
        except pytest.fail.Exception as failure:  # conftest's start reports through pytest.fail
            raise NodeFailed(f"canopy {node.name} would not start again: {failure}") from None

    def heal(self) -> None:
        if self.lab is not None:
            self.lab.heal()
        for clock in self.clocks.values():
            clock.restore()
        processes = [server.process for server in self.nats.servers] + [node.process for node in self.nodes]
        for process in processes:
            if process is not None and process.pid in self.paused:
                self.resume(process)
        for index, server in enumerate(self.nats.servers):
            if not server.alive():
                self.problems.append(f"nats {server.name} died by itself: {self.nats.log_tail(server, 600)}")
                self.nats.restart(index)
        self.nats.wait_ready(SETTLE_TIMEOUT)
        for node in self.nodes:
            if not node.alive():
                self.problems.append(f"canopy {node.name} died by itself: {node.log_tail(600)}")
                self.restart_node(node)

    def stop(self) -> None:
        try:
            if self.lab is not None:
                self.lab.heal()
            for node in self.nodes:
                if node.process is not None and node.process.pid in self.paused:
                    self.resume(node.process)
                code = node.stop()
                if code != 0:
                    self.problems.append(f"canopy {node.name} exited with {code} at the end: {node.log_tail(600)}")
            if self.nats is not None:
                for server in self.nats.servers:
                    if server.process is not None and server.process.pid in self.paused:
                        self.resume(server.process)
                self.nats.stop()
        finally:
            if self.lab is not None:
                self.lab.close()


class Nemesis:
    """Injects faults into a ``ChaosCluster`` (see the module's docstring), recording each."""

    def __init__(self, cluster: ChaosCluster, recorder: Recorder, rng: random.Random, kinds: list[str],
                 timing: FaultTiming):
        self.cluster = cluster
        self.recorder = recorder
        self.rng = rng
        self.kinds = kinds
        self.timing = timing
        self.faults: list[Fault] = []
        self.skipped: list[str] = []

    async def run(self, until: float, min_faults: int = 0) -> None:
        """Faults, one at a time, until the run's clock passes ``until`` and ``min_faults`` were injected, or for
        at most ``OVERTIME`` seconds more (a NATS outage after one fault can take half a short run: the run checks
        what it is for, so it goes on instead of ending with fewer faults)."""
        round_of_kinds: list[str] = []
        while True:
            await asyncio.sleep(self.rng.uniform(*self.timing.quiet))
            now = self.recorder.now()
            if now >= until and (len(self.faults) >= min_faults or now >= until + OVERTIME):
                return
            if not round_of_kinds:
                round_of_kinds = self.rng.sample(self.kinds, len(self.kinds))
            kind = round_of_kinds.pop()
            fault = await FAULTS[kind](self)
            if fault is None:
                self.skipped.append(kind)
                continue
            self.faults.append(fault)
            # The next fault waits for the cluster to acknowledge again, so each gap belongs to one fault.
            deadline = time.monotonic() + RECOVERY_WAIT
            while self.recorder.last_acknowledgement < fault.healed:
                if time.monotonic() > deadline:
                    self.cluster.problems.append(f"no acknowledgement within {RECOVERY_WAIT:g} s of healing {fault}")
                    break
                await asyncio.sleep(0.1)

    async def _nats_target(self, leader: bool) -> int | None:
        """The index of the NATS server leading the stream (``leader``) or of another one; None when the servers
        do not agree on a leader within ``LEADER_WAIT`` seconds."""
        servers = self.cluster.nats.servers
        deadline = time.monotonic() + LEADER_WAIT
        while not (name := await asyncio.to_thread(stream_leader, self.cluster.nats, stream_of(NAMESPACE))):
            if time.monotonic() > deadline:
                return None
            await asyncio.sleep(0.2)
        if leader:
            return next(index for index, server in enumerate(servers) if server.name == name)
        return self.rng.choice([index for index, server in enumerate(servers) if server.name != name])

    async def kill_nats(self, leader: bool) -> Fault | None:
        index = await self._nats_target(leader)
        if index is None:
            return None
        started = self.recorder.now()
        self.cluster.nats.kill(index)
        await asyncio.sleep(self.rng.uniform(*self.timing.down))
        await asyncio.to_thread(self.cluster.nats.restart, index)
        return Fault(f"kill nats {'leader' if leader else 'follower'}", self.cluster.nats.servers[index].name,
                     started, self.recorder.now())

    async def pause_nats(self, leader: bool) -> Fault | None:
        index = await self._nats_target(leader)
        if index is None:
            return None
        server = self.cluster.nats.servers[index]
        started = self.recorder.now()
        self.cluster.pause(server.process)
        await asyncio.sleep(self.rng.uniform(*self.timing.pause))
        self.cluster.resume(server.process)
        return Fault(f"pause nats {'leader' if leader else 'follower'}", server.name, started, self.recorder.now())

    async def kill_canopy(self) -> Fault:
        node = self.rng.choice(self.cluster.nodes)
        started = self.recorder.now()
        node.kill()
        await asyncio.sleep(self.rng.uniform(*self.timing.down))
        await asyncio.to_thread(self.cluster.restart_node, node)
        return Fault("kill canopy", node.name, started, self.recorder.now())

    async def pause_canopy(self) -> Fault:
        node = self.rng.choice(self.cluster.nodes)
        started = self.recorder.now()
        self.cluster.pause(node.process)
        await asyncio.sleep(self.rng.uniform(*self.timing.pause))
        self.cluster.resume(node.process)
        return Fault("pause canopy", node.name, started, self.recorder.now())

    async def partition_nats(self, leader: bool) -> Fault | None:
        """The NATS server leading the stream (or another one) cut off from the two others; its clients still
        reach it."""
        index = await self._nats_target(leader)
        if index is None:
            return None
        servers = self.cluster.nats.servers
        others = [server.lab_host for number, server in enumerate(servers) if number != index]
        return await self._partition(f"partition nats {'leader' if leader else 'follower'}", servers[index].name,
                                     [servers[index].lab_host], others)

    async def partition_canopy(self) -> Fault:
        """A Canopy node cut off from every NATS server; its clients still reach it."""
        node = self.rng.choice(self.cluster.nodes)
        return await self._partition("partition canopy", node.name, [node.lab_host],
                                     [server.lab_host for server in self.cluster.nats.servers])

    async def jump_canopy_clock(self) -> Fault:
        """A Canopy node's wall clock moved forward or back, then set right."""
        node = self.rng.choice(self.cluster.nodes)
        clock = self.cluster.clocks[node.name]
        seconds = self.rng.uniform(*self.timing.clock_jump) * self.rng.choice((-1, 1))
        started = self.recorder.now()
        clock.jump(seconds)
        try:
            await asyncio.sleep(self.rng.uniform(*self.timing.jumped))
        finally:
            clock.restore()
        return Fault("jump canopy clock", f"{node.name} {seconds:+.0f} s", started, self.recorder.now())

    async def _partition(self, kind: str, target: str, side: list, others: list) -> Fault:
        lab = self.cluster.lab
        started = self.recorder.now()
        await asyncio.to_thread(lab.partition, side, others)
        try:
            await asyncio.sleep(self.rng.uniform(*self.timing.partition))
        finally:
            await asyncio.to_thread(lab.heal)
        return Fault(kind, target, started, self.recorder.now())


FAULTS: dict[str, Callable[[Nemesis], Awaitable[Fault | None]]] = {
    "kill nats leader": lambda nemesis: nemesis.kill_nats(leader=True),
    "kill nats follower": lambda nemesis: nemesis.kill_nats(leader=False),
    "pause nats leader": lambda nemesis: nemesis.pause_nats(leader=True),
    "pause nats follower": lambda nemesis: nemesis.pause_nats(leader=False),
    "kill canopy": Nemesis.kill_canopy,
    "pause canopy": Nemesis.pause_canopy,
    "partition nats leader": lambda nemesis: nemesis.partition_nats(leader=True),
    "partition nats follower": lambda nemesis: nemesis.partition_nats(leader=False),
    "partition canopy": Nemesis.partition_canopy,
    "jump canopy clock": Nemesis.jump_canopy_clock,
}
PARTITIONS = {kind for kind in FAULTS if kind.startswith("partition ")}
CLOCK_JUMPS = {"jump canopy clock"}
NO_FAULT = "no fault"
# How long the servers may take to agree on a JetStream metadata leader once every fault is healed. After a
# partition of a NATS server heals, NATS 2.9 can keep two metadata leaders (the isolated server, whose elections
# raised its term, and the one the others elected) for half a minute, the third server following each in turn: 31 s
# in one 40 s run (docs/reliability.md, "Two metadata leaders after a partition").
SETTLE_TIMEOUT = 90.0
TABLE_HEADER = f"  {'fault':<22}{'injected':>9}{'longest ack gap':>17}{'longest wait':>16}"


@dataclass
class RunResult:
    """What one run did and what the checker found."""

    seconds: float
    seed: int
    history_path: Path
    report: Report
    faults: list[Fault]
    skipped: list[str]
    answered: list[tuple[float, float]]  # (invoked, answered) of writes, compare-and-sets and increments
    workload_end: float
    indeterminate: int
    problems: list[str] = field(default_factory=list)

    @property
    def violations(self) -> int:
        return len(self.report.violations)

    @property
    def lost(self) -> int:
        return sum(1 for violation in self.report.violations if violation.check == "lost write")

    @property
    def clean(self) -> bool:
        return not self.report.violations and not self.report.unknown_keys

    def _kind_at(self, moment: float) -> str:
        """The kind of the last fault that began before ``moment``, or ``no fault``. A fault begins only once
        acknowledgements flow again after the one before, so what ends in its window began just before or during
        it."""
        return next((fault.kind for fault in reversed(self.faults) if fault.started < moment), NO_FAULT)

    def longest_gaps(self) -> dict[str, float]:
        """Per fault kind, the longest gap between acknowledgements (by any client) that ended after a fault of
        that kind began and before the next one did, or the workload's end."""
        moments = [answered for _, answered in self.answered] + [self.workload_end]
        gaps = {NO_FAULT: 0.0} | {fault.kind: 0.0 for fault in self.faults}
        for earlier, later in zip(moments, moments[1:]):
            kind = self._kind_at(later)
            gaps[kind] = max(gaps[kind], later - earlier)
        return gaps

    def longest_waits(self) -> dict[str, float]:
        """Per fault kind, the longest a write, compare-and-set or increment waited for its answer, among those
        answered in the windows ``longest_gaps`` uses (those that got none are indeterminate)."""
        waits = {NO_FAULT: 0.0} | {fault.kind: 0.0 for fault in self.faults}
        for invoked, answered in self.answered:
            kind = self._kind_at(answered)
            waits[kind] = max(waits[kind], answered - invoked)
        return waits

    def table(self) -> str:
        gaps, waits = self.longest_gaps(), self.longest_waits()
        counts = {kind: sum(1 for fault in self.faults if fault.kind == kind) for kind in gaps}
        lines = [f"{self.report.operations:,} operations checked ({self.indeterminate:,} indeterminate), "
                 f"{self.report.events:,} listener events, {self.report.stamps:,} server-time stamps, "
                 f"{len(self.faults)} faults; "
                 f"{self.violations} violations, {self.lost} lost"
                 + (f", undecided keys: {', '.join(self.report.unknown_keys)}" if self.report.unknown_keys else "")
                 + f"; history {self.history_path}",
                 TABLE_HEADER]
        lines += [f"  {kind:<22}{counts[kind] if kind != NO_FAULT else '-':>9}{gaps[kind]:>15.2f} s"
                  f"{waits[kind]:>14.2f} s" for kind in sorted(gaps, key=lambda kind: (kind == NO_FAULT, kind))]
        if self.skipped:
            lines.append(f"  skipped (no stream leader within {LEADER_WAIT:g} s): {', '.join(self.skipped)}")
        lines += [f"  problem: {problem}" for problem in self.problems]
        if self.report.violations:
            lines.append(self.report.render())
        return "\n".join(lines)


async def open_namespace(nodes: list[CanopyNode]) -> None:
    """One acknowledged write through every node, so each has opened the namespace (and its stream exists) before
    the run starts measuring."""
    for node in nodes:
        client = await WireClient.connect(node.port, NAMESPACE, host=node.host, timeout=OPEN_TIMEOUT)
        try:
            assert (await client.put(f"/opened/{node.name[-8:]}", True, timeout=OPEN_TIMEOUT)).ok
        finally:
            await client.aclose()


async def final_reads(cluster: ChaosCluster, recorder: Recorder) -> None:
    """Every key read through every node once the faults are healed and the clients stopped (linearizable REST
    reads: they account for every acknowledged write)."""
    for node in cluster.nodes:
        failed = False
        for key in KEYS + (COUNTER_KEY,):
            process, invoked = f"final@{node.name[-8:]}", recorder.now()
            try:
                value = await asyncio.to_thread(rest_get, node, NAMESPACE, key)
            except SessionLost as lost:
                cluster.problems.append(f"final read after healing: {lost}")
                recorder.record(Operation(process, key, READ, invoked, None))
                failed = True
                continue
            recorder.record(Operation(process, key, READ, invoked, recorder.now(), value=value))
        if failed:
            cluster.problems.append(f"{node.name}'s log ends: {node.log_tail(1500)}")
    await fill_stamps(cluster, recorder)


async def fill_stamps(cluster: ChaosCluster, recorder: Recorder) -> None:
    """The server time of every stamp, read through every node (they must agree), into the history."""
    reads = {}
    for node in cluster.nodes:
        try:
            reads[node.name] = await asyncio.to_thread(read_stamps, node, NAMESPACE)
        except SessionLost as lost:
            cluster.problems.append(f"final read of the stamps after healing: {lost}")
    if len({json.dumps(read, sort_keys=True) for read in reads.values()}) > 1:
        cluster.problems.append(f"the nodes' stamps differ after healing: {sorted(reads)}")
    stamps = next(iter(reads.values()), {})
    recorder.history.stamps = [replace(stamp, value=stamps.get(stamp.name)) if stamp.name else stamp
                               for stamp in recorder.history.stamps]


async def run_chaos(binary: Path, directory: Path, seconds: float, seed: int, kinds: list[str],
                    timing: FaultTiming = FaultTiming(), budget: int = DEFAULT_STEP_BUDGET,
                    min_faults: int = 0) -> RunResult:
    """One run: start the cluster, record ``CLIENTS`` clients (spread over the nodes) for ``seconds`` under the
    nemesis (longer, up to ``OVERTIME``, until it injected ``min_faults``), heal, read every key through every
    node, stop, and check the history (saved as history.json)."""
    asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(CLIENTS + 8))
    rng = random.Random(seed)
    cluster = ChaosCluster(binary, directory, partitions=bool(PARTITIONS & set(kinds)),
                           clocks=bool(CLOCK_JUMPS & set(kinds)))
    try:
        await asyncio.to_thread(cluster.start)
        await open_namespace(cluster.nodes)
        recorder = Recorder()
        stopping = asyncio.Event()
        clients = [RecordingClient(number, cluster.nodes, NAMESPACE, recorder, random.Random(f"{seed}/{number}"),
                                   stopping, node_index=number) for number in range(1, CLIENTS + 1)]
        tasks = [asyncio.create_task(client.run()) for client in clients]
        nemesis = Nemesis(cluster, recorder, rng, kinds, timing)
        await nemesis.run(until=seconds, min_faults=min_faults)
        workload_end = recorder.now()
        await asyncio.to_thread(cluster.heal)
        stopping.set()
        await asyncio.gather(*tasks)
        await final_reads(cluster, recorder)
    finally:
        await asyncio.to_thread(cluster.stop)
    history_path = directory / "history.json"
    recorder.history.save(history_path)
    report = await asyncio.to_thread(check_history, recorder.history, budget)
    indeterminate = sum(1 for op in recorder.history.operations if op.completed is None)
    result = RunResult(seconds, seed, history_path, report, nemesis.faults, nemesis.skipped,
                       recorder.answered(), workload_end, indeterminate, cluster.problems)
    (directory / "faults.json").write_text(json.dumps([asdict(fault) for fault in nemesis.faults], indent=1))
    (directory / "report.txt").write_text(result.table() + "\n")
    return result


def main(arguments: list[str]) -> int:
    """``scripts/chaos``: RUNS runs of SECONDS each, a table per run and a summary; non-zero on a violation or an
    undecided key."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=20)
    parser.add_argument("seconds", nargs="?", type=float, default=60.0)
    parser.add_argument("--binary", type=Path, default=canopy_binary(), help="canopy (default: CANOPY_BIN, or the "
                        "debug build)")
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"comma-separated, of: {', '.join(FAULTS)}")
    parser.add_argument("--dir", type=Path, help="where each run's processes, logs and history go")
    parser.add_argument("--seed", type=int, default=int(time.time()), help="the first run's seed (then +1 per run)")
    options = parser.parse_args(arguments)
    kinds = options.faults.split(",")
    unknown = [kind for kind in kinds if kind not in FAULTS]
    if unknown:
        parser.error(f"unknown fault kinds: {', '.join(unknown)}")
    if PARTITIONS & set(kinds) and (reason := unavailable_reason()):
        kinds = [kind for kind in kinds if kind not in PARTITIONS]
        print(f"without partitions: {reason}", flush=True)
    if CLOCK_JUMPS & set(kinds) and (reason := clock_jumps.unavailable_reason()):
        kinds = [kind for kind in kinds if kind not in CLOCK_JUMPS]
        print(f"without clock jumps: {reason}", flush=True)
    if not kinds:
        return 1
    base = options.dir or Path(tempfile.mkdtemp(prefix="canopy-chaos-"))
    results = []
    for run in range(options.runs):
        directory = base / f"run-{run + 1}"
        directory.mkdir(parents=True)
        seed = options.seed + run
        result = asyncio.run(run_chaos(options.binary.resolve(), directory, options.seconds, seed, kinds))
        results.append(result)
        print(f"run {run + 1}/{options.runs} (seed {seed}, {options.seconds:g} s): {result.table()}", flush=True)
    print(summary(results))
    return 0 if all(result.clean for result in results) else 1


def summary(results: list[RunResult]) -> str:
    """All runs in one table: faults injected and the longest acknowledgement gap per kind, and the totals."""
    gaps: dict[str, float] = {}
    waits: dict[str, float] = {}
    counts: dict[str, int] = {}
    for result in results:
        for kind, gap in result.longest_gaps().items():
            gaps[kind] = max(gaps.get(kind, 0.0), gap)
        for kind, wait in result.longest_waits().items():
            waits[kind] = max(waits.get(kind, 0.0), wait)
        for fault in result.faults:
            counts[fault.kind] = counts.get(fault.kind, 0) + 1
    lines = [f"{len(results)} runs: {sum(r.report.operations for r in results):,} operations checked, "
             f"{sum(r.report.stamps for r in results):,} server-time stamps, "
             f"{sum(len(r.faults) for r in results)} faults, {sum(r.violations for r in results)} violations, "
             f"{sum(r.lost for r in results)} lost, {sum(len(r.report.unknown_keys) for r in results)} undecided keys",
             TABLE_HEADER]
    lines += [f"  {kind:<22}{counts.get(kind, '-'):>9}{gaps[kind]:>15.2f} s{waits[kind]:>14.2f} s"
              for kind in sorted(gaps, key=lambda kind: (kind == NO_FAULT, kind))]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
