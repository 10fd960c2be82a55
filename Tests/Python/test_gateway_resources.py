"""Resources and limits: listens, views and sessions are freed by unlisten and disconnect (read from /.metrics),
a push is encoded once for many subscribers, connection churn, and the data limits at their boundaries
(data-model.md §2, §3.1, §6; issue 4 "Subscriptions and fan-out" and "Metrics")."""

import asyncio
import re
import time
import urllib.request

import pytest

from conftest import Clients
from firebase_wire import WireClient


def metrics(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/.metrics", timeout=5) as response:
        text = response.read().decode()
    values = {}
    for line in text.splitlines():
        found = re.fullmatch(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line.strip())
        if found and not line.startswith("#"):
            values[found.group(1) + (found.group(2) or "")] = float(found.group(3))
    return values


async def wait_for_gauges(port: int, expected: dict[str, float], timeout: float = 5.0) -> dict[str, float]:
    """Polls /.metrics until the gauges have the expected values (disconnect cleanup is asynchronous)."""
    deadline = time.monotonic() + timeout
    while True:
        current = await asyncio.get_running_loop().run_in_executor(None, metrics, port)
        if all(current.get(name) == value for name, value in expected.items()):
            return current
        if time.monotonic() > deadline:
            raise AssertionError(f"gauges {expected} not reached: " + str({name: current.get(name) for name in expected}))
        await asyncio.sleep(0.05)


async def test_unlisten_and_disconnect_free_listens_views_and_sessions(start_server):
    server = start_server()
    async with Clients(server.port) as clients:
        a = await clients.connect("res")
        b = await clients.connect("res")
        c = await clients.connect("res")
        view_a, _ = await a.listen("/room")
        await b.listen("/room")
        tagged_a, _ = await a.listen("/room", {"l": 2, "vf": "r"}, tag=1)
        await b.listen("/room", {"l": 2, "vf": "r"}, tag=8)
        await c.listen("/other")
        await wait_for_gauges(server.port, {"canopy_wire_sessions": 3, "canopy_listens": 5, "canopy_views": 3})
        await a.unlisten(view_a)
        await a.unlisten(tagged_a)
        await wait_for_gauges(server.port, {"canopy_listens": 3, "canopy_views": 3})
        b.abort()
        await c.close()
        await wait_for_gauges(server.port, {"canopy_wire_sessions": 1, "canopy_listens": 0, "canopy_views": 0})


async def test_metrics_show_resident_memory_and_the_heap_growing_with_data_held(start_server):
    """/.metrics reports the process's resident memory and the allocator's heap in use, free and mapped; 4 MB of
    data written and held makes the heap in use grow by at least that much."""
    server = start_server()
    before = metrics(server.port)
    for name in ("process_resident_memory_bytes", "canopy_heap_in_use_bytes", "canopy_heap_free_bytes",
                 "canopy_heap_mapped_bytes"):
        assert name in before, name
    assert before["process_resident_memory_bytes"] > before["canopy_heap_in_use_bytes"] > 0
    async with Clients(server.port) as clients:
        client = await clients.connect("heap")
        for i in range(4):
            response = await client.put(f"/blob/{i}", "x" * 1_000_000)
            assert response.ok, response
    after = metrics(server.port)
    assert after["canopy_heap_in_use_bytes"] + after["canopy_heap_mapped_bytes"] >= \
        before["canopy_heap_in_use_bytes"] + before["canopy_heap_mapped_bytes"] + 4_000_000, (before, after)


async def test_one_write_to_many_subscribers_of_one_view_is_encoded_once(start_server):
    server = start_server()
    async with Clients(server.port) as clients:
        writer = await clients.connect("enc")
        subscribers = [await clients.connect("enc") for _ in range(10)]
        for client in subscribers:
            await client.listen("/shared")
        before = metrics(server.port)
        assert (await writer.put("/shared/x", "payload")).ok
        await asyncio.gather(*(client.sync() for client in subscribers))
        after = metrics(server.port)
        encoded = after["canopy_push_frames_encoded_total"] - before["canopy_push_frames_encoded_total"]
        delivered = after["canopy_push_frames_delivered_total"] - before["canopy_push_frames_delivered_total"]
        assert delivered >= 10, (encoded, delivered)
        assert encoded == 1, f"{encoded} encodings for one write to one shared view"


@pytest.mark.timeout(60)
async def test_connection_churn_during_writes_leaves_the_server_healthy(start_server):
    server = start_server()
    async with Clients(server.port) as clients:
        writer = await clients.connect("churn")
        observer = await clients.connect("churn")
        view, _ = await observer.listen("/c")
        stop = asyncio.Event()

        async def keep_writing():
            index = 0
            while not stop.is_set():
                assert (await writer.put("/c/n", index)).ok
                index += 1
            return index

        writing = asyncio.ensure_future(keep_writing())
        for round_number in range(100):
            client = await WireClient.connect(server.port, "churn")
            await client.listen("/c")
            await client.listen("/c", {"l": 1, "vf": "r"}, tag=round_number + 1)
            await client.request("o", {"p": f"/gone/{round_number % 5}", "d": round_number})
            if round_number % 2:
                client.abort()
            else:
                await client.close()
            await client.aclose()
        stop.set()
        count = await writing
        await observer.sync()
        assert view.cache == {"n": count - 1}
        await wait_for_gauges(server.port, {"canopy_wire_sessions": 2, "canopy_listens": 1, "canopy_views": 1})


@pytest.mark.parametrize("path,ok", [
    ("/" + "k" * 768, True),
    ("/" + "k" * 769, False),
    ("/" + "\u00e9" * 384, True),        # 768 UTF-8 bytes
    ("/" + "\u00e9" * 385, False),       # 770 UTF-8 bytes
    ("/" + "/".join(["d"] * 32), True),
    ("/" + "/".join(["d"] * 33), False),
])
async def test_key_length_and_depth_limits(start_server, path, ok):
    server = start_server()
    async with Clients(server.port) as clients:
        client = await clients.connect("limits")
        response = await client.put(path, 1)
        assert response.ok == ok, response.inbound.text
        nested = {"x": 1}
        for _ in range(30):
            nested = {"n": nested}
        # /a + 31 levels of objects + the leaf key: 33 segments.
        response = await client.put("/a", {"n": nested})
        assert not response.ok, "data deeper than 32 levels was accepted"
        assert (await client.put("/a", nested)).ok, "exactly 32 levels must be accepted"


@pytest.mark.timeout(60)
async def test_a_string_above_10_mib_is_refused(start_server):
    server = start_server()
    async with Clients(server.port) as clients:
        client = await clients.connect("limits")
        neighbour = await clients.connect("limits")
        response = await client.put("/big", "a" * (10 * 1024 * 1024 + 1), timeout=30)
        assert not response.ok and isinstance(response.data, str), response.inbound.text[:300]
        assert (await neighbour.get("/big")).data is None
        assert (await client.put("/small", "fine")).ok


@pytest.mark.timeout(60)
async def test_a_message_above_the_message_limit_gets_an_error_or_a_close_with_reason(start_server):
    """The gateway reassembles messages up to 17 MiB (room for a 16 MB write, the SDK limit, and its envelope)."""
    server = start_server()
    async with Clients(server.port) as clients:
        client = await clients.connect("limits")
        neighbour = await clients.connect("limits")
        view, _ = await neighbour.listen("/n")
        payload = {f"k{index}": "v" * 1024 for index in range(18 * 1024)}  # about 19 MB
        future = await client.send_request("p", {"p": "/huge", "d": payload})
        try:
            response = await client.wait_response(future, 30)
        except (ConnectionError, AssertionError):
            response = None
        if response is not None:
            assert not response.ok, "a 19 MB message was accepted"
        else:
            await client.wait_closed(10)
            assert client.close_reason or any(entry.control_type == "e" for entry in client.log), \
                f"closed without a reason (code {client.close_code})"
        assert (await neighbour.put("/n/x", 1)).ok
        await neighbour.sync()
        assert view.cache == {"x": 1}
