"""Configuration is validated at start: a value out of its range is refused before anything starts, with the key's
name and the file, whatever the key (values that would trap deep in a component included)."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import canopy_binary

OUT_OF_RANGE = [
    ({"webSocket": {"maxMessageBytes": 0}}, "webSocket.maxMessageBytes"),
    ({"webSocket": {"maxMessageBytes": -5}}, "webSocket.maxMessageBytes"),
    ({"server": {"maxConnections": 0}}, "server.maxConnections"),
    ({"server": {"maxRequestLineBytes": 10}}, "server.maxRequestLineBytes"),
    ({"server": {"maxBodyBytes": 0}}, "server.maxBodyBytes"),
    ({"server": {"eventLoops": 100000}}, "server.eventLoops"),
    ({"server": {"idleTimeoutSeconds": -1}}, "server.idleTimeoutSeconds"),
    ({"outbound": {"lowWaterMarkBytes": 1000, "highWaterMarkBytes": 10}}, "outbound.highWaterMarkBytes"),
    ({"outbound": {"hardLimitBytes": 0}}, "outbound.hardLimitBytes"),
    ({"data": {"maxNamespaces": 0}}, "data.maxNamespaces"),
    ({"rest": {"keepAliveSeconds": 0}}, "rest.keepAliveSeconds"),
    ({"log": {"level": "loud"}}, "log.level"),
    ({"log": {"format": "xml"}}, "log.format"),
    ({"cluster": {"replicas": 9}}, "cluster.replicas"),
    ({"auth": {"clockSkewSeconds": 1e9}}, "auth.clockSkewSeconds"),
    ({"server": {"maxInboundBytesPerSecond": -1}}, "server.maxInboundBytesPerSecond"),
    ({"server": {"inboundBurstBytes": 0}}, "server.inboundBurstBytes"),
    ({"server": {"inboundThrottleSeconds": 0}}, "server.inboundThrottleSeconds"),
    ({"gateway": {"maxOutstandingRequestsPerConnection": 0}}, "gateway.maxOutstandingRequestsPerConnection"),
    ({"data": {"namespaces": ["ok", "../escape"]}}, "data.namespaces"),
]


def serve(config, tmp_path, *flags: str) -> subprocess.CompletedProcess:
    path = tmp_path / "canopy.json"
    path.write_text(json.dumps(config))
    return subprocess.run([str(canopy_binary()), "serve", "--config", str(path), "--port", "0",
                           "--data-dir", str(tmp_path / "data"), *flags],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)


@pytest.mark.parametrize("config,key", OUT_OF_RANGE, ids=[key for _, key in OUT_OF_RANGE])
def test_an_out_of_range_value_is_refused_with_its_key_and_file(tmp_path, config, key):
    finished = serve(config, tmp_path)
    output = finished.stdout + finished.stderr
    assert finished.returncode > 0 and finished.returncode != 134, (finished.returncode, output[-800:])  # no trap
    assert key in output and str(tmp_path / "canopy.json") in output, output[-800:]
    assert not (tmp_path / "data").exists(), "something was created before the configuration was checked"


def test_a_flag_out_of_range_is_refused_too(tmp_path):
    finished = serve({}, tmp_path, "--cluster-snapshot-every=-1")
    assert finished.returncode > 0 and "cluster.snapshotEvery" in finished.stdout + finished.stderr
