"""The binary is self-contained: copied alone into an empty directory and started there (working directory = that
directory, no checkout, no Config/, no Console/), it serves the web console built into it, byte for byte what
``Console/`` holds (so the built-in copy cannot drift from the checkout), answers ``/.health``, and prints its version.

The binary is ``CANOPY_RELEASE_BIN`` when set (``scripts/test`` sets it to the release build it makes,
``.build/release/canopy``), otherwise ``CANOPY_BIN`` or the debug build: the console is built in the same way in both.
``--console-dir`` still serves a folder instead, and one that cannot be read stops the start naming the setting."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO_ROOT, canopy_binary

CONSOLE = REPO_ROOT / "Console"
VERSION = re.compile(r"^\d+\.\d+\.\d+( \(commit [0-9a-f]{7,40}\))?$")


def binary_under_test() -> Path:
    explicit = os.environ.get("CANOPY_RELEASE_BIN")
    binary = Path(explicit) if explicit else canopy_binary()
    if not binary.exists():
        pytest.fail(f"server binary {binary} is missing: build it (swift build [-c release]) or set CANOPY_RELEASE_BIN")
    return binary


def clean_environment() -> dict[str, str]:
    """The inherited environment without any CANOPY_* setting, so only the binary's defaults apply."""
    return {key: value for key, value in os.environ.items() if not key.startswith("CANOPY_")}


@pytest.fixture
def alone(tmp_path) -> Path:
    """An empty directory holding nothing but a copy of the binary."""
    directory = tmp_path / "alone"
    directory.mkdir()
    shutil.copy2(binary_under_test(), directory / "canopy")
    assert sorted(path.name for path in directory.iterdir()) == ["canopy"]
    return directory


class Started:
    def __init__(self, directory: Path, *flags: str):
        self.directory = directory
        self.log = directory.parent / "server.log"
        port_file = directory.parent / "port"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(["./canopy", "serve", "--port", "0", "--port-file", str(port_file), *flags],
                                            cwd=directory, stdout=log, stderr=subprocess.STDOUT,
                                            env=clean_environment())
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the server exited with {self.process.returncode} at start: {self.output()}")
            text = port_file.read_text() if port_file.exists() else ""
            if text.strip().isdigit():
                self.port = int(text)
                return
            time.sleep(0.02)
        self.process.kill()
        pytest.fail(f"no port file within 20 s: {self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def get(self, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        response.data = response.read()  # type: ignore[attr-defined]
        connection.close()
        return response

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
                return -9
        return self.process.returncode


@pytest.fixture
def start():
    started: list[Started] = []

    def starter(directory: Path, *flags: str) -> Started:
        server = Started(directory, *flags)
        started.append(server)
        return server

    yield starter
    for server in started:
        code = server.stop()
        assert code == 0, f"the server exited with {code} after SIGTERM: {server.output()[-2000:]}"


def console_files() -> list[str]:
    return sorted(str(path.relative_to(CONSOLE)) for path in CONSOLE.rglob("*")
                  if path.is_file() and not any(part.startswith(".") for part in path.relative_to(CONSOLE).parts))


def test_version_is_printed(alone):
    finished = subprocess.run(["./canopy", "--version"], cwd=alone, capture_output=True, text=True, timeout=30,
                              env=clean_environment())
    assert finished.returncode == 0, finished.stderr
    assert VERSION.match(finished.stdout.strip()), finished.stdout
    assert sorted(path.name for path in alone.iterdir()) == ["canopy"], "--version created files"


def test_the_binary_alone_serves_its_console_and_health(alone, start):
    server = start(alone)
    index = server.get("/.console/")
    assert index.status == 200, index.data[:300]
    assert index.getheader("Content-Type") == "text/html; charset=utf-8"
    assert index.data == (CONSOLE / "index.html").read_bytes()
    assert index.getheader("Cache-Control") == "no-cache" and index.getheader("X-Content-Type-Options") == "nosniff"
    etag = index.getheader("ETag")
    assert etag and etag.startswith('"')
    assert server.get("/.console/index.html", {"If-None-Match": etag}).status == 304

    script = server.get("/.console/js/main.js", {"Accept-Encoding": "gzip"})
    assert script.status == 200 and script.getheader("Content-Type") == "text/javascript; charset=utf-8"
    assert script.getheader("Content-Encoding") == "gzip"
    assert gzip.decompress(script.data) == (CONSOLE / "js" / "main.js").read_bytes()
    assert server.get("/.console/console.css").getheader("Content-Type") == "text/css; charset=utf-8"

    health = server.get("/.health")
    assert health.status == 200 and json.loads(health.data)["status"] == "ok"
    assert "console.disabled" not in server.output() and "source=built in" in server.output(), server.output()
    # The defaults, relative to the working directory: a data directory beside the binary, nothing else.
    assert (alone / "data").is_dir()


def test_every_console_file_is_built_in_unchanged(alone, start):
    """What the binary serves is exactly Console/ now: a file added, changed or removed without a rebuild fails."""
    server = start(alone)
    files = console_files()
    assert "index.html" in files and any(name.startswith("js/") for name in files)
    for name in files:
        answer = server.get("/.console/" + name)
        assert answer.status == 200, name
        assert answer.data == (CONSOLE / name).read_bytes(), f"{name} differs from Console/{name}: rebuild"
    assert server.get("/.console/nope.js").status == 404


def test_console_dir_serves_a_folder_instead(alone, start, tmp_path):
    folder = tmp_path / "edited"
    (folder / "js").mkdir(parents=True)
    (folder / "index.html").write_text("<!doctype html><title>edited</title>\n")
    (folder / "js" / "main.js").write_text("export const edited = true;\n")
    server = start(alone, "--console-dir", str(folder))
    assert server.get("/.console/").data == b"<!doctype html><title>edited</title>\n"
    assert server.get("/.console/js/main.js").data == b"export const edited = true;\n"
    assert server.get("/.console/console.css").status == 404


def test_an_unreadable_console_dir_stops_the_start(alone, tmp_path):
    finished = subprocess.run(["./canopy", "serve", "--port", "0", "--console-dir", str(tmp_path / "missing")],
                              cwd=alone, capture_output=True, text=True, timeout=30, env=clean_environment())
    output = finished.stdout + finished.stderr
    assert finished.returncode > 0 and finished.returncode != 134, output[-800:]
    assert "console.directory" in output and str(tmp_path / "missing") in output, output[-800:]


def test_the_console_can_be_turned_off(alone, start):
    environment_off = ["--config", str(alone.parent / "off.json")]
    (alone.parent / "off.json").write_text(json.dumps({"console": {"enabled": False}}))
    server = start(alone, *environment_off)
    assert server.get("/.console/").status == 404
    assert server.get("/.health").status == 200
