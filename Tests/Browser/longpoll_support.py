"""Helpers of the long-polling browser tests (test_long_polling.py).

* :class:`PageOrigin` serves ``fixtures/longpoll`` (the page and our own client, ``client.js``) from a thread on
  another port and host name (``localhost``) than the server (``127.0.0.1``), so the page's script tags and frames
  load the server's answers cross-origin, as a real app's page loads Firebase's.
* :class:`Server` is a ``canopy serve`` process (``CANOPY_BIN``, default ``.build/debug/canopy``) with optional rules
  and extra options, restartable on the same port and data directory.
* :class:`WireClient` is a second client over ``/.ws`` (Python ``websockets``, synchronous), for "another client
  sees it" checks.
* The page helpers drive ``window.lp`` (fixtures/longpoll/client.js).
"""

from __future__ import annotations

import functools
import http.client
import http.server
import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from playwright.sync_api import Page
from websockets.sync.client import connect as ws_connect

from console_support import REPO_ROOT, Canopy

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "longpoll"
START_TIMEOUT = 20.0


# -- the page's origin --------------------------------------------------------------------------------------------

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class PageOrigin:
    """``fixtures/longpoll`` over HTTP on ``localhost:<free port>`` (a thread of the test process)."""

    def __init__(self, directory: Path = FIXTURES):
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="page-origin", daemon=True)

    def start(self) -> "PageOrigin":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def page_url(self) -> str:
        return f"http://localhost:{self.port}/index.html"


# -- the server ---------------------------------------------------------------------------------------------------

class Server(Canopy):
    """A ``canopy serve`` on 127.0.0.1 with ``extra_args``; ``restart`` keeps its port and data directory."""

    def __init__(self, directory: Path, rules: str | None = None, extra_args: tuple[str, ...] = ()):
        super().__init__(directory, port=0, rules=rules)
        self.extra_args = tuple(extra_args)
        self.starts = 0

    def start(self) -> "Server":
        binary = Path(os.environ.get("CANOPY_BIN") or REPO_ROOT / ".build" / "debug" / "canopy")
        if not binary.exists():
            pytest.fail(f"server binary {binary} is missing: build it or set CANOPY_BIN")
        port_file = self.directory / "port"
        port_file.unlink(missing_ok=True)
        command = [str(binary), "serve", "--host", "127.0.0.1", "--port", str(self.requested_port),
                   "--port-file", str(port_file), "--data-dir", str(self.directory / "data"),
                   "--log-level", "notice", "--namespaces", "*", *self.extra_args]
        if self.rules is not None:
            rules_file = self.directory / "database.rules.json"
            rules_file.write_text(self.rules)
            command += ["--rules", str(rules_file)]
        env = {**os.environ, "CANOPY_DATA_MAX_NAMESPACES": "1000"}
        self.log = open(self.directory / "server.log", "ab")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.directory, env=env)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"server exited with {self.process.returncode} at start: {self.log_tail()}")
            text = port_file.read_text().strip() if port_file.exists() else ""
            if text.isdigit():
                self.port = int(text)
                self.requested_port = self.port  # a restart comes back on the same port
                self.starts += 1
                return self
            time.sleep(0.02)
        self.stop()
        pytest.fail(f"server wrote no port file within {START_TIMEOUT}s: {self.log_tail()}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self.process and not self.log.closed:
            self.log.close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def admin_json(self, path: str) -> Any:
        status, body = self.admin("GET", path)
        assert status == 200, f"GET {path} answered {status}: {body[:300]!r}"
        return json.loads(body)

    def connections(self) -> list[dict]:
        """``/.inspect/connections.json``'s connections (as the admin, from loopback)."""
        return self.admin_json("/.inspect/connections.json")["connections"]

    def connection(self, session_id: str) -> dict | None:
        return next((entry for entry in self.connections() if entry.get("id") == session_id), None)

    def metric(self, name: str) -> float:
        """The value of an unlabelled metric of ``/.metrics`` (0 when absent)."""
        status, body = self.admin("GET", "/.metrics")
        assert status == 200, body[:300]
        match = re.search(rf"^{re.escape(name)}(?:\{{\}})? ([0-9.eE+-]+)$", body.decode(), re.MULTILINE)
        return float(match.group(1)) if match else 0.0


class RestWriter:
    """REST writes as the admin on one kept-alive HTTP connection (fast sequential writes)."""

    def __init__(self, server: Server, ns: str):
        self.server = server
        self.ns = ns
        self.http = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)

    def put(self, path: str, value: Any) -> None:
        body = json.dumps(value).encode()
        self.http.request("PUT", f"/{path.strip('/')}.json?ns={self.ns}", body=body,
                          headers={"Authorization": "Bearer owner", "Content-Type": "application/json"})
        response = self.http.getresponse()
        answer = response.read()
        assert response.status == 200, f"PUT {path} answered {response.status}: {answer[:200]!r}"

    def close(self) -> None:
        self.http.close()


# -- a second client over /.ws ------------------------------------------------------------------------------------

class WireClient:
    """A minimal wire client over ``/.ws`` (no rules bypass): listens and collects the pushes it gets."""

    def __init__(self, port: int, ns: str):
        self.ws = ws_connect(f"ws://127.0.0.1:{port}/.ws?v=5&ns={ns}", open_timeout=10, max_size=None)
        self.next_r = 1
        self.responses: dict[int, dict] = {}
        self.pushes: list[dict] = []
        self.hello = self._read(10.0)
        assert self.hello.get("t") == "c" and self.hello["d"]["t"] == "h", self.hello

    def __enter__(self) -> "WireClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.ws.close()

    def _read(self, timeout: float) -> dict:
        text = self.ws.recv(timeout=timeout)
        if len(text) <= 6 and text.isdigit():
            text = "".join(self.ws.recv(timeout=timeout) for _ in range(int(text)))
        return json.loads(text)

    def _pump(self, timeout: float) -> None:
        message = self._read(timeout)
        if message.get("t") == "d":
            body = message["d"]
            if "r" in body:
                self.responses[body["r"]] = body["b"]
            elif "a" in body:
                self.pushes.append(body)

    def request(self, action: str, body: dict, timeout: float = 10.0) -> dict:
        r = self.next_r
        self.next_r += 1
        self.ws.send(json.dumps({"t": "d", "d": {"r": r, "a": action, "b": body}}))
        deadline = time.monotonic() + timeout
        while r not in self.responses:
            self._pump(max(0.05, deadline - time.monotonic()))
            if time.monotonic() > deadline:
                raise AssertionError(f"no response to {action} {body} within {timeout}s")
        return self.responses.pop(r)

    def listen(self, path: str) -> dict:
        return self.request("q", {"p": path, "h": ""})

    def wait_for_push(self, predicate: Callable[[dict], bool], timeout: float = 10.0) -> dict:
        """The first push (``{"a", "b"}``) so far or arriving within ``timeout`` that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for push in self.pushes[seen:]:
                if predicate(push):
                    return push
            seen = len(self.pushes)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no matching push within {timeout}s; got {self.pushes[-5:]}")
            try:
                self._pump(remaining)
            except TimeoutError:
                pass


# -- the page -----------------------------------------------------------------------------------------------------

def open_page(page: Page, origin: PageOrigin) -> None:
    page.goto(origin.page_url)
    page.wait_for_function("() => window.lp && window.lp.state === 'idle'", timeout=10_000)


def connect(page: Page, server: Server, ns: str, timeout: float = 15.0, **options: Any) -> dict:
    """``lp.connect`` on the open page and waits until it is connected; returns ``lp.summary()``."""
    page.evaluate("o => lp.connect(o)", {"server": server.base, "ns": ns, **options})
    wait_js(page, "() => lp.state === 'connected'", timeout=timeout)
    return summary(page)


def summary(page: Page) -> dict:
    return page.evaluate("() => lp.summary()")


def view(page: Page, view_id: int) -> dict:
    return page.evaluate("id => lp.view(id)", view_id)


def listen(page: Page, path: str, **options: Any) -> int:
    """A listen from the page; waits for the server's ok; returns its id."""
    view_id = page.evaluate("([p, o]) => lp.listen(p, o)", [path, options])
    wait_js(page, "id => lp.view(id).status !== 'pending'", view_id)
    state = view(page, view_id)
    assert state["status"] == "ok", f"listen at {path} answered {state['status']}: {state['error']}"
    return view_id


def wait_js(page: Page, expression: str, arg: Any = None, timeout: float = 10.0, what: str | None = None) -> None:
    """``page.wait_for_function`` with a readable failure (the client's summary and journal tail)."""
    try:
        page.wait_for_function(expression, arg=arg, timeout=timeout * 1000, polling=50)
    except Exception as error:  # noqa: BLE001 - re-raised with the client's state
        try:
            state = summary(page)
            journal = page.evaluate("() => lp.journal.slice(-25)")
        except Exception:  # noqa: BLE001
            state, journal = "(page gone)", []
        raise AssertionError(f"waited {timeout}s for {what or expression} ({arg!r}): {error}\n"
                             f"client: {json.dumps(state)[:3000]}\njournal: {json.dumps(journal)[:3000]}") from None


def wait_value(page: Page, view_id: int, value: Any, timeout: float = 10.0) -> None:
    """Waits until the page's view ``view_id`` holds ``value``."""
    wait_js(page, "([id, want]) => lp.canonical(lp.view(id).value) === lp.canonical(want)", [view_id, value],
            timeout=timeout, what=f"view {view_id} == {json.dumps(value)[:200]}")


def assert_clean(page: Page) -> dict:
    """The client saw nothing unexpected (no anomalies, no internal errors); returns its summary."""
    state = summary(page)
    assert not state["errors"], f"client errors: {state['errors']}"
    assert not state["anomalies"], f"protocol anomalies seen by the client: {state['anomalies']}"
    return state


def poll_until(check: Callable[[], Any], timeout: float, interval: float = 0.05) -> tuple[Any, float]:
    """Calls ``check`` until it returns something truthy or ``timeout`` passes; returns (result, seconds taken)."""
    start = time.monotonic()
    while True:
        result = check()
        elapsed = time.monotonic() - start
        if result or elapsed > timeout:
            return result, elapsed
        time.sleep(interval)
