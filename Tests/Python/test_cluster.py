"""Cluster mode (``canopy serve --cluster nats://…``): Canopy nodes keeping each namespace's tree as a replica of a
JetStream stream (one R3 stream per namespace) on a real 3-node NATS cluster (the ``nats_cluster`` fixture).

Every write is published to the stream and applied by every node in stream order; the receiving node acknowledges
once it applied its own entry; reads and listens are answered from the node's replica. So clients on different
nodes must see one order, conditional writes and rules must decide alike everywhere, and no acknowledged write may
be lost when a Canopy node or the stream's leader dies. A node's replica lags the others' acknowledgements a little:
where a test reads one node after writing through another, it waits for the value with a deadline, never a sleep.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any, Awaitable, Callable

import pytest

import firebase_model as model
import total_order
from cluster import (CanopyNode, Connections, NatsCluster, Writer, nats_publish, nats_request, start_canopy_node,
                     stream_leader, stream_of, stream_state)
from conftest import canopy_binary
from firebase_wire import WireClient
from rest_client import ADMIN, HttpConnection, HttpResponse, Rest, build_request, pipeline, request
from total_order import acknowledgement_order

CONVERGE_TIMEOUT = 20.0  # a node applying what others acknowledged takes milliseconds; a leader election 4–9 s


class Nodes:
    """Canopy nodes of one test on the test's NATS cluster; at the end every node still running is stopped with
    SIGTERM, and a node that died without the test killing it (or did not exit cleanly) fails the test."""

    def __init__(self, cluster: NatsCluster, directory):
        self.cluster = cluster
        self.directory = directory
        self.started: list[CanopyNode] = []
        self.killed: set[int] = set()

    def start(self, *args: str) -> CanopyNode:
        node = start_canopy_node(canopy_binary(), self.directory, self.cluster.urls, *args)
        self.started.append(node)
        return node

    def kill(self, node: CanopyNode) -> None:
        """kill -9."""
        self.killed.add(id(node))
        node.kill()

    def finish(self) -> None:
        problems = []
        for node in self.started:
            if id(node) in self.killed:
                continue
            crashed = not node.alive() and node.exit_code is None
            code = node.stop()
            if crashed or code != 0:
                problems.append(f"node {node.name} {'died' if crashed else f'exited with {code}'}: "
                                f"{node.log_tail()}")
        if problems:
            pytest.fail("\n".join(problems))


@pytest.fixture
def nodes(nats_cluster, tmp_path):
    started = Nodes(nats_cluster, tmp_path)
    yield started
    started.finish()


def rest_tree(node: CanopyNode, ns: str | None) -> Any:
    """``GET /.json`` on ``node`` (as admin, so rules do not hide anything)."""
    rest = Rest(node.port, ns)
    try:
        return rest.value("/")
    finally:
        rest.close()


async def tree(node: CanopyNode, ns: str | None) -> Any:
    """``rest_tree`` normalized (REST answers objects with small integer keys as arrays)."""
    return model.normalize(await asyncio.to_thread(rest_tree, node, ns))


async def wait_until(condition: Callable[[], Awaitable[bool]], timeout: float, what: str,
                     describe: Callable[[], Awaitable[str]] | None = None) -> None:
    """Polls ``condition`` until it holds, failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not await condition():
        if time.monotonic() > deadline:
            detail = await describe() if describe else ""
            pytest.fail(f"{what}: not within {timeout}s. {detail}")
        await asyncio.sleep(0.05)


async def wait_trees(nodes: list[CanopyNode], ns: str | None, expected: Any, timeout: float = CONVERGE_TIMEOUT):
    """Until every node's ``GET /.json`` is ``expected``."""
    async def every_node_holds_it() -> bool:
        trees = [await tree(node, ns) for node in nodes]
        return all(model.nodes_equal(stored, expected) for stored in trees)

    async def describe() -> str:
        trees = [await tree(node, ns) for node in nodes]
        return " | ".join(f"{node.name}: {json.dumps(stored)[:300]}" for node, stored in zip(nodes, trees))

    await wait_until(every_node_holds_it, timeout, f"every node holding the expected tree of {ns}", describe)


# ---------------------------------------------------------------------------------------------------------------
# 1. One total order across nodes


@pytest.mark.timeout(90)
async def test_clients_on_three_nodes_observe_one_total_order(nodes, ns):
    """Two clients on each of three nodes write concurrently (pipelined sets, multi-path updates, transactions on
    one counter) while all listen at the root: the shared checker (total_order.py) sees one sequence on every
    client of every node, and each node's REST tree is the replay of that sequence."""
    started = [nodes.start() for _ in range(3)]
    async with Connections() as connections:
        clients = [await connections.to(node, ns) for node in started for _ in range(2)]
        workload = await total_order.run(clients, per_writer=250)
        trees = [await tree(node, ns) for node in started]
        order = total_order.check(clients, workload, trees)
        print(f"{len(order)} writes seen in one order by {len(clients)} clients on 3 nodes")


@pytest.mark.timeout(90)
async def test_a_rest_read_on_any_node_sees_what_another_node_acknowledged(nodes, ns):
    """A write acknowledged by one node, then at once a REST read through another: the read holds the write (a
    REST read waits until its node applied everything the log held when it arrived), 150 times round the nodes,
    with a wire client writing on a third node all along to keep the replicas busy."""
    started = [nodes.start() for _ in range(3)]
    rests = [Rest(node.port, ns) for node in started]
    try:
        async with Connections() as connections:
            noise = await connections.to(started[2], ns)
            stop = asyncio.Event()

            async def keep_writing() -> None:
                i = 0
                while not stop.is_set():
                    await noise.put(f"/noise/{i % 50}", i)
                    i += 1

            background = asyncio.create_task(keep_writing())

            def rounds() -> list[str]:
                stale = []
                for i in range(150):
                    writer, reader = rests[i % 3], rests[(i + 1) % 3]
                    response = writer.put("/seen", i, headers=ADMIN)
                    assert response.status == 200, response.describe()
                    read = reader.value("/seen")
                    if read != i:
                        stale.append(f"round {i}: read {read}")
                return stale

            try:
                stale = await asyncio.to_thread(rounds)
            finally:
                stop.set()
                await background
            assert stale == [], f"{len(stale)} of 150 reads did not see the write acknowledged just before: {stale[:5]}"
    finally:
        for rest in rests:
            rest.close()


# ---------------------------------------------------------------------------------------------------------------
# 2. Compare-and-set across nodes


def rest_increments(port: int, ns: str, count: int, deadline: float) -> int:
    """``count`` increments of /counter as the Admin SDK's REST transaction does them: GET with
    ``X-Firebase-ETag``, PUT with ``if-match``, on 412 retry from the body and ETag of the failure. Returns the
    number of conflicts."""
    rest = Rest(port, ns)
    conflicts = 0
    try:
        response = rest.get("/counter", headers={"X-Firebase-ETag": "true"})
        assert response.status == 200 and response.header("ETag"), response.describe()
        value, etag = response.json(), response.header("ETag")
        done = 0
        while done < count:
            assert time.monotonic() < deadline, f"{done} of {count} increments before the deadline"
            response = rest.put("/counter", (value or 0) + 1, headers={"if-match": etag})
            if response.status == 200:
                done += 1
                value, etag = response.json(), response.header("ETag")
            else:
                assert response.status == 412, response.describe()
                conflicts += 1
                value, etag = response.json(), response.header("ETag")
        return conflicts
    finally:
        rest.close()


async def wire_increments(client: WireClient, count: int) -> int:
    """``count`` increments of /counter with the wire protocol's compare-and-set (``p`` with ``h``): the value
    read, plus one, under the read value's hash; ``datastale`` means another write came first: read again."""
    conflicts = 0
    done = 0
    while done < count:
        value = (await client.get("/counter")).data
        response = await client.put("/counter", (value or 0) + 1, hash=model.node_hash(value))
        if response.ok:
            done += 1
        else:
            assert response.status == "datastale", response.inbound.text
            conflicts += 1
    return conflicts


@pytest.mark.timeout(90)
async def test_transactions_racing_on_three_nodes_end_at_the_exact_total(nodes, ns):
    """On each of three nodes one REST client (ETag / if-match) and one wire client (``h`` hash) increment the same
    counter 15 times, retrying on conflict: every node ends at exactly 6 × 15."""
    count = 15
    started = [nodes.start() for _ in range(3)]
    async with Connections() as connections:
        wire = [await connections.to(node, ns) for node in started]
        assert (await wire[0].put("/counter", 0)).ok
        await wait_trees(started, ns, {"counter": 0})
        deadline = time.monotonic() + 60
        conflicts = await asyncio.gather(
            *(asyncio.to_thread(rest_increments, node.port, ns, count, deadline) for node in started),
            *(wire_increments(client, count) for client in wire))
        total = count * 2 * len(started)
        print(f"{total} increments, {sum(conflicts)} conflicts retried (REST {conflicts[:3]}, wire {conflicts[3:]})")
        await wait_trees(started, ns, {"counter": total})


# ---------------------------------------------------------------------------------------------------------------
# 3. Rules decide alike everywhere

RULES = {
    "rules": {
        ".read": True,
        "limited": {"$k": {".write": "newData.isNumber() && newData.val() < 100"}},
        "rising": {".write": "newData.isNumber() && (!data.exists() || newData.val() > data.val())"},
    }
}


@pytest.mark.timeout(90)
async def test_rules_decide_alike_on_every_node(nodes, ns, tmp_path):
    """Three nodes with the same rules file. Right after connecting (as an SDK does, without waiting), each node's
    writer sends pipelined allowed and denied values to its own keys under /limited (the decision depends on the
    value only, so it is known beforehand); once a listener on each node listens to /rising, the writers race values
    there (allowed only above the current value: the decision depends on the order). Every writer gets exactly the
    expected ok/permission_denied; every node holds only the allowed values; the accepted /rising values are the
    same increasing sequence on every node's listener and exactly the ones acknowledged ok."""
    rules = tmp_path / "database.rules.json"
    rules.write_text(json.dumps(RULES))
    started = [nodes.start("--rules", str(rules)) for _ in range(3)]
    async with Connections() as connections:
        writers = [await connections.to(node, ns) for node in started]
        expected_status: list[list[tuple[str, Any, str, asyncio.Future]]] = [[] for _ in writers]
        expected_tree: dict[str, Any] = {}
        for j in range(30):
            for index, writer in enumerate(writers):
                key = f"c{index}k{j}"
                value = j * 7  # 0 … 203: allowed below 100
                allowed = value < 100
                future = await writer.send_request("p", {"p": f"/limited/{key}", "d": value})
                expected_status[index].append((key, value, "ok" if allowed else "permission_denied", future))
                if allowed:
                    expected_tree[key] = value
                    # A denied overwrite leaves the allowed value; a string is never allowed.
                    future = await writer.send_request("p", {"p": f"/limited/{key}", "d": 100 + j})
                    expected_status[index].append((key, 100 + j, "permission_denied", future))
                    future = await writer.send_request("p", {"p": f"/limited/{key}s", "d": str(j)})
                    expected_status[index].append((key + "s", str(j), "permission_denied", future))
        listeners = [await connections.to(node, ns) for node in started]
        for listener in listeners:
            _, response = await listener.listen("/rising")
            assert response.ok
        rising: list[list[tuple[int, asyncio.Future]]] = [[] for _ in writers]
        for j in range(30):
            for index, writer in enumerate(writers):
                value = index + 3 * j  # the three writers' values interleave
                rising[index].append((value, await writer.send_request("p", {"p": "/rising", "d": value})))
            await asyncio.sleep(0)
        wrong = []
        for index, client in enumerate(writers):
            for key, value, status, future in expected_status[index]:
                response = await client.wait_response(future, 30)
                if response.status != status:
                    wrong.append((f"node {index}", key, value, f"expected {status}, got {response.status}"))
        accepted = set()
        for index, client in enumerate(writers):
            for value, future in rising[index]:
                response = await client.wait_response(future, 30)
                assert response.status in ("ok", "permission_denied"), response.inbound.text
                if response.ok:
                    accepted.add(value)
        assert wrong == [], f"{len(wrong)} writes decided unexpectedly, e.g. {wrong[:8]}"

        def rising_values(client: WireClient) -> list[int]:
            return [push.payload.get("d") for push in client.pushes()
                    if model.segments(push.payload.get("p", "")) == ["rising"] and push.payload.get("d") is not None]

        for index, client in enumerate(listeners):
            await wait_until(lambda c=client: _synced_contains(c, accepted, rising_values), CONVERGE_TIMEOUT,
                             f"node {index}'s listener seeing every accepted /rising value")
        sequences = [rising_values(client) for client in listeners]
        assert all(sequence == sequences[0] for sequence in sequences), \
            f"the nodes applied /rising in different orders: {[s[:12] for s in sequences]}"
        assert sequences[0] == sorted(set(sequences[0])), f"/rising went down: {sequences[0][:20]}"
        assert set(sequences[0]) == accepted, \
            f"acknowledged ok but not applied, or applied but denied: {set(sequences[0]) ^ accepted}"
        print(f"/rising: {len(accepted)} of {sum(map(len, rising))} racing writes accepted, in one order")
        await wait_trees(started, ns, {"limited": expected_tree, "rising": max(accepted)})


FIRST_WRITES = [("/limited/first", 500, False)] + [("/limited/seq", value, True) for value in range(1, 21)] \
    + [("/limited/last", "text", False)]


@pytest.mark.timeout(90)
async def test_a_namespaces_first_writes_are_judged_by_its_rules_in_request_order(nodes, ns, tmp_path):
    """A node opens a namespace (and its stream) when the first client arrives. On each of three nodes a wire
    client and a REST client, each of a namespace new to the cluster, write at once and pipelined (as SDKs do): a
    denied value, 20 increasing allowed values of one location, a denied value. Each gets the rules' decisions and
    its answers in request order, and the location ends at the last value on every node."""
    rules = tmp_path / "database.rules.json"
    rules.write_text(json.dumps(RULES))
    started = [nodes.start("--rules", str(rules)) for _ in range(3)]

    async def wire_at_once(node: CanopyNode, namespace: str) -> list[str]:
        client = await connections.to(node, namespace)
        futures = [await client.send_request("p", {"p": path, "d": value}) for path, value, _ in FIRST_WRITES]
        responses = [await client.wait_response(future, 30) for future in futures]
        wrong = [f"{namespace}: {path}={value!r} got {response.status}"
                 for (path, value, allowed), response in zip(FIRST_WRITES, responses)
                 if response.status != ("ok" if allowed else "permission_denied")]
        acked = acknowledgement_order(client, {response.r for response in responses})
        if acked != sorted(acked):
            wrong.append(f"{namespace}: acknowledgements in the order {acked}")
        return wrong

    def rest_at_once(node: CanopyNode, namespace: str) -> list[str]:
        connection = HttpConnection(node.port, timeout=30)
        responses: list[HttpResponse] = []
        try:
            pipeline(connection, [build_request("PUT", f"{path}.json?ns={namespace}", json_body=value)
                                  for path, value, _ in FIRST_WRITES],
                     on_response=lambda index, response: responses.append(response))
        finally:
            connection.close()
        return [f"{namespace} (REST): {path}={value!r} got {response.status}"
                for (path, value, allowed), response in zip(FIRST_WRITES, responses)
                if response.status != (200 if allowed else 401)]

    wire_namespaces = [f"{ns}-w{index}" for index in range(len(started))]
    rest_namespaces = [f"{ns}-r{index}" for index in range(len(started))]
    async with Connections() as connections:
        results = await asyncio.gather(
            *(wire_at_once(node, namespace) for node, namespace in zip(started, wire_namespaces)),
            *(asyncio.to_thread(rest_at_once, node, namespace) for node, namespace in zip(started, rest_namespaces)))
        wrong = [problem for problems in results for problem in problems]
        stored = {namespace: await tree(node, namespace)
                  for node, namespace in zip(started * 2, wire_namespaces + rest_namespaces)}
        assert wrong == [], f"{len(wrong)} unexpected answers: {wrong[:8]}; trees: {stored}"
        for namespace in wire_namespaces + rest_namespaces:
            await wait_trees(started, namespace, {"limited": {"seq": 20}})


async def _synced_contains(client: WireClient, values: set[int], observed: Callable[[WireClient], list[int]]) -> bool:
    await client.sync()
    return values <= set(observed(client))


# ---------------------------------------------------------------------------------------------------------------
# Writers that survive losing their node


async def lacking(started: list[CanopyNode], ns: str, writers: list[Writer], timeout: float = CONVERGE_TIMEOUT) -> str:
    """Waits up to ``timeout`` for every acknowledged write of ``writers`` to be on every node in ``started``;
    returns ``""``, or which node lacks which writes."""
    async def missing_on(node: CanopyNode) -> list[str]:
        stored = await tree(node, ns) or {}
        return [f"/w/{writer.name}/{i}" for writer in writers for i in writer.acked
                if model.get(stored, f"/w/{writer.name}/{i}") != i]

    deadline = time.monotonic() + timeout
    while True:
        missing = [(node, await missing_on(node)) for node in started]
        if not any(m for _, m in missing):
            return ""
        if time.monotonic() > deadline:
            return f"{timeout}s after the last acknowledgement: " + " | ".join(
                f"{node.name} lacks {len(m)} acknowledged writes, e.g. {sorted(m)[:3]}" for node, m in missing if m)
        await asyncio.sleep(0.05)


async def every_node_holds(started: list[CanopyNode], ns: str, writers: list[Writer]) -> None:
    """Every acknowledged write of ``writers`` is on every node in ``started`` (waiting for each node to apply)."""
    problem = await lacking(started, ns, writers)
    assert not problem, problem


# ---------------------------------------------------------------------------------------------------------------
# 4. A Canopy node dies


@pytest.mark.timeout(90)
async def test_a_killed_nodes_ondisconnect_writes_run_on_the_survivors(nodes, ns):
    """A client on one node registers onDisconnect writes (a put and a merge); when that node is killed -9, the
    survivors run them within the stated bound (5 s of silence in the log, a 1 s heartbeat and check period, plus
    the log's latency), once, and a client that closes normally on a surviving node has its own run at once."""
    victim, survivor, watcher_node = nodes.start(), nodes.start(), nodes.start()
    async with Connections() as connections:
        doomed = await connections.to(victim, ns)
        assert (await doomed.put("/presence/alice", "online")).ok
        assert (await doomed.request("o", {"p": "/presence/alice", "d": "offline"})).ok
        assert (await doomed.request("om", {"p": "/last", "d": {"alice": {".sv": "timestamp"}}})).ok
        leaving = await connections.to(survivor, ns)
        assert (await leaving.request("o", {"p": "/presence/bob", "d": "gone"})).ok
        watcher = await connections.to(watcher_node, ns)
        view, _ = await watcher.listen("/presence")
        await leaving.close()
        await wait_until(lambda: _holds(view, {"alice": "online", "bob": "gone"}), 10,
                         "the closed connection's onDisconnect write on another node")
        killed_at = time.monotonic()
        nodes.kill(victim)
        await wait_until(lambda: _holds(view, {"alice": "offline", "bob": "gone"}), 20,
                         "the killed node's onDisconnect write run by the survivors")
        took = time.monotonic() - killed_at
        print(f"onDisconnect of a killed node ran after {took:.1f} s")
        assert 4.0 <= took <= 12.0, f"ran after {took:.1f} s: the bound is 5 s of silence plus about 2 s"
        for node in (survivor, watcher_node):
            stored = await tree(node, ns)
            assert model.get(stored, "/presence") == {"alice": "offline", "bob": "gone"}
            assert isinstance(model.get(stored, "/last/alice"), (int, float))
        pushes = [p for p in watcher.pushes() if p.path == "/presence/alice" and p.payload.get("d") == "offline"]
        assert len(pushes) == 1, f"the dead node's write ran {len(pushes)} times"


async def _holds(view, expected) -> bool:
    return view.cache == expected


@pytest.mark.timeout(90)
async def test_killing_a_node_loses_no_acknowledged_write(nodes, ns):
    """Two writers on each of three nodes; kill -9 one node mid-stream. Its writers reconnect to another node and
    go on; every acknowledged write is on both surviving nodes, whose trees end equal."""
    started = [nodes.start() for _ in range(3)]
    victim = started[0]
    async with Connections() as connections:
        writers = [Writer(f"n{index}w{k}", started[index:] + started[:index], ns, connections)
                   for index in range(3) for k in range(2)]
        await open_namespace(connections, started, ns)
        tasks = [asyncio.create_task(writer.run()) for writer in writers]
        await wait_until(lambda: _done_or(tasks, lambda: all(len(w.acked) >= 50 for w in writers)), 30,
                         "50 acknowledged writes per writer")
        nodes.kill(victim)
        killed_at = time.monotonic()
        await wait_until(lambda: _done_or(tasks, lambda: all(w.acked_since(killed_at) >= 100 for w in writers)), 40,
                         "100 acknowledged writes per writer after the kill")
        resumed = max(min(at for at in w.acked.values() if at > killed_at) for w in writers) - killed_at
        for writer in writers:
            writer.stopping = True
        await asyncio.gather(*tasks)
        survivors = started[1:]
        for writer in writers[:2]:
            assert len(writer.nodes_used) == 2 and writer.nodes_used[1] != victim.name, writer.nodes_used
        await every_node_holds(survivors, ns, writers)
        final = await tree(survivors[0], ns)
        await wait_trees(survivors, ns, final)
        print(f"{sum(len(w.acked) for w in writers)} acknowledged writes, all on both survivors; every writer "
              f"acknowledged again {resumed:.2f}s after the kill")


async def open_namespace(connections: Connections, started: list[CanopyNode], ns: str) -> None:
    """One acknowledged write through every node: each has opened the namespace (and its stream exists) before
    the test's clients start, so what follows measures the fault, not the namespace's opening."""
    for node in started:
        client = await connections.to(node, ns)
        assert (await client.put(f"/opened/{node.name[-8:]}", True, timeout=30)).ok


async def _done_or(tasks: list[asyncio.Task], condition: Callable[[], bool]) -> bool:
    """``condition()``, but a writer that failed fails the wait at once with its error."""
    for task in tasks:
        if task.done():
            task.result()
            raise AssertionError("a writer stopped early")
    return condition()


# ---------------------------------------------------------------------------------------------------------------
# 5. The stream's leader dies


@pytest.mark.timeout(90)
async def test_killing_the_stream_leader_pauses_writes_and_loses_none(nodes, nats_cluster, ns):
    """A client writes steadily (8 in flight) through one node while a client of another node listens; kill -9 the
    NATS server leading the namespace's stream. Writes resume after the election, no acknowledged write is lost,
    the longest pause between acknowledgements is printed (and under 20 s), and the writes still take effect and
    are acknowledged in the order the client sent them."""
    started = [nodes.start() for _ in range(2)]
    async with Connections() as connections:
        await open_namespace(connections, started, ns)
        listener = await connections.to(started[1], ns)
        _, response = await listener.listen("/w")
        assert response.ok
        writer = Writer("steady", [started[0]], ns, connections)
        task = asyncio.create_task(writer.run())
        await wait_until(lambda: _done_or([task], lambda: len(writer.acked) >= 200), 30, "200 acknowledged writes")
        stream = stream_of(ns)
        leader = ""

        async def leader_known() -> bool:
            nonlocal leader
            leader = await asyncio.to_thread(stream_leader, nats_cluster, stream)
            return bool(leader)

        await wait_until(leader_known, 10, f"the leader of {stream}")
        index = next(i for i, server in enumerate(nats_cluster.servers) if server.name == leader)
        meta_leader = nats_cluster.meta_leader()
        nats_cluster.kill(index)
        killed_at = time.monotonic()
        print(f"killed {leader}, the leader of {stream}" + (" and the metadata leader" if meta_leader == leader else ""))
        await wait_until(lambda: _done_or([task], lambda: writer.acked_since(killed_at) >= 300), 40,
                         f"300 acknowledged writes after killing {leader}")
        writer.stopping = True
        await task
        times = sorted(writer.acked.values())
        gaps = [(b - a, a) for a, b in zip(times, times[1:])]
        gap, gap_start = max(gaps)
        new_leader = await asyncio.to_thread(stream_leader, nats_cluster, stream)
        print(f"stream leader {leader} killed; new leader {new_leader or '?'}; longest gap between acknowledgements "
              f"{gap:.2f}s, starting {gap_start - killed_at:+.2f}s from the kill; {len(times)} writes acknowledged "
              f"(writer's node {started[0].name}, listener's node {started[1].name})")
        problems = []
        if gap >= 20:
            problems.append(f"writes stalled for {gap:.1f}s")
        if lost := await lacking(started, ns, [writer]):
            problems.append(lost)
        order = [int(model.segments(push.payload["p"])[-1]) for push in listener.pushes()
                 if model.segments(push.payload.get("p", ""))[:2] == ["w", "steady"]]
        if order != sorted(order):
            first = next(i for i in range(len(order) - 1) if order[i] > order[i + 1])
            problems.append(f"the writes took effect out of the order the client sent them: the listener saw "
                            f"{order[max(0, first - 2):first + 4]}")
        acked = acknowledgement_order(writer.client, set(writer.requests))
        if acked != sorted(acked):
            first = next(i for i in range(len(acked) - 1) if acked[i] > acked[i + 1])
            problems.append(f"acknowledgements out of request order: requests {acked[max(0, first - 2):first + 4]}")
        assert problems == [], "; ".join(problems)


# ---------------------------------------------------------------------------------------------------------------
# 6. A node restarts


@pytest.mark.timeout(90)
async def test_a_restarted_node_catches_up_before_it_serves(nodes, ns):
    """Write through all three nodes (to this test's namespace and to the default one); stop one; write through the
    other two; restart it with the same flags. Its first answers (REST GET /.json) are the others' trees, including
    the writes made while it was down; then a write through it reaches the others."""
    started = [nodes.start() for _ in range(3)]
    expected: dict[str | None, dict] = {ns: {}, None: {}}  # None: the default namespace (no ns parameter)

    def put(node: CanopyNode, namespace: str | None, path: str, value: Any) -> None:
        rest = Rest(node.port, namespace)
        try:
            response = rest.put(path, value)
            assert response.status == 200, response.describe()
        finally:
            rest.close()
        parts = model.segments(path)
        expected[namespace].setdefault(parts[0], {})[parts[1]] = value

    def write_through(writers: list[CanopyNode], phase: str) -> None:
        for namespace in (ns, None):
            for index, node in enumerate(writers):
                for i in range(20):
                    put(node, namespace, f"/{phase}/{node.name[-8:]}-{i}", {"i": i, "by": index})

    await asyncio.to_thread(write_through, started, "before")
    down = started[2]
    assert down.stop() == 0, down.log_tail()
    await asyncio.to_thread(write_through, started[:2], "during")
    for namespace in (ns, None):
        await wait_trees(started[:2], namespace, expected[namespace])
    down.restart()
    # Its first answers, for both namespaces, before anything else asks it.
    firsts = {namespace: await tree(down, namespace) for namespace in (None, ns)}
    wrong = [f"{namespace or 'default'}: {json.dumps(first)[:200]}" for namespace, first in firsts.items()
             if not model.nodes_equal(first, expected[namespace])]
    assert wrong == [], f"the restarted node's first answers are not the cluster's trees (each has " \
        f"{len(expected[ns]['before'])} writes from before and {len(expected[ns]['during'])} from while it was down): " \
        + " | ".join(wrong)
    await asyncio.to_thread(put, down, ns, "/after/x", 1)
    await wait_trees(started, ns, expected[ns])


def root_etag_and_tree(node: CanopyNode, ns: str) -> tuple[str, Any]:
    """The root's ETag (its hash) and tree, in one ``GET /.json`` as admin."""
    rest = Rest(node.port, ns)
    try:
        response = rest.get("/", headers={**ADMIN, "X-Firebase-ETag": "true"})
        assert response.status == 200, response.describe()
        return response.header("ETag") or "", model.normalize(response.json())
    finally:
        rest.close()


@pytest.mark.timeout(120)
async def test_the_second_snapshot_survives_its_own_purge_and_a_new_node_restores_it(nodes, nats_cluster, ns):
    """A node stores a snapshot every 50 log positions. Storing the second one purges the log below the first and
    the snapshot stream below the first's chunks, which start at sequence 1: the stream must still hold the second
    snapshot whole (nats-server 2.9 empties a whole stream for a purge below sequence 1). A node started then
    restores it, replays the rest, and serves the same tree."""
    first = nodes.start("--cluster-snapshot-every", "50")
    stream, snapshots = stream_of(ns), "CANOPYS_" + ns.encode("utf-8").hex()
    rest = Rest(first.port, ns)
    try:
        for i in range(110):  # positions up to about 111: snapshots at 50 and 100, none at 150
            response = await asyncio.to_thread(rest.put, f"/items/k{i}", {"i": i}, headers=ADMIN)
            assert response.status == 200, response.describe()
    finally:
        rest.close()

    async def log_purged() -> bool:
        return await asyncio.to_thread(lambda: stream_state(nats_cluster, stream).get("first_seq", 0) > 1)

    await wait_until(log_purged, CONVERGE_TIMEOUT, f"JetStream purging {stream} below the first snapshot",
                     lambda: asyncio.to_thread(lambda: json.dumps(stream_state(nats_cluster, stream))))
    held = await asyncio.to_thread(stream_state, nats_cluster, snapshots)
    assert held.get("messages", 0) >= 2, f"the snapshot stream lost its newest snapshot: {json.dumps(held)}"
    second = nodes.start("--cluster-snapshot-every", "50")
    trees = [await asyncio.to_thread(root_etag_and_tree, node, ns) for node in (second, first)]
    assert trees[0] == trees[1] and len(trees[0][1]["items"]) == 110, str(trees)[:300]


@pytest.mark.timeout(150)
async def test_a_node_restarted_from_a_snapshot_serves_the_same_root_hash(nodes, nats_cluster, ns):
    """Three nodes store a snapshot every 50 log positions. Writes through all three (sets and server-side
    increments) make JetStream purge the log below the older of the two snapshots it keeps (its first sequence
    moves past 1). One node is stopped, the others write on, and it is restarted: it logs that it restored a
    snapshot and replayed only the entries after it, and its first answer (the root's ETag, which is the tree's
    hash, and the tree) is the others'. A write through it then reaches every node."""
    started = [nodes.start("--cluster-snapshot-every", "50", "--log-level", "info") for _ in range(3)]
    stream = stream_of(ns)

    def write(node: CanopyNode, phase: str, count: int) -> None:
        rest = Rest(node.port, ns)
        try:
            for i in range(count):
                for path, value in ((f"/{phase}/{node.name[-8:]}-{i}", {"i": i}),
                                    ("/counter", {".sv": {"increment": 1}})):
                    response = rest.put(path, value, headers=ADMIN)
                    assert response.status == 200, response.describe()
        finally:
            rest.close()

    await asyncio.gather(*(asyncio.to_thread(write, node, "before", 60) for node in started))
    purged = lambda: stream_state(nats_cluster, stream).get("first_seq", 0) > 1  # noqa: E731

    async def log_purged() -> bool:
        return await asyncio.to_thread(purged)

    await wait_until(log_purged, CONVERGE_TIMEOUT, f"JetStream purging {stream} below a snapshot",
                     lambda: asyncio.to_thread(lambda: json.dumps(stream_state(nats_cluster, stream))))
    down = started[2]
    assert down.stop() == 0, down.log_tail()
    await asyncio.gather(*(asyncio.to_thread(write, node, "during", 40) for node in started[:2]))
    head = stream_state(nats_cluster, stream).get("last_seq", 0)
    down.restart()
    first_etag, first_tree = await asyncio.to_thread(root_etag_and_tree, down, ns)
    others = [await asyncio.to_thread(root_etag_and_tree, node, ns) for node in started[:2]]
    assert first_tree["counter"] == 3 * 60 + 2 * 40, json.dumps(first_tree)[:300]
    assert [first_etag, first_tree] == [others[0][0], others[0][1]] == [others[1][0], others[1][1]], \
        f"restarted node: {first_etag}; others: {[etag for etag, _ in others]}"
    opened = [line for line in down.log_tail(100_000).splitlines() if "opened namespace" in line and ns in line]
    assert opened, down.log_tail()
    restored = int(re.search(r"snapshot_position[=\":]+(\d+)", opened[-1]).group(1))
    replayed = int(re.search(r"replayed[=\":]+(\d+)", opened[-1]).group(1))
    assert restored > 0 and restored + replayed >= head > replayed, opened[-1]
    print(f"restarted node: restored the snapshot at {restored}, replayed {replayed} of {head} entries")
    await asyncio.to_thread(write, down, "after", 5)
    etags = [(await asyncio.to_thread(root_etag_and_tree, node, ns)) for node in started]

    async def same_everywhere() -> bool:
        nonlocal etags
        etags = [await asyncio.to_thread(root_etag_and_tree, node, ns) for node in started]
        return len({etag for etag, _ in etags}) == 1 and etags[0][1]["counter"] == 3 * 60 + 2 * 40 + 5

    await wait_until(same_everywhere, CONVERGE_TIMEOUT, "every node at the same root hash after a write through "
                     "the restarted node", lambda: asyncio.sleep(0, result=str([etag for etag, _ in etags])))


OFF_LOOPBACK = ("--host", "0.0.0.0", "--allow-open", "--admin-token", "the-admin-secret-token")


async def test_a_namespace_created_through_one_node_is_reachable_through_every_node(nodes, ns, tmp_path):
    # Off loopback a node creates no namespace on first use: only the admin credential creates one.
    started = []
    for _ in range(2):
        directory = tmp_path / f"off-loopback-{len(started)}"
        directory.mkdir()
        node = CanopyNode(["--cluster", ",".join(nodes.cluster.urls), *OFF_LOOPBACK], name=directory.name,
                          binary=canopy_binary(), directory=directory, open_namespaces=False)
        nodes.started.append(node)
        started.append(node.start())
    creator, other = started

    def get(node: CanopyNode, name: str) -> HttpResponse:
        return request(node.port, "GET", f"/greeting.json?ns={name}")

    assert get(other, ns).status == 404, "a namespace nobody created is refused"
    created = request(creator.port, "PUT", f"/greeting.json?ns={ns}&auth=the-admin-secret-token", json.dumps("hello"))
    assert created.status == 200, created.describe()

    async def reachable() -> bool:
        response = await asyncio.to_thread(get, other, ns)
        assert response.status in (200, 404), response.describe()
        return response.status == 200 and response.json() == "hello"

    # JetStream announces the namespace's new log to every node within milliseconds.
    await wait_until(reachable, 10, "the namespace created through another node")
    client = await WireClient.connect(other.port, ns)
    try:
        assert (await client.put("/from-the-other-node", 1)).ok
    finally:
        await client.close()
    await wait_until(lambda: asyncio.to_thread(lambda: request(
        creator.port, "GET", f"/from-the-other-node.json?ns={ns}").json() == 1), CONVERGE_TIMEOUT,
        "the other node's write on the creator")
    # Knowing the cluster's namespaces opens no others.
    assert get(other, ns + "-never").status == 404


@pytest.mark.timeout(120)
async def test_a_node_follows_the_log_when_jetstream_places_no_consumer_for_it(nodes, nats_cluster, ns):
    """Following needs a consumer on the stream's leader, and JetStream places consumers where it likes (after a
    partition, NATS 2.9 was seen placing none on the leader for 40 s). Here the namespace's stream allows one
    consumer and the test holds it, so no node can make any: the nodes must read the log from the leader by
    position instead, and acknowledge and serve every write."""
    stream = stream_of(ns)
    subject = "canopy.log." + ns.encode("utf-8").hex()
    config = {"name": stream, "subjects": [subject], "storage": "file", "num_replicas": 3, "max_consumers": 1,
              "duplicate_window": 600_000_000_000, "max_msg_size": 16 << 20}
    server = nats_cluster.servers[0]
    created = json.loads(nats_request(server, f"$JS.API.STREAM.CREATE.{stream}", json.dumps(config).encode()))
    assert "error" not in created, created
    holder = {"stream_name": stream, "config": {"durable_name": "held", "ack_policy": "explicit"}}
    held = json.loads(nats_request(server, f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.held",
                                   json.dumps(holder).encode()))
    assert "error" not in held, held
    writer_node, reader_node = nodes.start("--log-level", "notice"), nodes.start("--log-level", "notice")
    client = await WireClient.connect(writer_node.port, ns)
    try:
        answers = await asyncio.wait_for(asyncio.gather(*(client.put(f"/k/{i}", i) for i in range(20))), 60)
        assert all(answer.ok for answer in answers), answers
    finally:
        await client.close()
    # A REST read waits until its node applied everything the log held when the read arrived.
    read = await asyncio.to_thread(rest_tree, reader_node, ns)
    assert model.nodes_equal(model.normalize(read), {"k": model.normalize(list(range(20)))}), read
    for node in (writer_node, reader_node):
        assert "cluster.read_from_leader" in node.log_path.read_text(), node.log_tail()


@pytest.mark.timeout(120)
async def test_a_leader_not_holding_what_a_replica_ahead_applied_is_asked_to_step_down(nodes, nats_cluster, ns):
    """A node checks a stream leader at the last entry it applied itself, and also at the last entry each other node
    announced it applied, where that is ahead (``canopy.applied.<hex>``): a node that lags would otherwise follow a
    leader whose copy went wrong after the point it reached (docs/reliability.md). Here a made-up node announces an
    entry far ahead, which no leader holds. At the next entry each node stops applying, asks the leader to step down
    and logs ``cluster.leader_contradicts_peer``; once a second leader does not hold it either, the made-up node
    counts as the one that went wrong, and the writes held back meanwhile are applied and acknowledged, and later
    ones are not held back."""
    writer_node, other_node = nodes.start(), nodes.start()
    client = await WireClient.connect(writer_node.port, ns)
    observer = await WireClient.connect(other_node.port, ns)  # a node follows a namespace once a client opens it
    subject = "canopy.applied." + ns.encode("utf-8").hex()

    def both_refused() -> bool:
        logs = [node.log_path.read_text() for node in (writer_node, other_node)]
        return all("cluster.leader_contradicts_peer" in log and "peer=madeup" in log for log in logs)

    try:
        assert (await asyncio.wait_for(client.put("/k/0", 0), 60)).ok
        await asyncio.to_thread(nats_publish, nats_cluster.servers[0], subject, b"madeup 999999 madeup-1")
        # The announcement reaches the nodes a moment later; a write's entry makes each check its leader again.
        writes = []
        deadline = time.monotonic() + 60
        while not both_refused():
            assert time.monotonic() < deadline, [node.log_tail() for node in (writer_node, other_node)]
            writes.append(asyncio.create_task(client.put(f"/k/{len(writes) + 1}", len(writes) + 1)))
            await asyncio.sleep(0.1)
        answers = await asyncio.wait_for(asyncio.gather(*writes), 90)
        assert all(answer.ok for answer in answers), answers
        await wait_trees([writer_node, other_node], ns, {"k": model.normalize(list(range(len(writes) + 1)))})
        started = time.monotonic()
        assert (await asyncio.wait_for(client.put("/later", 1), 30)).ok
        assert time.monotonic() - started < 5, "a node found wrong is ignored: later writes are not held back"
    finally:
        await client.close()
        await observer.close()
