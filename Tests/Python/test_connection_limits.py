"""Per-connection limits (issue 17): a connection over its listens or onDisconnect limit gets `limit_exceeded` for
that request, the refusal is counted in /.metrics, and its neighbours are unaffected."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest

from firebase_wire import WireClient


@pytest.fixture
def limited(start_server, tmp_path):
    config = tmp_path / "canopy.json"
    config.write_text(json.dumps({"gateway": {"maxListensPerConnection": 3, "maxOnDisconnectPerConnection": 2}}))
    return start_server("--config", str(config))


def metric(port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/.metrics", timeout=5) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_listens_over_the_limit_are_refused_and_neighbours_unaffected(limited):
    port = limited.port
    greedy = await WireClient.connect(port, "limits")
    neighbour = await WireClient.connect(port, "limits")
    writer = await WireClient.connect(port, "limits")
    try:
        for index in range(3):
            assert (await greedy.listen(f"/l/{index}"))[1].ok
        _, refused = await greedy.listen("/l/3")
        assert refused.status == "limit_exceeded", refused
        assert "maxListensPerConnection" in json.dumps(refused.data)
        assert (await greedy.listen("/l/0"))[1].ok  # listening again to a location it holds is no new listen
        assert (await greedy.request("n", {"p": "/l/1"})).ok
        assert (await greedy.listen("/l/3"))[1].ok  # room again after an unlisten
        views = [(await neighbour.listen(f"/l/{index}"))[0] for index in range(3)]
        assert (await writer.put("/l/2", "hello")).ok
        await neighbour.sync()
        assert views[2].cache == "hello"
        assert metric(port, "canopy_limit_listens_refused_total") == 1
    finally:
        for client in (greedy, neighbour, writer):
            await client.close()


async def test_ondisconnect_locations_over_the_limit_are_refused_and_only_the_accepted_run(limited):
    port = limited.port
    leaving = await WireClient.connect(port, "limits-od")
    watcher = await WireClient.connect(port, "limits-od")
    try:
        assert (await leaving.request("o", {"p": "/gone/a", "d": 1})).ok
        assert (await leaving.request("o", {"p": "/gone/b", "d": 2})).ok
        refused = await leaving.request("o", {"p": "/gone/c", "d": 3})
        assert refused.status == "limit_exceeded", refused
        assert (await leaving.request("o", {"p": "/gone/a", "d": 10})).ok  # replaces a location it holds
        assert (await leaving.request("oc", {"p": "/gone/b"})).ok
        assert (await leaving.request("om", {"p": "/gone", "d": {"d": 4}})).ok  # room again after a cancel
        view, _ = await watcher.listen("/gone")
        await leaving.close()
        await watcher.wait_for(lambda _: view.cache == {"a": 10, "d": 4}, timeout=10)
        assert view.cache == {"a": 10, "d": 4}
        assert metric(port, "canopy_limit_ondisconnect_refused_total") == 1
    finally:
        await watcher.close()


async def test_auth_attempts_over_the_rate_are_refused_and_neighbours_unaffected(start_server, tmp_path):
    config = tmp_path / "canopy.json"
    config.write_text(json.dumps({"gateway": {"maxAuthAttemptsPerSecond": 5}}))
    port = start_server("--config", str(config)).port
    guesser = await WireClient.connect(port, "limits-auth")
    neighbour = await WireClient.connect(port, "limits-auth")
    try:
        pending = [await guesser.send_request("auth", {"cred": f"guess-{index}"}) for index in range(30)]
        statuses = [(await guesser.wait_response(future)).status for future in pending]
        assert statuses[:5] == ["invalid_token"] * 5, statuses
        assert statuses.count("limit_exceeded") >= 20, statuses
        assert (await neighbour.auth("owner")).status == "ok"
        assert metric(port, "canopy_limit_auth_refused_total") == statuses.count("limit_exceeded")
    finally:
        await guesser.close()
        await neighbour.close()


async def test_requests_past_the_outstanding_limit_are_refused_and_neighbours_unaffected(start_server, tmp_path):
    config = tmp_path / "canopy.json"
    config.write_text(json.dumps({"gateway": {"maxOutstandingRequestsPerConnection": 4}}))
    port = start_server("--config", str(config)).port
    eager = await WireClient.connect(port, "limits-outstanding")
    neighbour = await WireClient.connect(port, "limits-outstanding")
    try:
        # Ten writes in one TCP segment reach the server in one read: none is answered before all are parsed.
        futures = []
        for index in range(10):
            r = eager.take_r()
            futures.append(eager._responses.setdefault(r, asyncio.get_running_loop().create_future()))
            body = {"t": "d", "d": {"r": r, "a": "p", "b": {"p": f"/o/{index}", "d": index}}}
            eager.ws.protocol.send_text(json.dumps(body).encode())
        eager.ws.transport.write(b"".join(eager.ws.protocol.data_to_send()))
        answers = [await eager.wait_response(future) for future in futures]
        assert [answer.status for answer in answers] == ["ok"] * 4 + ["limit_exceeded"] * 6, answers
        assert "maxOutstandingRequestsPerConnection" in json.dumps(answers[4].data)
        assert (await eager.put("/o/again", True)).ok  # reading resumed once the answers went out
        assert (await neighbour.get("/o")).data == {"0": 0, "1": 1, "2": 2, "3": 3, "again": True}
        assert metric(port, "canopy_limit_outstanding_refused_total") == 6
    finally:
        for client in (eager, neighbour):
            await client.close()


@pytest.mark.timeout(40)
async def test_a_client_flooding_past_the_inbound_rate_is_slowed_then_closed(start_server, tmp_path):
    config = tmp_path / "canopy.json"
    config.write_text(json.dumps({"server": {
        "maxInboundBytesPerSecond": 50_000, "inboundBurstBytes": 50_000, "inboundThrottleSeconds": 1}}))
    port = start_server("--config", str(config)).port
    flooder = await WireClient.connect(port, "limits-inbound")
    neighbour = await WireClient.connect(port, "limits-inbound")
    polite = await WireClient.connect(port, "limits-inbound")
    try:
        # One burst over the bucket, then silence: slowed (read as the bucket refills), never closed.
        burst = [await polite.send_request("p", {"p": f"/polite/{index}", "d": "x" * 10_000}) for index in range(8)]
        for future in burst:
            assert (await polite.wait_response(future, timeout=10)).ok
        value = "y" * 20_000
        started = asyncio.get_running_loop().time()
        sent = 0
        while not flooder.closed.is_set() and asyncio.get_running_loop().time() - started < 20:
            try:
                await flooder.send_request("p", {"p": f"/flood/{sent % 10}", "d": value})
            except Exception:  # the server closed the socket under our feet
                break
            sent += 1
            if sent % 10 == 0:
                assert (await neighbour.put("/neighbour", sent)).ok
        await flooder.wait_closed(10)
        assert flooder.close_code == 1008 and flooder.close_reason == "inbound rate limit exceeded", \
            (flooder.close_code, flooder.close_reason)
        assert sent * 20_000 > 50_000  # it did send past its bucket
        assert not polite.closed.is_set()
        assert (await polite.put("/polite/after", 1)).ok
        assert (await neighbour.get("/neighbour")).ok
        assert metric(port, "canopy_limit_inbound_rate_closed_total") == 1
    finally:
        for client in (flooder, neighbour, polite):
            await client.close()
