"""A full disk (issue 17), on a small tmpfs the test mounts: writes are refused with a clear error, nothing is
acknowledged that is not durable, reads keep working, writes resume once space is freed, and the data directory
opens afterwards with every acknowledged write."""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from firebase_wire import WireClient, WireTimeout
from test_connection_limits import metric

VALUE = "v" * 50_000


def mount_tmpfs(directory: Path, size: str) -> None:
    directory.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip()}); JournalFaultTests covers the same "
                    "behaviour through the store's fault seam")


def rest_put(port: int, path: str, value) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(value).encode(), method="PUT")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.timeout(60)
async def test_a_full_disk_refuses_writes_keeps_reads_and_recovers(start_server, tmp_path):
    volume = tmp_path / "volume"
    mount_tmpfs(volume, "3m")
    try:
        ballast = volume / "ballast"
        ballast.write_bytes(b"\0" * 1_000_000)
        server = start_server(data_dir=volume / "data")
        writer = await WireClient.connect(server.port, "full")
        acknowledged: list[int] = []
        held = None  # the write that met the full disk, applied but not durable: it waits for space, unanswered
        for index in range(200):
            future = await writer.send_request("p", {"p": f"/items/{index}", "d": VALUE})
            try:
                answer = await writer.wait_response(future, timeout=2)
            except WireTimeout:
                held = (index, future)
                break
            if not answer.ok:
                assert answer.status == "unavailable" and "disk is full" in json.dumps(answer.data), answer
                break
            acknowledged.append(index)
        else:
            pytest.fail("the disk never filled")
        assert len(acknowledged) >= 10
        # New writes are refused at once with the reason.
        refused = await writer.put("/probe", VALUE)
        assert refused.status == "unavailable" and "disk is full" in json.dumps(refused.data), refused
        status, body = rest_put(server.port, "/rest.json?ns=full", "x")
        assert status == 507 and "disk is full" in body, (status, body)
        # Reads keep working, over REST and the wire.
        reader = await WireClient.connect(server.port, "full")
        first = await reader.get(f"/items/{acknowledged[0]}")
        assert first.ok and first.data == VALUE
        assert metric(server.port, "canopy_store_disk_full_total") >= 1
        assert "store.disk_full" in server.log_tail(20_000)
        # Space back: writes are accepted again within the journal's retry interval.
        ballast.unlink()
        if held is not None:
            assert (await writer.wait_response(held[1], timeout=10)).ok
            acknowledged.append(held[0])
        resumed = None
        for _ in range(50):
            resumed = await writer.put("/after", "space is back")
            if resumed.ok:
                break
            await asyncio.sleep(0.1)
        assert resumed is not None and resumed.ok, resumed
        await writer.close()
        await reader.close()
        # A crash now: everything acknowledged is on disk, and the directory opens without repair.
        start_server.kill(server)
        again = start_server(data_dir=volume / "data")
        client = await WireClient.connect(again.port, "full")
        try:
            items = (await client.get("/items")).data
            for index in acknowledged:
                assert items.get(str(index)) == VALUE, index
            assert (await client.get("/after")).data == "space is back"
        finally:
            await client.close()
        assert again.stop() == 0
    finally:
        subprocess.run(["umount", "-l", str(volume)], check=False)
