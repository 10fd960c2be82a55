"""The concurrent total-order workload and its checker, shared by the single-node ordering test
(test_gateway_ordering.py) and the cluster test (test_cluster.py), where the clients sit on different nodes.

Every client listens at the root from before the first write; the clients then write concurrently to overlapping
keys: sets, multi-path updates and compare-and-set transactions on one counter (``run``). ``check`` asks: did every
client see the same sequence of writes, did each see its own writes before their acknowledgements and in the order
it sent them, does replaying that sequence give the tree each server holds, and do the accepted transactions form
one chain (each read the value the previous one wrote)?
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

import firebase_model as model


def write_ids(data: Any) -> list[int]:
    """Every write id (``{"id": n}`` members) in a push's data, in document order."""
    found: list[int] = []
    if isinstance(data, dict):
        if isinstance(data.get("id"), int):
            found.append(data["id"])
        for key, value in data.items():
            if key != "id":
                found.extend(write_ids(value))
    return found


def acknowledgement_order(client, numbers: set[int]) -> list[int]:
    """The request numbers of ``numbers`` in the order their responses arrived."""
    return [entry.body.get("r") for entry in client.log if entry.is_response and entry.body.get("r") in numbers]


class Model:
    """What the writes of the workload do, replayed in the order the clients observed."""

    def __init__(self):
        self.root: Any = None

    def apply(self, write: dict) -> None:
        if write["kind"] == "set":
            self.root = model.set_at(self.root, write["path"], write["data"])
        elif write["kind"] == "update":
            self.root = model.update_at(self.root, "/", write["data"])
        else:
            self.root = model.set_at(self.root, "/counter", write["data"])


@dataclass
class Workload:
    """What the writers sent."""

    writes: dict[int, dict] = field(default_factory=dict)  # write id -> the write
    sent: list[list[tuple[int, int]]] = field(default_factory=list)  # per client: (request number, write id)
    transactions: dict[int, int] = field(default_factory=dict)  # write id -> the counter value it expected
    accepted_transactions: set[int] = field(default_factory=set)


def observed(client) -> list[int]:
    """The write ids a client saw, in order (its initial data carried no ids: the tree was empty)."""
    sequence = []
    for push in client.pushes():
        # One push per write: a multi-path update names its id once per location.
        sequence.extend(dict.fromkeys(write_ids(push.payload.get("d"))))
    return [write_id for write_id in sequence if write_id != 0]


async def run(connections, per_writer: int, keys=("a", "b", "c", "d"), timeout: float = 30) -> Workload:
    """Listens at the root on every connection, writes the counter's start, runs one pipelined writer per
    connection and returns once every connection has seen every accepted write (at once on a single node; on a
    cluster each connection's node applies the others' writes a little later)."""
    for client in connections:
        _, response = await client.listen("/")
        assert response.ok
    assert (await connections[0].put("/counter", {"n": 0, "id": 0})).ok
    for client in connections:  # a transaction computes from the client's view: it must hold the counter
        await client.wait_for(lambda e: e.is_push and 0 in write_ids(e.payload.get("d")), timeout,
                              "the counter's start", consume=False)
    workload = Workload(sent=[[] for _ in connections])

    async def run_writer(index: int) -> None:
        client = connections[index]
        rng = random.Random(index)
        for step in range(per_writer):
            write_id = 1 + index * per_writer + step
            choice = rng.random()
            if choice < 0.4:
                path = f"/{rng.choice(keys)}/{rng.choice(keys)}"
                write = {"kind": "set", "path": path, "data": {"id": write_id}}
                body = {"p": path, "d": write["data"]}
                action = "p"
            elif choice < 0.8:
                first, second = rng.sample(keys, 2)
                data = {f"{first}/x": {"id": write_id}, f"{second}/y": {"id": write_id}}
                write = {"kind": "update", "data": data}
                body = {"p": "/", "d": data}
                action = "m"
            else:
                # A transaction as the SDK sends it: the value its view holds, with that value's hash.
                counter_seen = model.get(client.views[0].cache, "/counter/n")
                current = {"n": counter_seen, "id": model.get(client.views[0].cache, "/counter/id")}
                write = {"kind": "cas", "data": {"n": counter_seen + 1, "id": write_id}}
                body = {"p": "/counter", "d": write["data"], "h": model.node_hash(current)}
                action = "p"
                workload.transactions[write_id] = counter_seen
            workload.writes[write_id] = write
            future = await client.send_request(action, body)
            workload.sent[index].append((client.next_r - 1, write_id))
            if write["kind"] == "cas":
                response = await client.wait_response(future, timeout)
                assert response.ok or response.status == "datastale", response.status
                if response.ok:
                    workload.accepted_transactions.add(write_id)
            await asyncio.sleep(0)

    await asyncio.gather(*(run_writer(index) for index in range(len(connections))))
    for client in connections:
        await client.sync(timeout)
    expected = {write_id for write_id, write in workload.writes.items() if write["kind"] != "cas"}
    expected |= workload.accepted_transactions
    deadline = time.monotonic() + timeout
    for index, client in enumerate(connections):
        while not expected <= set(observed(client)):
            missing = expected - set(observed(client))
            assert time.monotonic() < deadline, \
                f"client {index} never saw {len(missing)} accepted writes, e.g. {sorted(missing)[:5]}"
            await client.sync(timeout)
    return workload


def check(connections, workload: Workload, stored_trees: list[Any]) -> list[int]:
    """Checks what the connections observed against each other, the writes sent and each stored tree (one per
    server); returns the one order."""
    sequences = [observed(client) for client in connections]
    order = sequences[0]
    for index, sequence in enumerate(sequences[1:], 1):
        assert sequence == order, f"client {index} saw another order " \
            f"(first difference at {next((i for i, (a, b) in enumerate(zip(sequence, order)) if a != b), None)}, " \
            f"lengths {len(sequence)} and {len(order)})"
    assert len(order) == len(set(order)), "a write was seen twice"

    # Own writes: acknowledged in request order, each after its own event.
    position = {write_id: i for i, write_id in enumerate(order)}
    for index, client in enumerate(connections):
        numbers = {r for r, _ in workload.sent[index]}
        write_of_request = dict(workload.sent[index])
        acked = acknowledgement_order(client, numbers)
        assert acked == sorted(acked), f"client {index}: acknowledgements out of request order"
        accepted = [write_id for r, write_id in workload.sent[index] if write_id in position]
        assert [position[w] for w in accepted] == sorted(position[w] for w in accepted), \
            f"client {index}: its writes took effect out of the order it sent them"
        seen_at = {}
        for entry in client.log:
            if entry.is_push:
                for write_id in write_ids(entry.payload.get("d")):
                    seen_at.setdefault(write_id, entry.seq)
        for entry in client.log:
            if entry.is_response and entry.body.get("b", {}).get("s") == "ok":
                r = entry.body.get("r")
                write_id = write_of_request.get(r)
                if write_id is not None:
                    assert seen_at.get(write_id, 1 << 60) < entry.seq, \
                        f"client {index}: write {write_id} acknowledged before its event"

    # Every non-transaction write is accepted; replaying the order gives each server's tree.
    for write_id, write in workload.writes.items():
        if write["kind"] != "cas":
            assert write_id in position, f"write {write_id} was never seen"
    replay = Model()
    replay.apply({"kind": "cas", "data": {"n": 0, "id": 0}})
    chain = 0
    for write_id in order:
        write = workload.writes[write_id]
        if write["kind"] == "cas":
            assert workload.transactions[write_id] == chain, \
                f"transaction {write_id} expected {workload.transactions[write_id]} but the counter was {chain}"
            chain += 1
        replay.apply(write)
    for index, stored in enumerate(stored_trees):
        assert model.nodes_equal(model.normalize(stored), model.normalize(replay.root)), \
            f"server {index}: the replayed order differs from the stored tree"
        assert model.get(stored, "/counter/n") == chain
    return order
