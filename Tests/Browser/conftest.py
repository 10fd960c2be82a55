"""Fixtures of the web console tests: a Canopy server, a headless Chromium page on the console, REST helpers.

The server binary is ``<repo>/.build/debug/canopy`` unless ``CANOPY_BIN`` names another one; it runs on a free port
of 127.0.0.1 in a temporary directory, where no rules file exists (open data, ``owner`` is the admin credential).
The tests of the rules, requests and "view as" views use a second server started with ``RULES`` (``ruled``).
The console is loaded from the server itself (``--console-dir Console``), ``http://127.0.0.1:PORT/.console/``: the
server accepts the admin credential only from its own origin.

Chromium is the Debian package (``/usr/bin/chromium``, or ``CHROMIUM``); Playwright's own browser download is
never used. Each test leaves a screenshot in ``Tests/Browser/screenshots/``.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from console_support import Canopy, console_page

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

expect.set_options(timeout=5000)

# The rules the second server starts with (and gets back after a test that published others).
RULES = """{
  // Rules of the console's rules, requests and view-as tests.
  "rules": {
    "locked": {
      ".read": true,
      ".write": "auth != null"
    },
    "private": {
      ".read": "auth.uid == 'alice'"
    },
    "open": {
      ".read": true,
      ".write": true
    }
  }
}
"""


@pytest.fixture(scope="session")
def canopy(tmp_path_factory):
    server = Canopy(tmp_path_factory.mktemp("canopy")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def console_url(canopy):
    return console_page(canopy.port)


@pytest.fixture(scope="session")
def ruled_server(tmp_path_factory):
    server = Canopy(tmp_path_factory.mktemp("canopy-rules"), rules=RULES).start()
    yield server
    server.stop()


@pytest.fixture
def ruled(ruled_server):
    """The server with ``RULES``; rules a test published are replaced by ``RULES`` again afterwards."""
    yield ruled_server
    if ruled_server.rules_text() != RULES:
        ruled_server.publish_rules(RULES)


@pytest.fixture
def ruled_url(ruled):
    return console_page(ruled.port)


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def ns(request) -> str:
    """A namespace of this test's own."""
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40]
    return f"{name}-{hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:6]}"


@pytest.fixture
def page(browser, request):
    """A fresh browser context and page; uncaught page errors fail the test; a screenshot is kept at the end."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    SCREENSHOTS.mkdir(exist_ok=True)
    try:
        page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}-end.png"), full_page=True)
    finally:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture
def snap(page, request):
    """snap("moment") saves a screenshot of the page now as screenshots/<test>-<moment>.png."""

    def take(moment: str) -> Path:
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{request.node.name}-{moment}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
