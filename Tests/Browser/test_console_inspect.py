"""The requests view (rule evaluations as they happen) and the server view (figures, charts, connections)."""

from __future__ import annotations

import re
import threading
import time

from playwright.sync_api import expect

from console_support import open_console


def event_rows(page, ns: str, path: str):
    """The requests view's rows of evaluations in a namespace at a path."""
    return page.locator("#requests-table tbody.event").filter(
        has=page.locator("td", has_text=re.compile(f"^{re.escape(ns)}$"))).filter(
        has=page.locator("td", has_text=re.compile(f"^{re.escape(path)}$")))


def test_the_requests_view_shows_another_clients_denial(page, ruled, ruled_url, ns, snap):
    sources = []
    page.on("request", lambda request: "/.inspect/evaluations" in request.url and sources.append(request.url))
    page.goto(ruled_url + "#/requests?token=owner")
    expect(page.locator("#requests-status")).to_contain_text("Live")

    assert ruled.unauthenticated("PUT", ns, "locked/y", {"by": "python"}) == 401
    started = time.monotonic()
    denied = event_rows(page, ns, "/locked/y")
    expect(denied).to_have_count(1, timeout=4000)
    assert time.monotonic() - started < 4
    expect(denied).to_have_class(re.compile(r"\bdenied\b"))
    expect(denied.locator(".decision")).to_have_text("DENIED")
    expect(denied.locator(".event-row")).to_contain_text("set")
    expect(denied.locator(".event-row")).to_contain_text("unauthenticated")

    # An allowed write appears above it (newest first); "denied only" hides it.
    assert ruled.unauthenticated("PUT", ns, "open/z", 1) == 200
    allowed = event_rows(page, ns, "/open/z")
    expect(allowed.locator(".decision")).to_have_text("ALLOWED")
    order = page.locator("#requests-table tbody.event").evaluate_all(
        "(rows, ns) => rows.filter((row) => row.rows[0].cells[1].textContent === ns)"
        ".map((row) => row.rows[0].cells[3].textContent)", ns)
    assert order[:2] == ["/open/z", "/locked/y"]
    page.get_by_label("Show", exact=True).select_option("denied")
    expect(allowed).to_be_hidden()
    expect(denied).to_be_visible()

    # Clicking the row expands its trace; the rule links to its line in the rules view.
    toggle = denied.get_by_role("button")
    denied.locator(".event-row td").nth(3).click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    step = denied.locator('.trace tr[data-rule="/locked/.write"]')
    expect(step.locator(".outcome")).to_have_text("false")
    snap("denied")
    step.get_by_role("link").click()
    expect(page).to_have_url(re.compile(r"#/rules\?line=\d+"))
    editor = page.get_by_role("textbox", name="Rules")
    expect(editor).to_be_focused()
    line = int(re.search(r"line=(\d+)", page.url).group(1))
    assert editor.input_value().splitlines()[line - 1].strip() == '".write": "auth != null"'
    expect(page.locator("#rules-gutter .ln.target")).to_have_attribute("data-line", str(line))

    # Leaving the view closed the stream; pausing holds new rows back.
    page.go_back()
    expect(page.locator("#requests-status")).to_contain_text("Live")
    assert len(sources) == 2
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("button", name="Resume")).to_have_attribute("aria-pressed", "true")
    assert ruled.unauthenticated("PUT", ns, "locked/w", 2) == 401
    expect(page.locator("#requests-status")).to_contain_text("1 new evaluation held", timeout=4000)
    expect(event_rows(page, ns, "/locked/w")).to_have_count(0)
    page.get_by_role("button", name="Resume").click()
    expect(event_rows(page, ns, "/locked/w")).to_have_count(1)


def test_the_server_view_charts_live_figures(page, canopy, console_url, ns, snap):
    canopy.put(ns, "counter", 0)
    open_console(page, console_url, ns, "")
    expect(page.locator(f'#namespaces option[value="{ns}"]')).to_have_count(1)  # the namespace suggestions
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Server").click()
    expect(page).to_have_url(re.compile(r"#/server$"))

    # Writes from another client, for a few seconds.
    stop = threading.Event()

    def write():
        n = 0
        while not stop.is_set():
            n += 1
            canopy.put(ns, "counter", n)
            time.sleep(0.05)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        writes = page.locator("#figure-writesPerSecond")
        expect(writes).to_have_text(re.compile(r"^[1-9][0-9]*$"), timeout=5000)
        series = page.locator('svg[data-chart="writesPerSecond"] path.series')
        expect(series).to_have_attribute("d", re.compile(r"^M[\d.]+ [\d.]+( L[\d.]+ [\d.]+)+$"))
        # Something above the axis: a point whose y is above the bottom of the plot.
        ys = [float(y) for y in re.findall(r"[ML][\d.]+ ([\d.]+)", series.get_attribute("d"))]
        assert min(ys) < max(ys)
        expect(page.locator('svg[data-chart="writesPerSecond"]')).to_have_attribute(
            "aria-label", re.compile(r"^Writes per second over the last \d+ minutes: now \d+, highest [1-9]"))
        # (Deliveries/s is not asserted: pushes to the console's own coalescing listen are not counted there.)
        expect(page.locator("#figure-deliveriesPerSecond")).to_have_text(re.compile(r"^[0-9]+$"))
        snap("figures")
    finally:
        stop.set()
        writer.join()

    for chart in ("connections", "writesPerSecond", "deliveriesPerSecond", "bytesOutPerSecond"):
        expect(page.locator(f'svg[data-chart="{chart}"] path.series')).to_have_count(1)
    expect(page.locator("#figure-connections")).to_have_text(re.compile(r"^[1-9][0-9]*$"))

    # This page's own WebSocket is in the connections table, with its listen.
    mine = page.locator("#connections-table tbody tr").filter(has_text=ns)
    expect(mine).to_have_count(1, timeout=5000)
    expect(mine).to_contain_text("admin")
    expect(mine).to_contain_text("websocket")
    expect(mine.locator(".listens li")).to_have_text(["/"])
    expect(page.locator("#connections-total")).to_have_text(re.compile(r"^\d+ connections?"))
