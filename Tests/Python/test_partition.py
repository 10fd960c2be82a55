"""A Canopy node cut off from NATS by a network partition (netlab.py): no split brain.

Three ``nats-server`` and two Canopy nodes, A and B, each in a network namespace of its own; the test's clients
reach both nodes all along. While A is cut off from every NATS server (its packets to and from them dropped):

- a writer pipelining writes through A gets no acknowledgement, and keeps its connection (its writes may already
  be in the log: sending them again elsewhere could apply them twice);
- a writer on B keeps writing and is acknowledged;
- a client of A that only listens is sent away (its connection closed with 1001), and a new connection to A is
  closed at once, so that both go to a node that serves;
- a REST read through A gets no answer.

After the heal, the read that waited answers with every write B acknowledged before it was asked; A's writes are
acknowledged; reads through A show B's writes; and in the end both nodes hold every acknowledged write of both
writers, with its value. Every wait is for a condition, with a deadline.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import time

import pytest

from cluster import (Connections, NatsCluster, Writer, nats_server_binary, read_children, start_canopy_node,
                     nats_request, stream_leader, stream_of)
from conftest import canopy_binary
from firebase_wire import WireClient
from netlab import NetworkLab, unavailable_reason

pytestmark = [
    pytest.mark.skipif(nats_server_binary() is None, reason="nats-server is not installed (apt-get install nats-server)"),
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

NAMESPACE = "partition"
CUT_SECONDS = 10.0  # long enough for A to find its NATS connection stale (about 3 s) and tell its clients (2 s more)
ACKS_DURING_CUT = 100
DEADLINE = 60.0
IN_FLIGHT_GRACE = 1.0  # answers already on their way when the cut began may still arrive


def rest_value(node, path: str) -> dict:
    """The children of ``path`` read through ``node`` (REST: after the log's head)."""
    return read_children(node, NAMESPACE, path, timeout=DEADLINE)


async def until(condition, what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        await asyncio.sleep(0.05)


def acked_values(writer: Writer) -> dict[str, int]:
    return {str(number): number for number in writer.acked}


@contextlib.asynccontextmanager
async def lab_cluster(tmp_path):
    """Three NATS servers, each in a network namespace of a new ``NetworkLab``, started; yields the lab, the
    cluster, a list for the Canopy nodes the test starts, and the test's connections. Everything is stopped and
    removed at the end."""
    asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(8))
    with NetworkLab() as lab:
        cluster = NatsCluster(tmp_path / "nats", lab=lab)
        nodes = []
        connections = Connections()
        try:
            cluster.start()
            yield lab, cluster, nodes, connections
        finally:
            await connections.aclose()
            for node in nodes:
                node.stop()
            cluster.stop()


@pytest.mark.timeout(240)
async def test_a_node_cut_off_from_nats_acknowledges_nothing_and_catches_up(tmp_path):
    async with lab_cluster(tmp_path) as (lab, cluster, nodes, connections):
        a, b = (start_canopy_node(canopy_binary(), tmp_path, cluster.urls, lab_host=lab.add_host(name))
                for name in ("a", "b"))
        nodes += [a, b]
        writer_a = Writer("a", [a], NAMESPACE, connections)
        writer_b = Writer("b", [b], NAMESPACE, connections)
        tasks = [asyncio.create_task(writer.run()) for writer in (writer_a, writer_b)]
        await until(lambda: len(writer_a.acked) >= 20 and len(writer_b.acked) >= 20, "both writers acknowledged")
        listener = await connections.to(a, NAMESPACE)
        await listener.listen("/w/b")

        lab.partition([a.lab_host], [server.lab_host for server in cluster.servers])
        cut_at = time.monotonic()
        acked_by_a_at_cut = len(writer_a.acked)
        read_during_cut = asyncio.create_task(asyncio.to_thread(rest_value, a, "/w/b"))
        read_invoked_at = time.monotonic()
        b_acked_before_read = {number for number, at in writer_b.acked.items() if at < read_invoked_at}

        await listener.wait_closed(timeout=CUT_SECONDS)
        assert listener.close_code == 1001, (listener.close_code, listener.close_reason)
        refused_at = time.monotonic()
        newcomer = await WireClient.connect(a.port, NAMESPACE, host=a.host, wait_hello=False)
        try:
            await newcomer.wait_closed(timeout=5)
        finally:
            await newcomer.aclose()
        assert newcomer.close_code == 1001 and not newcomer._hello_event.is_set(), newcomer.close_code
        await until(lambda: time.monotonic() - cut_at >= CUT_SECONDS
                    and writer_b.acked_since(cut_at) >= ACKS_DURING_CUT,
                    "B kept acknowledging while A was cut off")
        heal_at = time.monotonic()
        assert not read_during_cut.done(), f"A answered a read while cut off: {read_during_cut}"
        acked_by_a_during_cut = [at for at in writer_a.acked.values() if cut_at + IN_FLIGHT_GRACE <= at]
        assert acked_by_a_during_cut == [], "A acknowledged writes while cut off"
        assert writer_a.client is not None and writer_a.client.close_code is None, \
            "A closed the connection of a writer whose writes await the log"
        lab.heal()

        b_value = await asyncio.wait_for(read_during_cut, DEADLINE)
        assert time.monotonic() >= heal_at
        missing = sorted(number for number in b_acked_before_read if str(number) not in b_value)
        assert missing == [], f"the read A answered after the heal misses B's writes {missing[:10]}"
        await until(lambda: len(writer_a.acked) > acked_by_a_at_cut + 20, "A acknowledges again after the heal")
        b_acked_now = set(writer_b.acked)
        caught_up = await asyncio.to_thread(rest_value, a, "/w/b")
        assert b_acked_now <= {int(key) for key in caught_up}, "A's reads miss B's writes after the heal"

        for writer in (writer_a, writer_b):
            writer.stopping = True
        await asyncio.wait_for(asyncio.gather(*tasks), DEADLINE)
        for node in nodes:
            for writer in (writer_a, writer_b):
                stored = await asyncio.to_thread(rest_value, node, f"/w/{writer.name}")
                lost = sorted(set(acked_values(writer).items()) - set(stored.items()))
                assert lost == [], f"{node.name} lacks acknowledged writes of {writer.name}: {lost[:10]}"
        print(f"cut {heal_at - cut_at:.1f} s: B acknowledged {writer_b.acked_since(cut_at)} writes, A none; "
              f"A's listener closed {refused_at - cut_at:.1f} s after the cut; "
              f"{len(writer_a.acked)} + {len(writer_b.acked)} acknowledged, none lost")


@pytest.mark.timeout(240)
async def test_a_get_through_a_node_whose_nats_server_is_cut_off_waits_for_the_log(tmp_path):
    """Node A talks to one NATS server, S, a follower of the stream; S is then cut off from the two others (A still
    reaches it), so A's replica stops following the log while node B's writer is acknowledged through the majority.
    A wire `get` through A sent during the cut gets no answer until the heal, and then holds every write B
    acknowledged before it was sent: a replica that lags is never read as if it were current."""
    async with lab_cluster(tmp_path) as (lab, cluster, nodes, connections):
        # S: the server A talks to; B talks to the two others, so that it keeps writing through the cut.
        s, others = cluster.servers[2], cluster.servers[:2]
        b = start_canopy_node(canopy_binary(), tmp_path, [server.url for server in others],
                              lab_host=lab.add_host("b"))
        nodes.append(b)
        writer_b = Writer("b", [b], NAMESPACE, connections)
        task = asyncio.create_task(writer_b.run())
        await until(lambda: len(writer_b.acked) >= 20, "B's writer acknowledged")
        # S must follow the stream: cut off while leading, it would stop the writes everywhere for a while.
        deadline = time.monotonic() + DEADLINE
        while (leader := await asyncio.to_thread(stream_leader, cluster, stream_of(NAMESPACE))) in ("", s.name):
            assert time.monotonic() < deadline, "S kept leading the stream"
            if leader == s.name:
                await asyncio.to_thread(nats_request, others[0],
                                        f"$JS.API.STREAM.LEADER.STEPDOWN.{stream_of(NAMESPACE)}")
            await asyncio.sleep(1.0)
        a = start_canopy_node(canopy_binary(), tmp_path, [s.url], lab_host=lab.add_host("a"))
        nodes.append(a)
        reader = await connections.to(a, NAMESPACE)
        before = await reader.get("/w/b", timeout=DEADLINE)
        assert before.ok, before

        lab.partition([s.lab_host], [server.lab_host for server in others])
        cut_at = time.monotonic()
        await until(lambda: writer_b.acked_since(cut_at) >= 100, "B kept acknowledging while S was cut off")
        invoked = time.monotonic()
        acked_before_get = {number for number, at in writer_b.acked.items() if at < invoked}
        get = asyncio.create_task(reader.get("/w/b", timeout=DEADLINE + 30))
        await until(lambda: time.monotonic() - cut_at >= 8 or get.done(), "the cut lasted")
        answered_during_cut = get.done()
        lab.heal()
        response = await asyncio.wait_for(get, DEADLINE + 30)
        assert response.ok, response
        seen = {int(key) for key in (response.data or {})}
        missing = sorted(acked_before_get - seen)
        assert missing == [], (f"a get through A {'during' if answered_during_cut else 'after'} the cut missed "
                               f"{len(missing)} writes B acknowledged before it was sent: {missing[:10]}")
        assert not answered_during_cut, "A answered a get from a replica that could not follow the log"
        writer_b.stopping = True
        await asyncio.wait_for(task, DEADLINE)
        print(f"the get sent {invoked - cut_at:.1f} s into the cut was answered after the heal with all "
              f"{len(acked_before_get)} writes acknowledged before it")
