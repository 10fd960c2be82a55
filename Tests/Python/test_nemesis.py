"""Short nemesis runs (nemesis.py) on a real cluster, 3 ``nats-server`` and 3 Canopy nodes: six recording clients
spread over the nodes read, write, compare-and-set and increment four keys and listen to them while processes are
killed -9 and restarted or paused (SIGSTOP/SIGCONT), the network is partitioned (netlab.py: skipped, with the
reason, where network namespaces cannot be made) and Canopy nodes' wall clocks jump (clock_jumps.py: skipped, with
the reason, without a C compiler); then the history checker must find every key linearizable, every listener
consistent with one order, no acknowledged write lost and none applied twice, and server time (timestamps and push
ids) never going back.

Sleeps only pace the faults: every verdict comes from the recorded history. The longest gap between
acknowledgements per fault kind is printed, not asserted (``scripts/chaos`` runs the long suite;
docs/reliability.md). Skipped when ``nats-server`` is not installed, like test_cluster.py.
"""

from __future__ import annotations

import pytest

import clock_jumps
from cluster import nats_server_binary
from conftest import canopy_binary
from history_checker import LINEARIZABLE
from nemesis import CLOCK_JUMPS, FAULTS, PARTITIONS, FaultTiming, RunResult, run_chaos
from netlab import unavailable_reason
from recording_client import COUNTER_KEY, KEYS

pytestmark = pytest.mark.skipif(nats_server_binary() is None,
                                reason="nats-server is not installed (apt-get install nats-server)")
SHORT_FAULTS = FaultTiming(down=(1.0, 3.0), pause=(1.0, 5.0), quiet=(1.0, 3.0), partition=(2.0, 8.0),
                           jumped=(2.0, 5.0))
needs_partitions = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")
needs_clocks = pytest.mark.skipif(clock_jumps.unavailable_reason() is not None,
                                  reason=clock_jumps.unavailable_reason() or "")
MIN_OPERATIONS = 500
MIN_STAMPS = 20


def assert_clean(result: RunResult, kinds: list[str], min_faults: int) -> None:
    print(result.table())
    assert result.report.violations == [], result.table()
    assert result.report.verdicts == {key: LINEARIZABLE for key in KEYS + (COUNTER_KEY,)}, result.table()
    assert result.problems == [], result.table()
    assert result.report.operations >= MIN_OPERATIONS and result.report.events > 0, result.table()
    assert result.report.stamps >= MIN_STAMPS, result.table()
    assert len(result.faults) >= min_faults and {fault.kind for fault in result.faults} <= set(kinds), \
        result.table()


@pytest.mark.timeout(165)
async def test_canopy_nodes_killed_and_paused(tmp_path):
    kinds = ["kill canopy", "pause canopy"]
    result = await run_chaos(canopy_binary(), tmp_path, 25, seed=28, kinds=kinds,
                             timing=SHORT_FAULTS, min_faults=2)
    assert_clean(result, kinds, min_faults=2)
    assert {fault.kind for fault in result.faults} == set(kinds), result.table()


@pytest.mark.timeout(195)
async def test_nats_servers_killed_and_paused(tmp_path):
    kinds = ["kill nats leader", "kill nats follower", "pause nats leader", "pause nats follower"]
    result = await run_chaos(canopy_binary(), tmp_path, 40, seed=2028, kinds=kinds,
                             timing=SHORT_FAULTS, min_faults=3)
    assert_clean(result, kinds, min_faults=3)


@needs_partitions
@pytest.mark.timeout(255)
async def test_every_fault_kind(tmp_path):
    kinds = [kind for kind in FAULTS if kind not in CLOCK_JUMPS or clock_jumps.unavailable_reason() is None]
    result = await run_chaos(canopy_binary(), tmp_path, 40, seed=20280, kinds=kinds,
                             timing=SHORT_FAULTS, min_faults=3)
    assert_clean(result, kinds, min_faults=3)


@needs_partitions
@pytest.mark.timeout(255)
async def test_network_partitions(tmp_path):
    """A NATS server (the stream's leader, or another) cut off from the two others, and a Canopy node cut off from
    every NATS server."""
    kinds = sorted(PARTITIONS)
    result = await run_chaos(canopy_binary(), tmp_path, 40, seed=28028, kinds=kinds,
                             timing=SHORT_FAULTS, min_faults=3)
    assert_clean(result, kinds, min_faults=3)


@pytest.mark.timeout(195)
async def test_nats_stream_leader_paused(tmp_path):
    """Issue 28's split: a paused, deposed stream leader keeps on resuming messages the others do not hold at
    those positions; a node whose consumer read that copy served a state split from the log's."""
    kinds = ["pause nats leader"]
    result = await run_chaos(canopy_binary(), tmp_path, 40, seed=5001, kinds=kinds,
                             timing=SHORT_FAULTS, min_faults=3)
    assert_clean(result, kinds, min_faults=3)


@needs_clocks
@pytest.mark.timeout(165)
async def test_canopy_clocks_jump(tmp_path):
    """A Canopy node's wall clock moved minutes to hours forward or back, then set right: server timestamps and
    push ids (the stamps) must not go back in the namespace's order, on that node or through the others."""
    kinds = sorted(CLOCK_JUMPS)
    result = await run_chaos(canopy_binary(), tmp_path, 25, seed=2831, kinds=kinds,
                             timing=SHORT_FAULTS, min_faults=2)
    assert_clean(result, kinds, min_faults=2)
    directions = {fault.target.split()[-2][0] for fault in result.faults}
    assert directions == {"+", "-"}, result.table()
