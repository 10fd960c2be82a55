"""HTTP/1.1 pipelining on the REST API (rest-api.md §12): requests sent back to back on one connection
take effect in the order sent and are answered in that order, while the server works on many of them at once.

Checked against a sequential model of each connection's own requests, and with the history checker for clients that
pipeline onto shared keys at once; requests the server cannot order behind the unanswered ones (another namespace,
the server's own endpoints, event streams, `Expect: 100-continue`, a malformed request, `Connection: close`) wait
for them and still leave in order.
"""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Any

import firebase_model as model
from history_checker import CAS, LINEARIZABLE, READ, WRITE, Operation, check_linearizable
from rest_client import (ConnectionEnded, HttpConnection, HttpResponse, bounded, build_request, expect_ok, pipeline,
                         request, url)


def put(host: str, path: str, ns: str, value: Any, headers: dict[str, str] | None = None) -> bytes:
    return build_request("PUT", url(f"{path}.json", {"ns": ns}), json_body=value, headers=headers, host=host)


def get(host: str, path: str, ns: str, params: dict[str, str] | None = None) -> bytes:
    return build_request("GET", url(f"{path}.json", {"ns": ns, **(params or {})}), host=host)


def run_in_threads(work, count: int, timeout: float = 50) -> None:
    """Runs ``work(index)`` for each index below ``count`` on threads of its own, at once; fails with the first
    error any of them raised, or when one is still running after ``timeout`` seconds."""
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            work(index)
        except BaseException as error:  # noqa: BLE001 - reported by the caller's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not errors, errors[0]
    assert not any(thread.is_alive() for thread in threads), "a thread did not finish"


class ConnectionModel:
    """One connection's random workload under its own key, in two namespaces, and what a sequential server answers
    to each request."""

    def __init__(self, seed: int, host: str, namespaces: list[str], root: str):
        self.random = random.Random(seed)
        self.host = host
        self.namespaces = namespaces
        self.root = root
        self.trees: dict[str, Any] = {ns: None for ns in namespaces}
        self.requests: list[bytes] = []
        self.expected: list[Any] = []  # the answer's JSON, or a callable checking it (a push's name)

    def path(self) -> str:
        depth = self.random.randint(0, 2)
        return "/".join([self.root] + [self.random.choice("abc") for _ in range(depth)])

    def value(self) -> Any:
        kind = self.random.random()
        if kind < 0.4:
            return self.random.randint(-5, 50)
        if kind < 0.6:
            return self.random.choice(["x", "y", "long text " * 3])
        return {self.random.choice("abcd"): self.random.randint(0, 9) for _ in range(self.random.randint(1, 3))}

    def add(self) -> None:
        ns = self.random.choice(self.namespaces)
        path = self.path()
        kind = self.random.random()
        tree = self.trees[ns]
        if kind < 0.3:
            value = self.value()
            self.requests.append(put(self.host, "/" + path, ns, value))
            self.trees[ns] = model.set_at(tree, path, value)
            self.expected.append(model.to_plain(model.get(self.trees[ns], path)))
        elif kind < 0.45:
            changes = {self.random.choice("abc"): self.random.randint(0, 9) for _ in range(2)}
            self.requests.append(build_request("PATCH", url(f"/{path}.json", {"ns": ns}), json_body=changes,
                                               host=self.host))
            self.trees[ns] = model.update_at(tree, path, changes)
            self.expected.append(changes)
        elif kind < 0.55:
            self.requests.append(build_request("DELETE", url(f"/{path}.json", {"ns": ns}), host=self.host))
            self.trees[ns] = model.set_at(tree, path, None)
            self.expected.append(None)
        elif kind < 0.62:
            value = self.random.randint(0, 9)
            self.requests.append(build_request("POST", url(f"/{path}.json", {"ns": ns}), json_body=value,
                                               host=self.host))
            # The name is the server's: the model learns it from the answer (``record_push``).
            self.expected.append(("push", ns, path, value))
        elif kind < 0.7:
            self.requests.append(get(self.host, "/" + path, ns, {"shallow": "true"}))
            node = model.to_plain(model.get(tree, path))
            self.expected.append({key: True for key in node} if isinstance(node, dict) else node)
        else:
            self.requests.append(get(self.host, "/" + path, ns))
            self.expected.append(model.to_plain(model.get(tree, path)))

    def check(self, index: int, response: HttpResponse) -> None:
        expected = self.expected[index]
        assert response.status == 200, f"request {index}: {response.describe()}"
        if isinstance(expected, tuple):
            _, ns, path, value = expected
            name = response.json()["name"]
            self.trees[ns] = model.set_at(self.trees[ns], f"{path}/{name}", value)
            return
        assert response.json() == expected, f"request {index} of {self.root}: {response.describe()}"


@bounded(60)
def test_pipelined_workloads_match_a_sequential_model_of_each_connection(server, ns):
    """Four connections at once, each pipelining 400 random writes and reads (64 unanswered at a time) in two
    namespaces under a key of its own: every answer is what a server taking the requests one at a time in the order
    sent would give. Pushes are modelled once their names are known, so reads behind them are checked only where
    the model already holds them: the workload reads a push's parent only after its answer."""
    host = f"127.0.0.1:{server.port}"
    namespaces = [ns, ns + "-b"]

    def run(index: int) -> None:
        workload = ConnectionModel(seed=7_000 + index, host=host, namespaces=namespaces, root=f"c{index}")
        with HttpConnection(server.port) as connection:
            for _ in range(8):
                # Pushes make the model wait for their names: each batch ends at its first push.
                start = len(workload.requests)
                while len(workload.requests) - start < 50:
                    workload.add()
                    if isinstance(workload.expected[-1], tuple):
                        break
                batch = workload.requests[start:]
                answered = pipeline(connection, batch, window=64,
                                    on_response=lambda offset, response: workload.check(start + offset, response))
                assert answered == len(batch)
            for name in namespaces:
                final = expect_ok(connection.request("GET", url(f"/c{index}.json", {"ns": name})))
                assert final.json() == model.to_plain(model.get(workload.trees[name], f"c{index}")), name

    run_in_threads(run, 4)


@bounded(60)
def test_clients_pipelining_onto_shared_keys_are_linearizable(server, ns):
    """Four connections pipeline writes, reads and compare-and-sets (`if-match` with the ETag last read) onto three
    shared keys, six at a time (enough to overlap; more makes the checker's search explode). A request's invocation is when its bytes were sent, its completion when its
    answer arrived; the history checker proves each key's history linearizable."""
    host = f"127.0.0.1:{server.port}"
    keys = ["k0", "k1", "k2"]
    operations: list[Operation] = []
    lock = threading.Lock()

    def run(process: int) -> None:
        chooser = random.Random(9_100 + process)
        etags: dict[str, tuple[str, Any]] = {}
        with HttpConnection(server.port) as connection:
            for round_number in range(30):
                batch: list[tuple[str, str, Any, Any, bytes]] = []
                for step in range(6):
                    key = chooser.choice(keys)
                    value = process * 10_000 + round_number * 100 + step
                    roll = chooser.random()
                    if roll < 0.4:
                        batch.append((WRITE, key, value, None, put(host, f"/{key}", ns, value)))
                    elif roll < 0.55 and key in etags:
                        etag, seen = etags[key]
                        batch.append((CAS, key, value, seen,
                                      put(host, f"/{key}", ns, value, headers={"if-match": etag})))
                    else:
                        batch.append((READ, key, None, None, build_request(
                            "GET", url(f"/{key}.json", {"ns": ns}), headers={"X-Firebase-ETag": "true"},
                            host=host)))
                invoked = time.monotonic()
                connection.send_raw(b"".join(item[4] for item in batch))
                recorded = []
                for kind, key, value, expected, _ in batch:
                    response = connection.read_response()
                    completed = time.monotonic()
                    if kind == READ:
                        assert response.status == 200, response.describe()
                        etags[key] = (response.header("ETag"), response.json())
                        recorded.append(Operation(f"p{process}", key, READ, invoked, completed,
                                                  value=response.json()))
                    elif kind == WRITE:
                        expect_ok(response, value)
                        recorded.append(Operation(f"p{process}", key, WRITE, invoked, completed, value=value))
                    else:
                        assert response.status in (200, 412), response.describe()
                        recorded.append(Operation(f"p{process}", key, CAS, invoked, completed, value=value,
                                                  expected=expected, succeeded=response.status == 200))
                with lock:
                    operations.extend(recorded)

    run_in_threads(run, 4)
    assert len(operations) == 4 * 30 * 6
    for key in keys:
        verdict, violation = check_linearizable(key, [op for op in operations if op.key == key])
        assert verdict == LINEARIZABLE, violation.describe() if violation else verdict


@bounded(30)
def test_requests_that_cannot_be_ordered_behind_unanswered_ones_wait_for_them(server, ns):
    """Behind pipelined writes: a read of another namespace, the server's own endpoint, a `HEAD`, and an event
    stream each see the writes before them, and every answer leaves in request order."""
    host = f"127.0.0.1:{server.port}"
    other = ns + "-other"
    batch = (put(host, "/w", ns, 1) + put(host, "/w", other, 2) + get(host, "/w", other) + put(host, "/w", ns, 3)
             + build_request("GET", "/.health", host=host) + build_request("HEAD", url("/w.json", {"ns": ns}), host=host)
             + get(host, "/w", ns) + put(host, "/w", ns, 4)
             + build_request("GET", url("/w.json", {"ns": ns}), headers={"Accept": "text/event-stream"}, host=host))
    with HttpConnection(server.port) as connection:
        connection.send_raw(batch)
        expect_ok(connection.read_response("PUT"), 1)
        expect_ok(connection.read_response("PUT"), 2)
        expect_ok(connection.read_response("GET"), 2)
        expect_ok(connection.read_response("PUT"), 3)
        health = connection.read_response("GET")
        assert health.status == 200 and health.json() == {"status": "ok"}, health.describe()
        head = connection.read_response("HEAD")
        assert head.status == 200 and head.header("Content-Length") == "1", head.describe()
        expect_ok(connection.read_response("GET"), 3)
        expect_ok(connection.read_response("PUT"), 4)
        stream = connection.read_head()
        assert stream.status == 200, stream.describe()
        assert (stream.header("Content-Type") or "").startswith("text/event-stream"), stream.describe()
        # The stream's first event (inside one chunk) holds the value after every write before the stream.
        deadline = time.monotonic() + 5
        while b"\n\n" not in bytes(connection.buffer).partition(b"event: put")[2]:
            assert connection._fill(deadline), "the stream ended before its first event"
        event = bytes(connection.buffer).partition(b"event: put")[2].partition(b"\n\n")[0]
        assert json.loads(event.partition(b"data:")[2]) == {"path": "/", "data": 4}, event


@bounded(30)
def test_an_expect_continue_waits_for_the_answers_ahead_of_it(server, ns):
    """A `100 Continue` is a response too: behind an unanswered write it leaves after that write's answer."""
    host = f"127.0.0.1:{server.port}"
    body = b"7"
    waiting_head = (f"PUT {url('/ec.json', {'ns': ns})} HTTP/1.1\r\nHost: {host}\r\nExpect: 100-continue\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode()
    with HttpConnection(server.port) as connection:
        connection.send_raw(put(host, "/ec", ns, 6) + waiting_head)
        expect_ok(connection.read_response("PUT"), 6)
        interim = connection.read_head()
        assert interim.status == 100, interim.describe()
        connection.send_raw(body)
        expect_ok(connection.read_response("PUT"), 7)


@bounded(30)
def test_a_malformed_request_behind_pipelined_writes_is_refused_after_their_answers(server, ns):
    host = f"127.0.0.1:{server.port}"
    with HttpConnection(server.port) as connection:
        connection.send_raw(put(host, "/mf", ns, 1) + put(host, "/mf", ns, 2) + b"\x00\x01 garbage\r\n\r\n")
        expect_ok(connection.read_response("PUT"), 1)
        expect_ok(connection.read_response("PUT"), 2)
        refusal = connection.read_response()
        assert refusal.status == 400 and (refusal.header("Connection") or "").lower() == "close", refusal.describe()
        connection.wait_closed(5)
    expect_ok(request(server.port, "GET", url("/mf.json", {"ns": ns})), 2)


@bounded(30)
def test_connection_close_in_a_pipeline_is_the_last_request_served(server, ns):
    host = f"127.0.0.1:{server.port}"
    with HttpConnection(server.port) as connection:
        connection.send_raw(put(host, "/cc", ns, 1) + put(host, "/cc", ns, 2, headers={"Connection": "close"})
                            + put(host, "/cc", ns, 3))
        expect_ok(connection.read_response("PUT"), 1)
        last = expect_ok(connection.read_response("PUT"), 2)
        assert (last.header("Connection") or "").lower() == "close", last.describe()
        assert connection.wait_closed(5) == b""
    expect_ok(request(server.port, "GET", url("/cc.json", {"ns": ns})), 2)


@bounded(30)
def test_a_pipeline_longer_than_the_limit_of_unanswered_requests_is_answered_in_full(server, ns):
    """1,000 writes and reads in one send: past the server's limit of unanswered requests the rest wait unread,
    and every answer arrives in order."""
    host = f"127.0.0.1:{server.port}"
    batch = b"".join(put(host, f"/long/{index % 7}", ns, index) + get(host, f"/long/{index % 7}", ns)
                     for index in range(500))
    with HttpConnection(server.port) as connection:
        sender = threading.Thread(target=connection.send_raw, args=(batch,))
        sender.start()
        for index in range(500):
            expect_ok(connection.read_response("PUT"), index)
            expect_ok(connection.read_response("GET"), index)
        sender.join(5)
        try:
            assert connection.is_open()
        except ConnectionEnded:
            raise AssertionError("the server closed a connection that pipelined within its limits")
