"""A cluster node's start after a long log (issue 28, "fast, bounded recovery"): 3 nats-server (R3 file streams) and
2 Canopy nodes on loopback; wrk writes small values to 4,096 rotating keys through node A for --seconds (the stream
grows by tens of thousands of entries, and a node stores a snapshot of the namespace in JetStream every
`cluster.snapshotEvery` positions), after --big seconds of 64 KiB values to 256 rotating keys (the log's bytes); node B is killed with SIGKILL and started again on the same directory, and timed until it
listens and until a REST read through it (which waits for the log's head) returns the last value written through A.

    .venv/bin/python benchmarks/cluster-rejoin.py [--binary PATH] [--big S (0)] [--seconds S (30)] [--rounds N (1)]

Prints one line per round: entries written, when B listened, when its first read was answered, and what B's log
says it restored and replayed.
"""

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Tests" / "Python"))

from cluster import NatsCluster, read_children, start_canopy_node  # noqa: E402

NAMESPACE = "rejoin"
SCRIPTS = Path(__file__).resolve().parent / "restart"


def write_through(node, seconds: int, script_name: str = "small.lua") -> int:
    """Runs wrk's PUTs of `script_name` (benchmarks/restart) through `node` for `seconds`; returns how many were
    answered."""
    target = f"http://{node.host}:{node.port}/"
    script = (SCRIPTS / script_name).read_text().replace("ns=restart", f"ns={NAMESPACE}")
    local = Path(tempfile.mkdtemp(prefix="canopy-rejoin-")) / "small.lua"
    local.write_text(script)
    output = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", "-s", str(local), target],
                            capture_output=True, text=True, check=True).stdout
    match = re.search(r"(\d+) requests in", output)
    return int(match.group(1)) if match else 0


def one_round(binary: str, big: int, seconds: int) -> str:
    directory = Path(tempfile.mkdtemp(prefix="canopy-rejoin-"))
    with NatsCluster(directory / "nats") as cluster:
        a, b = (start_canopy_node(binary, directory, cluster.urls, "--log-level", "info") for _ in range(2))
        try:
            large = write_through(a, big, "big.lua") if big > 0 else 0
            written = write_through(a, seconds)
            last = read_children(a, NAMESPACE, "/small", timeout=120)
            # B holds everything before it is killed, so that its restart has its own snapshot and tail to load.
            deadline = time.monotonic() + 120
            while read_children(b, NAMESPACE, "/small", timeout=120) != last:
                assert time.monotonic() < deadline, "B never caught up before the kill"
                time.sleep(0.2)
            b.kill()
            started = time.monotonic()
            b.port_file.unlink(missing_ok=True)
            b.log_path.rename(b.directory / "server.before.log")
            b.start()
            listening = time.monotonic() - started
            answered = None
            while answered is None:
                if read_children(b, NAMESPACE, "/small", timeout=300) == last:
                    answered = time.monotonic() - started
                else:
                    assert time.monotonic() - started < 300, "B's reads never reached A's last writes"
                    time.sleep(0.05)
            log = b.log_path.read_text(errors="replace")
            opened = [line for line in log.splitlines() if "opened namespace" in line and NAMESPACE in line]
            loaded = " ".join(re.findall(r"(replayed=\S+|snapshot_position=\S+|seconds=\S+)", opened[-1])) \
                if opened else "no 'opened namespace' line"
            return (f"{large:,} PUTs of 64 KiB ({large * 64 // 1024:,} MiB) and {written:,} small PUTs through A; B listening after {listening:.2f} s, first read with A's last "
                    f"writes after {answered:.2f} s ({loaded})")
        finally:
            for node in (a, b):
                node.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(Path(__file__).resolve().parent.parent / ".build/release/canopy"))
    parser.add_argument("--big", type=int, default=0)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=1)
    options = parser.parse_args()
    for round_number in range(1, options.rounds + 1):
        print(f"round {round_number}: {one_round(str(Path(options.binary).resolve()), options.big, options.seconds)}",
              flush=True)


if __name__ == "__main__":
    main()
