"""Per-connection limits (issue 17): a connection over its listens or onDisconnect limit gets `limit_exceeded` for
that request, the refusal is counted in /.metrics, and its neighbours are unaffected."""

from __future__ import annotations

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
