"""A rolling restart under load (rolling_restart.py): the 3 Canopy nodes, then the 3 NATS servers, each restarted
in turn with SIGTERM while three writers pipeline acknowledged writes, reconnecting to another node when theirs
goes. Every process must serve again before the next goes, and in the end every acknowledged write must be read
back, with its value, through every node. The pauses are printed (``docs/reliability.md`` records them with the
release build). Skipped when ``nats-server`` is not installed, like test_cluster.py."""

from __future__ import annotations

import pytest

from cluster import nats_server_binary
from conftest import canopy_binary
from rolling_restart import rolling_restart

pytestmark = pytest.mark.skipif(nats_server_binary() is None,
                                reason="nats-server is not installed (apt-get install nats-server)")


@pytest.mark.timeout(180)
async def test_rolling_restart_of_every_node_loses_nothing(tmp_path):
    result = await rolling_restart(canopy_binary(), tmp_path, nats=True)
    print(result.summary())
    assert len(result.restarts) == 6, result.summary()
    assert result.acknowledged > 0 and result.lost == [], (result.summary(), result.lost[:10])
