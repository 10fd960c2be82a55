"""The Swift client's examples (``Examples/cars``, ``Examples/feed``, ``Examples/profile``) run against the real server.

Each example is a built executable taking the database URL as its first argument; it prints what it does line by
line and exits 0 when what it saw was right. The binaries are looked up in ``CANOPY_EXAMPLES_BIN_DIR`` (default
``<repo>/.build/debug``, where ``swift build`` puts them); a test whose binary is missing is skipped. Every run is
bounded (the examples give up after 20 s themselves, and are killed after 30 s here).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO_ROOT, CanopyServer
from rest_client import Rest

EXAMPLES = ["cars", "feed", "profile"]
EXAMPLES_BIN_DIR = Path(os.environ.get("CANOPY_EXAMPLES_BIN_DIR") or REPO_ROOT / ".build" / "debug")
RUN_TIMEOUT = 30.0
NAMESPACE = "examples"


def example(name: str) -> Path:
    """The example's binary, or a skip naming what to build."""
    binary = EXAMPLES_BIN_DIR / name
    if not binary.exists():
        pytest.skip(f"example binary {binary} is missing: build it (swift build --product {name}) "
                    f"or set CANOPY_EXAMPLES_BIN_DIR")
    return binary


def run(binary: Path, server: CanopyServer, *args: str) -> list[str]:
    """Runs the example against ``server``'s ``examples`` namespace; asserts it exited 0; returns its output lines."""
    url = f"http://127.0.0.1:{server.port}?ns={NAMESPACE}"
    try:
        result = subprocess.run([str(binary), url, *args], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"{binary.name} did not finish within {RUN_TIMEOUT}s; output so far:\n{expired.stdout}")
    assert result.returncode == 0, (
        f"{binary.name} exited with {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    assert result.stderr == "", result.stderr
    return result.stdout.splitlines()


def eventually(read, expected, timeout: float = 10.0):
    """Polls ``read()`` until it returns ``expected`` (or fails after ``timeout`` seconds with the last value)."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if value == expected or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_cars_sees_every_crud_event_in_order(start_server):
    binary = example("cars")
    server = start_server()
    expected = [
        "observing cars",
        "value 0",
        "add Model S",
        "childAdded Model S (2012)",
        "value 1",
        "add Civic",
        "childAdded Civic (2019)",
        "value 2",
        "add Beetle",
        "childAdded Beetle (1938)",
        "value 3",
        "update Civic: year 2020",
        "childChanged Civic (2020)",
        "value 3",
        "remove Beetle",
        "childRemoved Beetle (1938)",
        "value 2",
        "cars: Model S (2012), Civic (2020)",
        "ok: 11 events as expected",
    ]
    assert run(binary, server) == expected
    # It starts from an empty store: a second run prints the same.
    assert run(binary, server) == expected
    rest = Rest(server.port, NAMESPACE)
    try:
        cars = rest.value("/cars")
    finally:
        rest.close()
    # Keys are push ids, in the order the cars were added.
    assert [cars[key] for key in sorted(cars)] == [
        {"model": "Model S", "year": 2012},
        {"model": "Civic", "year": 2020},
    ]


def test_feed_pages_through_the_timeline(start_server):
    binary = example("feed")
    server = start_server()
    assert run(binary, server) == [
        "posted 12 posts",
        "page: Post 8, Post 9, Post 10, Post 11, Post 12",
        "new post: Post 13",
        "new post: Post 14",
        "refresh: Post 13, Post 14",
        "older: Post 3, Post 4, Post 5, Post 6, Post 7",
        "older: Post 1, Post 2",
        "older: none, this is the first post",
        "timeline: " + ", ".join(f"Post {number}" for number in range(1, 15)),
        "ok: 14 posts in order",
    ]
    rest = Rest(server.port, NAMESPACE)
    try:
        posts = rest.value("/posts")
    finally:
        rest.close()
    assert [posts[key]["title"] for key in sorted(posts)] == [f"Post {number}" for number in range(1, 15)]
    assert all(isinstance(post["postedAt"], int) for post in posts.values()), "postedAt is the server's timestamp"


def test_profile_writes_defaults_once_counts_visits_and_leaves_offline(start_server):
    binary = example("profile")
    server = start_server()
    rest = Rest(server.port, NAMESPACE)
    try:
        runs = []
        for visit in (1, 2):
            lines = run(binary, server)
            runs.append(lines)
            assert lines[0] == ("first login: default profile written" if visit == 1 else "returning user: profile kept")
            assert re.fullmatch(r"profile: name=Guest theme=system createdAt=\d+", lines[1]), lines
            assert lines[2:] == [
                f"visits: {visit}",
                "connected",
                "on disconnect: status/ada = offline",
                "status/ada = online",
                "server has status/ada = online",
                "exiting: the server sets status/ada to offline when the connection drops",
            ]
            # The process is gone: the server ran its onDisconnect write.
            assert eventually(lambda: rest.value("/status/ada"), "offline") == "offline"

        # The defaults were written once: the second run read the same profile, creation time included.
        assert runs[0][1] == runs[1][1]
        created_at = int(runs[0][1].rsplit("=", 1)[1])
        assert abs(created_at - time.time() * 1000) < 120_000, "createdAt is the server's time"
        assert rest.value("/users/ada") == {
            "profile": {"name": "Guest", "theme": "system", "createdAt": created_at},
            "visits": 2,
        }

        # Another user (the uid after the URL) gets defaults and a counter of their own.
        lines = run(binary, server, "grace")
        assert lines[0] == "first login: default profile written"
        assert lines[2] == "visits: 1"
        assert eventually(lambda: rest.value("/status/grace"), "offline") == "offline"
        assert rest.value("/users/ada/visits") == 2
    finally:
        rest.close()


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_example_also_compiles_in_swift_5_mode(name):
    """Code written for the SDK compiles in both language modes: the package builds the examples in Swift 6 mode;
    this type-checks each in Swift 5 mode against the same built modules."""
    modules = REPO_ROOT / ".build" / "debug" / "Modules"
    if not (modules / "CanopyDatabase.swiftmodule").exists():
        pytest.skip(f"{modules} has no CanopyDatabase module: build the package first (swift build --build-tests)")
    checked = subprocess.run(
        ["swiftc", "-typecheck", "-swift-version", "5", "-I", str(modules),
         "-Xcc", f"-fmodule-map-file={REPO_ROOT / 'Sources/COpenSSL/module.modulemap'}",
         "-Xcc", f"-fmodule-map-file={REPO_ROOT / 'Sources/CZlib/module.modulemap'}",
         str(REPO_ROOT / "Examples" / name / "main.swift")],
        capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stderr[-2000:]
