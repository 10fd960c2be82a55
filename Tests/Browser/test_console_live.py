"""The live tree: another client's writes appear highlighted within a second, one WebSocket per page, navigation
through the URL (path bar, namespace, back button), paging, and reconnecting after the server restarts."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from console_support import Canopy, console_page, open_console, row, wait_loaded

ADDED = re.compile(r"\badded\b")
CHANGED = re.compile(r"\bchanged\b")
REMOVED = re.compile(r"\bremoved\b")


def root_children(page):
    return page.locator("#tree .row.root > ul.children > li.row")


def test_another_clients_writes_are_highlighted_within_a_second(page, console_url, canopy, ns, snap):
    canopy.put(ns, "items", {"a": 1, "c": {"deep": True}})
    open_console(page, console_url, ns, "items")
    expect(row(page, "/items/a")).to_contain_text("1")

    started = time.monotonic()
    canopy.put(ns, "items/b", "new")
    expect(row(page, "/items/b")).to_have_class(ADDED, timeout=1000)
    assert time.monotonic() - started < 1.0
    expect(row(page, "/items/b")).to_contain_text('"new"')
    snap("added")

    started = time.monotonic()
    canopy.put(ns, "items/a", 2)
    expect(row(page, "/items/a")).to_have_class(CHANGED, timeout=1000)
    assert time.monotonic() - started < 1.0
    line = row(page, "/items/a").locator("> .line")
    expect(line).to_have_attribute("title", "1 → 2")
    line.hover()
    snap("changed")

    started = time.monotonic()
    canopy.delete(ns, "items/b")
    expect(row(page, "/items/b")).to_have_class(REMOVED, timeout=1000)
    assert time.monotonic() - started < 1.0
    snap("removed")
    expect(row(page, "/items/b")).to_have_count(0, timeout=3000)

    # An expanded child is live too.
    page.get_by_role("button", name="/items/c", exact=True).click()
    expect(row(page, "/items/c/deep")).to_contain_text("true")
    canopy.put(ns, "items/c/deep", False)
    expect(row(page, "/items/c/deep")).to_have_class(CHANGED, timeout=1000)
    expect(row(page, "/items/c/deep")).to_contain_text("false")


def test_one_websocket_per_page_and_urls_for_views(page, console_url, canopy, ns, snap):
    sockets = []
    page.on("websocket", lambda socket: sockets.append(socket))
    canopy.put(ns, "u", {"alice": {"name": "Alice", "pets": {"cat": "Tom"}}, "bob": {"name": "Bob"}})
    open_console(page, console_url, ns, "u")
    for path in ("/u/alice", "/u/bob", "/u/alice/pets"):
        page.get_by_role("button", name=path, exact=True).click()
    expect(row(page, "/u/alice/pets/cat")).to_contain_text('"Tom"')
    expect(row(page, "/u/bob/name")).to_contain_text('"Bob"')
    assert len(sockets) == 1
    assert f"ns={ns}" in sockets[0].url

    # Collapsing unlistens; the rows below go.
    page.get_by_role("button", name="/u/alice", exact=True).click()
    expect(row(page, "/u/alice/pets")).to_have_count(0)

    # The path bar changes the URL and the view.
    path_bar = page.get_by_label("Path", exact=True)
    path_bar.fill("/u/alice/pets")
    path_bar.press("Enter")
    expect(page).to_have_url(re.compile(rf"#/data/{ns}/u/alice/pets$"))
    wait_loaded(page)
    expect(row(page, "/u/alice/pets/cat")).to_be_visible()

    # Breadcrumbs lead up.
    page.get_by_role("navigation", name="Breadcrumb").get_by_role("link", name="u", exact=True).click()
    expect(page).to_have_url(re.compile(rf"#/data/{ns}/u$"))
    wait_loaded(page)

    # Another namespace: a new socket, the old one closed.
    other = ns[:50] + "-other"
    canopy.put(other, "u/zed", 26)
    namespace = page.get_by_label("Namespace", exact=True)
    namespace.fill(other)
    namespace.press("Enter")
    expect(page).to_have_url(re.compile(rf"#/data/{other}/u$"))
    expect(page.locator("#connection")).to_have_text(f"Connected to {other}")
    expect(row(page, "/u/zed")).to_contain_text("26")
    assert len(sockets) == 2
    deadline = time.monotonic() + 3
    while not sockets[0].is_closed() and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert sockets[0].is_closed()
    snap("other-namespace")

    # The back button returns to the previous views.
    page.go_back()
    expect(page).to_have_url(re.compile(rf"#/data/{ns}/u$"))
    expect(page.get_by_label("Namespace", exact=True)).to_have_value(ns)
    expect(row(page, "/u/alice")).to_be_visible()
    page.go_back()
    expect(page).to_have_url(re.compile(rf"#/data/{ns}/u/alice/pets$"))
    expect(page.get_by_label("Path", exact=True)).to_have_value("/u/alice/pets")
    expect(row(page, "/u/alice/pets/cat")).to_be_visible()


def test_at_most_fifty_children_per_level_with_load_more(page, console_url, canopy, ns):
    canopy.put(ns, "many", {f"k{i:03d}": i for i in range(120)})
    open_console(page, console_url, ns, "many")
    expect(root_children(page)).to_have_count(50)
    expect(root_children(page).first).to_have_attribute("data-path", "/many/k000")
    more = page.get_by_role("button", name="Load more children of /many")
    expect(more).to_have_text("Load more (70 more)")
    more.click()
    expect(root_children(page)).to_have_count(100)
    more.click()
    expect(root_children(page)).to_have_count(120)
    expect(more).to_be_hidden()


def test_children_are_in_firebase_key_order(page, console_url, canopy, ns):
    canopy.put(ns, "order", {"b": 1, "10": 1, "2": 1, "a": 1, "-1": 1})
    open_console(page, console_url, ns, "order")
    paths = root_children(page).evaluate_all("rows => rows.map(row => row.dataset.path)")
    assert paths == ["/order/-1", "/order/2", "/order/10", "/order/a", "/order/b"]


def test_reconnects_and_listens_again_after_the_server_restarts(page, ns, tmp_path):
    server = Canopy(tmp_path).start()
    try:
        server.put(ns, "live", {"x": 1})
        open_console(page, console_page(server.port), ns, "live")
        port = server.port
        server.stop()
        expect(page.locator("#connection")).to_have_text(re.compile("^(Offline|Connecting)"))
        server = Canopy(tmp_path, port=port).start()
        expect(page.locator("#connection")).to_have_text(re.compile("^Connected"), timeout=15000)
        server.put(ns, "live/y", 2)
        expect(row(page, "/live/y")).to_contain_text("2", timeout=3000)
        expect(row(page, "/live/x")).to_contain_text("1")
    finally:
        server.stop()
