"""Helpers of the web console tests: a ``canopy serve`` process with REST as the admin, and page helpers."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 20.0


class Canopy:
    """One ``canopy serve`` process on 127.0.0.1."""

    def __init__(self, directory: Path, port: int = 0, rules: str | None = None):
        """``rules``: the text of a rules file the server starts with (none: open data)."""
        self.directory = directory
        self.requested_port = port
        self.rules = rules
        self.port = 0
        self.process: subprocess.Popen | None = None

    def start(self) -> "Canopy":
        binary = Path(os.environ.get("CANOPY_BIN") or REPO_ROOT / ".build" / "debug" / "canopy")
        if not binary.exists():
            pytest.fail(f"server binary {binary} is missing: build it or set CANOPY_BIN")
        port_file = self.directory / "port"
        port_file.unlink(missing_ok=True)
        command = [str(binary), "serve", "--host", "127.0.0.1", "--port", str(self.requested_port),
                   "--port-file", str(port_file), "--data-dir", str(self.directory / "data"),
                   "--console-dir", str(REPO_ROOT / "Console"), "--log-level", "notice", "--namespaces", "*"]
        if self.rules is not None:
            rules_file = self.directory / "database.rules.json"
            rules_file.write_text(self.rules)
            command += ["--rules", str(rules_file)]
        env = {**os.environ, "CANOPY_DATA_MAX_NAMESPACES": "1000"}
        self.log = open(self.directory / "server.log", "ab")
        # The temporary directory as working directory keeps the repository's Config/ out of the test.
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.directory, env=env)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"server exited with {self.process.returncode} at start: {self.log_tail()}")
            text = port_file.read_text().strip() if port_file.exists() else ""
            if text.isdigit():
                self.port = int(text)
                return self
            time.sleep(0.02)
        self.stop()
        pytest.fail(f"server wrote no port file within {START_TIMEOUT}s: {self.log_tail()}")

    def log_text(self) -> str:
        return (self.directory / "server.log").read_bytes().decode("utf-8", "replace")

    def log_tail(self, limit: int = 3000) -> str:
        return self.log_text()[-limit:]

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self.process:
            self.log.close()

    # -- REST as the admin ------------------------------------------------------------------------------------------

    def url(self, ns: str, path: str, **params: str) -> str:
        segments = "/".join(urllib.parse.quote(key, safe="") for key in path.split("/") if key)
        query = urllib.parse.urlencode({"ns": ns, **params})
        return f"http://127.0.0.1:{self.port}/{segments}.json?{query}"

    def request(self, method: str, ns: str, path: str, value: Any = None, **params: str) -> Any:
        body = None if method in ("GET", "DELETE") else json.dumps(value).encode()
        request = urllib.request.Request(self.url(ns, path, **params), data=body, method=method,
                                         headers={"Authorization": "Bearer owner"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def get(self, ns: str, path: str, **params: str) -> Any:
        return self.request("GET", ns, path, **params)

    def put(self, ns: str, path: str, value: Any) -> Any:
        return self.request("PUT", ns, path, value)

    def delete(self, ns: str, path: str) -> Any:
        return self.request("DELETE", ns, path)

    def unauthenticated(self, method: str, ns: str, path: str, value: Any = None) -> int:
        """A REST request without credential (the rules judge it); returns the HTTP status."""
        body = None if method in ("GET", "DELETE") else json.dumps(value).encode()
        request = urllib.request.Request(self.url(ns, path), data=body, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    # -- admin endpoints --------------------------------------------------------------------------------------------

    def admin(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        """``/.settings/…`` or ``/.inspect/…`` as the admin: (status, body)."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=body, method=method,
                                         headers={"Authorization": "Bearer owner"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def rules_text(self) -> str:
        status, body = self.admin("GET", "/.settings/rules.json")
        assert status == 200, body
        return body.decode()

    def publish_rules(self, text: str) -> None:
        status, body = self.admin("PUT", "/.settings/rules.json", text.encode())
        assert status == 200, body


def console_page(port: int) -> str:
    """The console's URL (without fragment) on the server listening on ``port``."""
    return f"http://127.0.0.1:{port}/.console/"


def open_console(page: Page, console_url: str, ns: str, path: str = "", token: str | None = "owner") -> None:
    """Opens ``#/data/<ns>/<path>`` (passing the credential in the fragment) and waits until it is live."""
    fragment = f"#/data/{ns}/{path.strip('/')}" + (f"?token={token}" if token else "")
    page.goto(console_url + fragment)
    if token:
        expect(page.locator("#connection")).to_have_text(re.compile("^Connected"))
        wait_loaded(page)


def wait_loaded(page: Page) -> None:
    """Waits until the root listen of the tree has been confirmed by the server."""
    expect(page.locator("#tree .row.root > ul.children")).not_to_have_attribute("aria-busy", "true")


def row(page: Page, path: str):
    """The tree row of an absolute path."""
    return page.locator(f'li.row[data-path="{path}"]')
