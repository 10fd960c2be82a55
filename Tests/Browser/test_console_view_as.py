"""View as user: the data view's connection authenticates with an auth variable, so the rules apply as that user;
listens the user may not read are revoked by the server and show "no read access"."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from console_support import open_console, row


def test_view_as_user_applies_the_read_rules(page, ruled, ruled_url, ns, snap):
    received: list[str] = []
    page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: received.append(str(frame))))
    ruled.put(ns, "private", {"note": "for alice"})
    open_console(page, ruled_url, ns, "private")
    note = row(page, "/private/note")
    expect(note).to_contain_text('"for alice"')
    denial = row(page, "/private").locator("> .line .row-error")
    view_as = page.get_by_label("View as", exact=True)
    status = page.locator("#view-as-status")
    expect(status).to_have_text("Viewing as the admin: rules bypassed.")

    # Bob may not read /private: the server revokes the listen (a `c` message) and the data goes.
    view_as.fill('{"uid": "bob"}')
    view_as.press("Enter")
    expect(denial).to_have_text("no read access")
    expect(note).to_have_count(0)
    expect(status).to_have_text('Viewing as {"uid":"bob"}: the rules apply, to reads and writes.')
    assert any('"a":"c"' in frame and '"/private"' in frame for frame in received)
    snap("bob")
    connections = json.loads(ruled.admin("GET", "/.inspect/connections.json")[1])["connections"]
    assert [c["auth"] for c in connections if c["namespace"] == ns] == [{"uid": "bob"}]

    # Alice may: the listen is made again and the data comes back.
    view_as.fill('{"uid": "alice"}')
    page.get_by_role("button", name="Apply", exact=True).click()
    expect(note).to_contain_text('"for alice"')
    expect(denial).to_have_text("")
    snap("alice")

    # Unauthenticated, then the admin again.
    view_as.fill("null")
    view_as.press("Enter")
    expect(denial).to_have_text("no read access")
    page.get_by_role("button", name="View as admin").click()
    expect(note).to_contain_text('"for alice"')
    expect(view_as).to_have_value("")
    expect(status).to_have_text("Viewing as the admin: rules bypassed.")

    # Not JSON: nothing changes.
    view_as.fill("{uid: bob}")
    view_as.press("Enter")
    expect(status).to_contain_text("Enter auth as a JSON object")
    expect(note).to_be_visible()


def test_view_as_holds_across_places(page, ruled, ruled_url, ns):
    ruled.put(ns, "private", {"note": "for alice"})
    ruled.put(ns, "open", {"x": 1})
    open_console(page, ruled_url, ns, "open")
    view_as = page.get_by_label("View as", exact=True)
    view_as.fill('{"uid": "bob"}')
    view_as.press("Enter")
    expect(row(page, "/open/x")).to_contain_text("1")  # readable by everyone

    # Another path: its listen is refused at once.
    path_bar = page.get_by_label("Path", exact=True)
    path_bar.fill("/private")
    path_bar.press("Enter")
    expect(row(page, "/private").locator("> .line .row-error")).to_have_text("no read access")
    expect(row(page, "/private/note")).to_have_count(0)

    # Writes are judged as bob too.
    page.get_by_label("Path", exact=True).fill("/open")
    page.get_by_label("Path", exact=True).press("Enter")
    expect(row(page, "/open/x")).to_contain_text("1")
    page.get_by_role("button", name="Delete /open/x", exact=True).click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(row(page, "/open/x")).to_have_count(0)
    assert ruled.get(ns, "open/x") is None
