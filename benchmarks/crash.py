"""Crash consistency (issue 17): `kill -9` a release `canopy serve` while clients write, restart it on the same data
directory, and check that every acknowledged write is there.

    .venv/bin/python benchmarks/crash.py [--trials 100] [--min-delay 0.05] [--max-delay 2] [--seed S]
                                         [--binary .build/release/canopy]

One persistent data directory (`data.fsync: always`, a temporary directory kept when anything fails). Each trial:

1. start the server on it, without any repair (`canopy serve` has no repair option: a journal damaged before its
   tail stops start-up, see `JournalError.corrupt`); a start that fails or does not listen within 60 s is a start
   failure, and ends the run with the directory kept for inspection;
2. verify the previous trial's writes (below) over REST;
3. run the writers of this trial under `/crash/t<N>` of namespace `crash`: `--ws-writers` Firebase wire-protocol
   connections, each pipelining up to `--window` requests: puts (`p`) to keys of their own, merges (`m`) of two
   new keys, and every fifth request a put of `{"seq": S}` to its one key `last`; and `--rest-writers` keep-alive
   HTTP connections cycling PUT to a new key, PATCH of a new key, POST (a push id, learnt from the answer) and a
   PUT of `{"seq": S}` to `last`;
4. after a random delay (uniform in [--min-delay, --max-delay] seconds once every writer is connected),
   SIGKILL the server.

A write counts as acknowledged once its wire response is `ok` or its REST answer is 2xx. After the restart, for
each writer: every acknowledged write must be present with its value (lost otherwise); an unacknowledged one may
be present or absent, but nothing may be there that was never sent (phantom); `last` must hold the value of the
last acknowledged write to it or of a later one that was sent. After the last trial the server is started once
more, every trial is verified again, it is stopped with SIGTERM (exit 0), and `canopy export` (offline, no
`--repair`) must read the namespace and give the same tree.

Prints one line per trial (delay, writes sent and acknowledged, locations of unacknowledged writes found written,
lost, phantom, restart times) and the totals; the exit status is 1 on any lost or phantom write, start failure or
other error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rawnet import ROOT, Peer, ProtocolFailure, Server, wire_request

NS = "crash"
LAST_EVERY = 5  # every fifth request of a writer overwrites its `last` key
REST_OPS = ("PUT", "PATCH", "POST", "LAST")


def value(writer: str, seq: int) -> dict:
    """The value written by `writer`'s request `seq`: unique, and of varying size."""
    return {"w": writer, "s": seq, "pad": "x" * (seq % 40)}


@dataclass
class Writer:
    """What one writer sent and what was acknowledged; request `seq` is fully determined by (name, seq)."""

    name: str
    rest: bool
    sent: int = 0
    acked: set[int] = field(default_factory=set)
    push_ids: dict[str, int] = field(default_factory=dict)  # acknowledged POSTs: push id -> seq
    error: str | None = None  # a failure before the kill (a refused write, a protocol error)

    def is_last(self, seq: int) -> bool:
        return (seq % len(REST_OPS) == 3) if self.rest else (seq % LAST_EVERY == LAST_EVERY - 1)

    def locations(self, seq: int) -> dict[str, dict]:
        """The children of the writer's node request `seq` sets (a POST's name is not known in advance)."""
        if self.is_last(seq):
            return {}
        v = value(self.name, seq)
        if self.rest:
            operation = REST_OPS[seq % len(REST_OPS)]
            return {f"u{seq}": v} if operation == "PUT" else {f"m{seq}": v} if operation == "PATCH" else {}
        return {f"m{seq}a": v, f"m{seq}b": {"of": v}} if seq % 2 else {f"p{seq}": v}


# -- writers ----------------------------------------------------------------------------------------------------------

async def wire_writer(port: int, base: str, writer: Writer, window: int, connected: asyncio.Event) -> None:
    peer = await Peer.open(port)
    await peer.wire_hello(NS)
    connected.set()
    pending: dict[int, int] = {}  # request number -> seq
    while True:
        batch = b""
        while len(pending) < window:
            seq = writer.sent
            node = f"{base}/{writer.name}"
            if writer.is_last(seq):
                batch += wire_request(seq + 1, "p", {"p": f"{node}/last", "d": {"seq": seq}})
            elif seq % 2:
                batch += wire_request(seq + 1, "m", {"p": node, "d": writer.locations(seq)})
            else:
                batch += wire_request(seq + 1, "p", {"p": f"{node}/p{seq}", "d": value(writer.name, seq)})
            pending[seq + 1] = seq
            writer.sent += 1  # counted as sent before a byte of it leaves: it may or may not be applied
        if batch:
            await peer.send(batch)
        message = await peer.read_message()
        body = message.get("d", {}) if message.get("t") == "d" else {}
        if "r" in body:
            seq = pending.pop(body["r"])
            if body.get("b", {}).get("s") != "ok":
                raise ProtocolFailure(f"request {seq} answered {body}")
            writer.acked.add(seq)


async def rest_writer(port: int, base: str, writer: Writer, connected: asyncio.Event) -> None:
    peer = await Peer.open(port)
    connected.set()
    node = f"{base}/{writer.name}"
    while True:
        seq = writer.sent
        operation = REST_OPS[seq % len(REST_OPS)]
        writer.sent += 1
        if operation == "PUT":
            status, body = await peer.http("PUT", f"{node}/u{seq}.json?ns={NS}", value(writer.name, seq))
        elif operation == "PATCH":
            status, body = await peer.http("PATCH", f"{node}.json?ns={NS}", writer.locations(seq))
        elif operation == "POST":
            status, body = await peer.http("POST", f"{node}/posts.json?ns={NS}", value(writer.name, seq))
        else:
            status, body = await peer.http("PUT", f"{node}/last.json?ns={NS}", {"seq": seq})
        if not 200 <= status < 300:
            raise ProtocolFailure(f"{operation} {seq} answered {status} {body[:200]!r}")
        if operation == "POST":
            writer.push_ids[json.loads(body)["name"]] = seq
        writer.acked.add(seq)


async def run_writer(task, writer: Writer, killed: asyncio.Event) -> None:
    """Runs one writer until its connection dies; a failure before the kill is recorded as an error."""
    try:
        await task
    except Exception as error:  # the kill ends every writer with some connection error
        if not killed.is_set():
            writer.error = f"{type(error).__name__}: {error}"[:300]


# -- verification -----------------------------------------------------------------------------------------------------

@dataclass
class Check:
    lost: list[str] = field(default_factory=list)
    phantom: list[str] = field(default_factory=list)
    applied_unacked: int = 0  # locations of unacknowledged writes found written: the kill caught them in flight


def verify_writer(writer: Writer, node: object, check: Check) -> None:
    """Compares one writer's node in the restarted server's tree with what it sent and what was acknowledged."""
    node = dict(node) if isinstance(node, dict) else {}
    lasts = [seq for seq in range(writer.sent) if writer.is_last(seq)]
    acked_lasts = [seq for seq in lasts if seq in writer.acked]
    actual_last = node.pop("last", None)
    floor = max(acked_lasts, default=-1)
    if actual_last is None and floor >= 0:
        check.lost.append(f"{writer.name}/last: missing, {floor} acknowledged")
    elif actual_last is not None and (not isinstance(actual_last, dict) or actual_last.get("seq") not in lasts
                                      or actual_last["seq"] < floor):
        (check.lost if floor >= 0 else check.phantom).append(
            f"{writer.name}/last: {actual_last!r}, last acknowledged {floor}")
    posts = dict(node.pop("posts", None) or {})
    for name, seq in writer.push_ids.items():
        if posts.pop(name, None) != value(writer.name, seq):
            check.lost.append(f"{writer.name}/posts/{name} (POST {seq})")
    unacked_posts = {json.dumps(value(writer.name, seq), sort_keys=True)
                     for seq in range(2, writer.sent, len(REST_OPS)) if writer.rest and seq not in writer.acked}
    for name, data in posts.items():
        text = json.dumps(data, sort_keys=True)
        if text in unacked_posts:
            unacked_posts.remove(text)  # each unacknowledged POST may have been applied once
            check.applied_unacked += 1
        else:
            check.phantom.append(f"{writer.name}/posts/{name}: {data!r}")
    for seq in range(writer.sent):
        for key, expected in writer.locations(seq).items():
            actual = node.pop(key, None)
            if seq in writer.acked and actual != expected:
                check.lost.append(f"{writer.name}/{key}: {actual!r}, acknowledged {expected!r}")
            elif actual is not None and actual != expected:
                check.phantom.append(f"{writer.name}/{key}: {actual!r}, sent {expected!r}")
            elif actual is not None and seq not in writer.acked:
                check.applied_unacked += 1
    check.phantom += [f"{writer.name}/{key}: never written" for key in node]


async def verify_trial(port: int, trial: int, writers: list[Writer]) -> Check:
    peer = await Peer.open(port)
    try:
        status, body = await peer.http("GET", f"/crash/t{trial}.json?ns={NS}", close=True)
    finally:
        peer.abort()
    if status != 200:
        raise ProtocolFailure(f"GET of trial {trial} answered {status}")
    tree = json.loads(body) or {}
    check = Check()
    for writer in writers:
        verify_writer(writer, tree.pop(writer.name, None), check)
    check.phantom += [f"t{trial}/{name}: no such writer" for name in tree]
    return check


# -- trials -----------------------------------------------------------------------------------------------------------

@dataclass
class Trial:
    number: int
    delay: float
    writers: list[Writer]
    restart_seconds: float = 0.0  # from the restart after its kill until the server listened
    answer_seconds: float = 0.0  # … until the GET of its writes was answered (namespaces load in the background)
    check: Check | None = None

    @property
    def sent(self) -> int:
        return sum(w.sent for w in self.writers)

    @property
    def acked(self) -> int:
        return sum(len(w.acked) for w in self.writers)

    @property
    def errors(self) -> list[str]:
        return [f"{w.name}: {w.error}" for w in self.writers if w.error]


async def write_until_killed(server: Server, trial: Trial, window: int) -> None:
    base = f"/crash/t{trial.number}"
    killed = asyncio.Event()
    runs, connections = [], []
    for writer in trial.writers:
        connected = asyncio.Event()
        connections.append(connected)
        work = (rest_writer(server.port, base, writer, connected) if writer.rest
                else wire_writer(server.port, base, writer, window, connected))
        runs.append(asyncio.create_task(run_writer(work, writer, killed)))
    try:
        await asyncio.wait_for(asyncio.gather(*(event.wait() for event in connections)), 10)
    except asyncio.TimeoutError:
        pass  # a writer that could not connect has recorded its error
    await asyncio.sleep(trial.delay)
    killed.set()
    server.kill()
    await asyncio.wait_for(asyncio.gather(*runs), 30)


def start(server: Server) -> float:
    started = time.monotonic()
    server.start()
    return time.monotonic() - started


def print_trial(trial: Trial) -> None:
    check = trial.check
    print(f"| {trial.number} | {trial.delay:.2f} | {trial.sent:,} | {trial.acked:,} | {check.applied_unacked} | "
          f"{len(check.lost)} | {len(check.phantom)} | {trial.restart_seconds:.2f} / {trial.answer_seconds:.2f} | "
          f"{'; '.join(trial.errors)} |", flush=True)
    for line in (check.lost + check.phantom)[:10]:
        print(f"    {line}", flush=True)


async def main_async(options) -> bool:
    rng = random.Random(options.seed)
    directory = Path(tempfile.mkdtemp(prefix="canopy-crash-"))
    server = Server(Path(options.binary), directory, directory / "data", {"data": {"fsync": "always"}})
    print(f"data directory {directory / 'data'}, seed {options.seed}", file=sys.stderr)
    print("| trial | kill after (s) | writes sent | acknowledged | unacknowledged found | lost | phantom | "
          "restart: listening / writes read back (s) | errors |")
    print("|---|---|---|---|---|---|---|---|---|")
    trials: list[Trial] = []
    start_failures = 0
    try:
        for number in range(1, options.trials + 2):
            restart = start(server)
            listening = time.monotonic()
            if trials:
                trials[-1].restart_seconds = restart
                trials[-1].check = await verify_trial(server.port, trials[-1].number, trials[-1].writers)
                trials[-1].answer_seconds = restart + time.monotonic() - listening
                print_trial(trials[-1])
            if number > options.trials:
                break
            writers = ([Writer(f"ws{i}", rest=False) for i in range(options.ws_writers)]
                       + [Writer(f"rest{i}", rest=True) for i in range(options.rest_writers)])
            trial = Trial(number, rng.uniform(options.min_delay, options.max_delay), writers)
            await write_until_killed(server, trial, options.window)
            trials.append(trial)
        final = await final_checks(server, trials)
    except RuntimeError as failure:  # the server did not start on the data directory
        start_failures += 1
        final = None
        print(f"START FAILURE after trial {len(trials)}: {failure}")
    finally:
        server.kill()  # when the run broke off: a stopped server is only reaped
    lost = sum(len(t.check.lost) for t in trials if t.check)
    phantom = sum(len(t.check.phantom) for t in trials if t.check)
    errors = sum(len(t.errors) for t in trials)
    applied = sum(t.check.applied_unacked for t in trials if t.check)
    print(f"\n{len(trials)} trials: {sum(t.sent for t in trials):,} writes sent, "
          f"{sum(t.acked for t in trials):,} acknowledged, {applied:,} locations of unacknowledged writes found "
          f"written, {lost} lost, {phantom} phantom, "
          f"{start_failures} start failures, {errors} writer errors")
    for label, attribute in (("listening", "restart_seconds"), ("the trial's writes read back", "answer_seconds")):
        times = sorted(getattr(t, attribute) for t in trials if t.check)
        if times:
            print(f"restart to {label}: median {times[len(times) // 2]:.2f} s, max {times[-1]:.2f} s")
    if final:
        print(final)
    passed = not (lost or phantom or start_failures or errors) and final is not None and final.startswith("final")
    print("PASSED" if passed else "FAILED")
    if passed:
        shutil.rmtree(directory)
    else:
        print(f"data directory kept: {directory / 'data'}\nserver log tail:\n{server.log_tail()}", file=sys.stderr)
    return passed


async def final_checks(server: Server, trials: list[Trial]) -> str:
    """On the server started after the last kill: every trial verified once more, a clean SIGTERM, then an offline
    export matching the tree. Returns a line starting with "final" when all of it held."""
    for trial in trials:
        check = await verify_trial(server.port, trial.number, trial.writers)
        if check.lost or check.phantom:
            return f"FINAL CHECK of trial {trial.number}: {(check.lost + check.phantom)[:5]}"
    peer = await Peer.open(server.port)
    try:
        status, body = await peer.http("GET", f"/.json?ns={NS}&format=export", close=True)
    finally:
        peer.abort()
    status_code = server.stop()
    if status != 200 or status_code != 0:
        return f"FINAL: GET answered {status}, exit status after SIGTERM {status_code}"
    exported = subprocess.run([str(server.binary), "export", "--data-dir", str(server.data_dir), "--ns", NS],
                              capture_output=True, timeout=600)
    if exported.returncode != 0:
        return f"FINAL: canopy export failed: {exported.stderr.decode()[-500:]}"
    if json.loads(exported.stdout) != json.loads(body):
        return "FINAL: canopy export differs from the server's tree"
    return (f"final: all {len(trials)} trials verified again after a restart; SIGTERM exit 0; canopy export "
            f"(no --repair) read {len(exported.stdout):,} bytes, equal to the served tree")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=str(ROOT / ".build" / "release" / "canopy"))
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--ws-writers", type=int, default=4)
    parser.add_argument("--rest-writers", type=int, default=3)
    parser.add_argument("--window", type=int, default=32, help="outstanding requests per wire-protocol writer")
    parser.add_argument("--min-delay", type=float, default=0.05)
    parser.add_argument("--max-delay", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    options = parser.parse_args()
    sys.exit(0 if asyncio.run(main_async(options)) else 1)


if __name__ == "__main__":
    main()
