"""Clients that record what they do for the history checker (history_checker.py) while a nemesis injects faults.

A ``RecordingClient`` holds one wire connection at a time to a Canopy node of a cluster, listens to ``/k`` (every
key the workload touches, so each write's event reaches its writer before the acknowledgement) and runs random
operations, one at a time, recording each with its invocation and completion (monotonic seconds since the run
began):

- a **read** is a REST ``GET`` through the same node: REST reads wait for the log's head, so they are the
  cluster's linearizable reads (a wire ``get`` is answered from the node's replica as it is, docs/cluster.md);
- a **write** puts a value no other operation writes;
- a **compare-and-set** is a put with the hash of the value the client's listen holds (as an SDK's transaction
  sends it): ``ok`` succeeded, ``datastale`` failed;
- an **increment** puts ``{".sv": {"increment": 1}}`` (its result is not known);
- a **stamp** is a REST ``POST`` of ``{".sv": "timestamp"}`` to ``/stamps`` through the same node: the server names
  the child with a push id and gives it the server time (both read back after the run, ``read_stamps``).

The counter key is only incremented and read. An operation without an answer within ``OPERATION_TIMEOUT`` (or whose
connection dropped, or answered with another error) is indeterminate; the client then drops the connection and
connects again, to the next running node. What the client's listens saw, across its connections, is one listener's
events.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field, replace

from websockets.exceptions import WebSocketException

import firebase_model as model
from cluster import CanopyNode
from firebase_wire import Response, View, WireClient, WireTimeout
from history_checker import CAS, INCREMENT, READ, WRITE, History, ListenerEvent, Operation, ServerStamp
from rest_client import ADMIN, ConnectionEnded, HttpConnection, url

LISTEN_PATH = "/k"
STAMPS_PATH = "/stamps"
STAMP_CHANCE = 1 / 12
KEYS = ("a", "b", "c")
COUNTER_KEY = "counter"
OPERATION_TIMEOUT = 12.0  # longer than a JetStream election (4–9 s), so most stalls end in an answer
CONNECT_TIMEOUT = 5.0
RECONNECT_PAUSE = 0.2
MAX_THINK_TIME = 0.1
WRITE_STRIDE = 1000  # written values are multiples: what increments add to one stays below the next
VALUES_PER_CLIENT = 1_000_000


class Recorder:
    """The history of one run: operations and listener events, with times since ``origin``."""

    def __init__(self):
        self.origin = time.monotonic()
        self.history = History()
        self.last_acknowledgement = float("-inf")

    def now(self) -> float:
        return time.monotonic() - self.origin

    def record(self, op: Operation) -> None:
        self.history.operations.append(op)
        if op.kind != READ and op.completed is not None:
            self.last_acknowledgement = max(self.last_acknowledgement, op.completed)

    def answered(self) -> list[tuple[float, float]]:
        """When each answered write, compare-and-set and increment was invoked and answered, in answer order."""
        return sorted(((op.invoked, op.completed) for op in self.history.operations
                       if op.kind != READ and op.completed is not None), key=lambda times: times[1])


class SessionLost(Exception):
    """The connection dropped or an answer did not come: the client connects again."""


def rest_request(node: CanopyNode, method: str, path: str, ns: str, body: str | None = None) -> object:
    """A REST request through ``node`` (as admin) and its answer's JSON; raises ``SessionLost`` without a 200."""
    port = node.port
    try:
        connection = HttpConnection(port, host=node.host, timeout=OPERATION_TIMEOUT)
    except OSError as error:
        raise SessionLost(f"{method} through {port}: {error}") from None
    try:
        response = connection.request(method, url(f"{path}.json", {"ns": ns}), body, headers=ADMIN)
    except (OSError, ConnectionEnded) as error:
        raise SessionLost(f"{method} through {port}: {error}") from None
    finally:
        connection.close()
    if response.status != 200:
        raise SessionLost(f"{method} through {port}: {response.status}")
    return response.json()


def rest_get(node: CanopyNode, ns: str, key: str) -> object:
    """The value of ``/k/<key>`` through ``node``."""
    return rest_request(node, "GET", f"{LISTEN_PATH}/{key}", ns)


def read_stamps(node: CanopyNode, ns: str) -> dict[str, object]:
    """Every stamp's server time through ``node``, by push id."""
    stamps = rest_request(node, "GET", STAMPS_PATH, ns)
    return stamps if isinstance(stamps, dict) else {}


async def answer(client: WireClient, future: asyncio.Future) -> Response:
    """The answer to a request within ``OPERATION_TIMEOUT``; one that comes (or fails) later is left unread."""
    try:
        return await client.wait_response(future, OPERATION_TIMEOUT)
    except WireTimeout:
        future.add_done_callback(lambda late: late.cancelled() or late.exception())
        raise


def listener_events(client: WireClient, listener: str, origin: float) -> list[ListenerEvent]:
    """The values of each key that the client's listen of ``/k`` showed, in arrival order: every key at the first
    push (null when absent), then each change."""
    view = View(LISTEN_PATH)
    last: dict[str, object] = {}
    events = []
    for inbound in client.log:
        if not inbound.is_push:
            continue
        view.apply(inbound)
        for key in KEYS + (COUNTER_KEY,):
            value = model.get(view.cache, key)
            if key not in last or last[key] != value:
                last[key] = value
                events.append(ListenerEvent(listener, key, inbound.received_at - origin, value))
    return events


@dataclass
class RecordingClient:
    """One client of the workload (see the module's docstring); ``number`` makes its written values its own."""

    number: int
    nodes: list[CanopyNode]
    ns: str
    recorder: Recorder
    rng: random.Random
    stopping: asyncio.Event
    node_index: int = 0
    written: int = 0
    connections: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"client{self.number}"

    async def run(self) -> None:
        """Operations until ``stopping`` is set, reconnecting as needed."""
        while not self.stopping.is_set():
            node = self.nodes[self.node_index % len(self.nodes)]
            if not node.alive():
                self.node_index += 1
                await asyncio.sleep(RECONNECT_PAUSE)
                continue
            try:
                client = await WireClient.connect(node.port, self.ns, host=node.host, timeout=CONNECT_TIMEOUT)
            except (OSError, WebSocketException, WireTimeout, asyncio.TimeoutError) as error:
                self.failures.append(f"connect to {node.name}: {error!r}"[:200])
                self.node_index += 1
                await asyncio.sleep(RECONNECT_PAUSE)
                continue
            self.connections += 1
            try:
                await self._session(client, node)
            except SessionLost as lost:
                self.failures.append(str(lost)[:200])
                self.node_index += 1
            finally:
                await client.aclose()
                self.recorder.history.events += listener_events(client, self.name, self.recorder.origin)

    async def _session(self, client: WireClient, node: CanopyNode) -> None:
        try:
            view, future = await client.listen_nowait(LISTEN_PATH)
            response = await answer(client, future)
        except (ConnectionError, WebSocketException, WireTimeout) as error:
            raise SessionLost(f"listen on {node.name}: {error!r}") from None
        if not response.ok:
            raise SessionLost(f"listen on {node.name}: {response.status}")
        while not self.stopping.is_set():
            if self.rng.random() < STAMP_CHANCE:
                await self._stamp(node)
                await asyncio.sleep(self.rng.uniform(0, MAX_THINK_TIME))
                continue
            key = self.rng.choice(KEYS + (COUNTER_KEY,))
            if key == COUNTER_KEY:
                kind = self.rng.choice((READ, INCREMENT))
            else:
                kind = self.rng.choices((READ, WRITE, CAS, INCREMENT), weights=(3, 3, 3, 1))[0]
            if kind == READ:
                await self._read(node, key)
            else:
                await self._write(client, view, key, kind)
            await asyncio.sleep(self.rng.uniform(0, MAX_THINK_TIME))

    async def _read(self, node: CanopyNode, key: str) -> None:
        invoked = self.recorder.now()
        try:
            value = await asyncio.to_thread(rest_get, node, self.ns, key)
        except SessionLost:
            self.recorder.record(Operation(self.name, key, READ, invoked, None))
            raise
        self.recorder.record(Operation(self.name, key, READ, invoked, self.recorder.now(), value=value))

    async def _stamp(self, node: CanopyNode) -> None:
        invoked = self.recorder.now()
        try:
            answer = await asyncio.to_thread(rest_request, node, "POST", STAMPS_PATH, self.ns, '{".sv":"timestamp"}')
        except SessionLost:
            self.recorder.history.stamps.append(ServerStamp(self.name, invoked, None, None))
            raise
        name = answer.get("name") if isinstance(answer, dict) else None
        if not isinstance(name, str):
            self.recorder.history.stamps.append(ServerStamp(self.name, invoked, None, None))
            raise SessionLost(f"stamp through {node.name}: answered {answer!r}")
        self.recorder.history.stamps.append(ServerStamp(self.name, invoked, self.recorder.now(), name))

    def _new_value(self) -> int:
        self.written += 1
        return (self.number * VALUES_PER_CLIENT + self.written) * WRITE_STRIDE

    async def _write(self, client: WireClient, view: View, key: str, kind: str) -> None:
        path, invoked = f"{LISTEN_PATH}/{key}", self.recorder.now()
        if kind == INCREMENT:
            body, op = {"p": path, "d": {".sv": {"increment": 1}}}, Operation(self.name, key, kind, invoked, None)
        elif kind == WRITE:
            value = self._new_value()
            body, op = {"p": path, "d": value}, Operation(self.name, key, kind, invoked, None, value=value)
        else:
            expected, value = model.get(view.cache, key), self._new_value()
            body = {"p": path, "d": value, "h": model.node_hash(expected)}
            op = Operation(self.name, key, kind, invoked, None, value=value, expected=expected)
        try:
            response = await answer(client, await client.send_request("p", body))
        except (ConnectionError, WebSocketException, WireTimeout) as error:
            self.recorder.record(op)
            raise SessionLost(f"{kind} on {key}: {error!r}") from None
        if kind == CAS and response.status in ("ok", "datastale"):
            self.recorder.record(replace(op, completed=self.recorder.now(), succeeded=response.ok))
        elif response.ok:
            self.recorder.record(replace(op, completed=self.recorder.now()))
        else:
            self.recorder.record(op)
            raise SessionLost(f"{kind} on {key}: answered {response.status} {response.data}")
