"""Editing from the console: inline edit of a leaf, add child (push id by default), delete with confirmation, and
move/rename as one multi-path update."""

from __future__ import annotations

import json
import re
import time
from typing import Any, Callable

from playwright.sync_api import expect

from console_support import open_console, row

PUSH_ID_ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"


def eventually(page, read: Callable[[], Any], expected: Any, timeout: float = 5.0) -> None:
    """Waits until ``read()`` returns ``expected`` (letting the page's events through meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if value == expected or time.monotonic() > deadline:
            assert value == expected
            page.wait_for_timeout(50)  # delivers the page's pending events (sent frames) to the test
            return
        page.wait_for_timeout(50)


def sent_frames(page) -> list[dict]:
    """Records the JSON messages the page sends on its WebSockets (call before opening the console)."""
    frames: list[dict] = []

    def on_socket(socket):
        socket.on("framesent", lambda payload: frames.append(json.loads(payload)) if payload.startswith("{") else None)

    page.on("websocket", on_socket)
    return frames


def test_inline_edit_of_a_leaf(page, console_url, canopy, ns, snap):
    raw_frames: list[str] = []
    page.on("websocket", lambda socket: socket.on("framesent", lambda payload: raw_frames.append(payload)))
    canopy.put(ns, "people", {"ada": {"name": "Ada", "born": 1815}})
    open_console(page, console_url, ns, "people")
    page.get_by_role("button", name="/people/ada", exact=True).click()

    value = page.get_by_role("button", name="Edit /people/ada/name")
    expect(value).to_have_text('"Ada"')
    value.click()
    editor = page.get_by_role("textbox", name="New value for /people/ada/name")
    expect(editor).to_be_focused()
    expect(editor).to_have_value('"Ada"')
    editor.fill('"Ada Lovelace"')
    snap("editing")
    editor.press("Enter")
    eventually(page, lambda: canopy.get(ns, "people/ada/name"), "Ada Lovelace")
    expect(value).to_have_text('"Ada Lovelace"')
    expect(value).to_be_focused()

    # JSON is parsed; anything else is a string.
    born = page.get_by_role("button", name="Edit /people/ada/born")
    born.click()
    page.get_by_role("textbox", name="New value for /people/ada/born").fill("1816")
    page.keyboard.press("Enter")
    eventually(page, lambda: canopy.get(ns, "people/ada/born"), 1816)
    value.click()
    editor.fill("just some text")
    editor.press("Enter")
    eventually(page, lambda: canopy.get(ns, "people/ada/name"), "just some text")

    # A value longer than one WebSocket frame (16384 characters) goes out split, and its echo comes back whole.
    long_text = "0123456789" * 4000
    value.click()
    editor.fill(long_text)
    editor.press("Enter")
    eventually(page, lambda: canopy.get(ns, "people/ada/name"), long_text)
    assert "3" in raw_frames and max(len(frame) for frame in raw_frames) <= 16384
    expect(value).to_have_text(f'"{long_text}"')
    canopy.put(ns, "people/ada/name", long_text + "!")
    expect(value).to_have_text(f'"{long_text}!"')
    value.click()
    editor.fill('"just some text"')
    editor.press("Enter")
    expect(value).to_have_text('"just some text"')

    # Escape cancels without writing.
    value.click()
    editor.fill("999")
    editor.press("Escape")
    expect(editor).to_have_count(0)
    expect(value).to_be_focused()
    expect(value).to_have_text('"just some text"')
    page.wait_for_timeout(300)
    assert canopy.get(ns, "people/ada/name") == "just some text"


def test_add_child_with_a_push_id_or_a_key(page, console_url, canopy, ns, snap):
    canopy.put(ns, "list", {"first": 1})
    open_console(page, console_url, ns, "list")

    before = int(time.time() * 1000)
    page.get_by_role("button", name="Add child to /list", exact=True).click()
    dialog = page.get_by_role("dialog", name="Add child")
    expect(dialog).to_be_visible()
    key = dialog.get_by_label("Key")
    generated = key.input_value()
    assert re.fullmatch(r"[-0-9A-Za-z_]{20}", generated), generated
    stamp = 0
    for char in generated[:8]:
        stamp = stamp * 64 + PUSH_ID_ALPHABET.index(char)
    assert abs(stamp - before) < 60_000, (stamp, before)
    dialog.get_by_label("Value (JSON, or text for a string)").fill('{"text": "hi", "n": 2}')
    snap("dialog")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog).to_be_hidden()
    eventually(page, lambda: canopy.get(ns, f"list/{generated}"), {"text": "hi", "n": 2})
    expect(row(page, f"/list/{generated}")).to_contain_text("{2 children}")

    # An invalid key is refused inside the dialog; a plain-text value is a string.
    page.get_by_role("button", name="Add child to /list", exact=True).click()
    key.fill("bad.key")
    dialog.get_by_label("Value (JSON, or text for a string)").fill("plain text")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog.get_by_role("alert")).to_contain_text("key")
    expect(dialog).to_be_visible()
    key.fill("custom")
    key.press("Enter")
    expect(dialog).to_be_hidden()
    eventually(page, lambda: canopy.get(ns, "list/custom"), "plain text")

    # Escape closes the dialog without writing.
    page.get_by_role("button", name="Add child to /list", exact=True).click()
    key.fill("never")
    dialog.get_by_label("Value (JSON, or text for a string)").fill("1")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.wait_for_timeout(300)
    assert canopy.get(ns, "list/never") is None


def test_delete_asks_for_confirmation(page, console_url, canopy, ns, snap):
    canopy.put(ns, "things", {"keep": 1, "drop": {"x": 1}})
    open_console(page, console_url, ns, "things")
    delete = page.get_by_role("button", name="Delete /things/drop", exact=True)

    delete.click()
    dialog = page.get_by_role("dialog", name="Delete data?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("/things/drop")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()  # the safe choice has the focus
    snap("confirm")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()

    delete.click()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.wait_for_timeout(300)
    assert canopy.get(ns, "things/drop") == {"x": 1}

    delete.click()
    dialog.get_by_role("button", name="Delete", exact=True).click()
    eventually(page, lambda: canopy.get(ns, "things"), {"keep": 1})
    expect(row(page, "/things/drop")).to_have_count(0, timeout=3000)
    expect(row(page, "/things/keep")).to_be_visible()


def test_move_and_rename_are_one_multi_path_update(page, console_url, canopy, ns, snap):
    frames = sent_frames(page)
    canopy.put(ns, "m", {"a": {"v": 1, ".priority": 3}, "other": True})
    open_console(page, console_url, ns, "m")

    # Rename: a new key under the same parent.
    page.get_by_role("button", name="Move or rename /m/a", exact=True).click()
    dialog = page.get_by_role("dialog", name="Move or rename")
    target = dialog.get_by_label("New key, or new path starting with /")
    expect(target).to_have_value("a")
    target.fill("b")
    snap("dialog")
    target.press("Enter")
    eventually(page, lambda: canopy.get(ns, "m"), {"b": {"v": 1}, "other": True})
    assert canopy.get(ns, "m/b", format="export") == {"v": 1, ".priority": 3}
    merges = [frame["d"]["b"] for frame in frames if frame.get("d", {}).get("a") == "m"]
    assert merges == [{"p": "/m", "d": {"a": None, "b": {"v": 1, ".priority": 3}}}]
    expect(row(page, "/m/b")).to_be_visible()
    expect(row(page, "/m/a")).to_have_count(0, timeout=3000)

    # Move: an absolute path elsewhere; the update is at the common parent (here the root).
    page.get_by_role("button", name="Move or rename /m/b", exact=True).click()
    target.fill("/elsewhere/moved")
    dialog.get_by_role("button", name="Move", exact=True).click()
    eventually(page, lambda: canopy.get(ns, "elsewhere/moved"), {"v": 1})
    assert canopy.get(ns, "m") == {"other": True}
    merges = [frame["d"]["b"] for frame in frames if frame.get("d", {}).get("a") == "m"]
    assert merges[1] == {"p": "/", "d": {"m/b": None, "elsewhere/moved": {"v": 1, ".priority": 3}}}

    # A move into the node itself is refused in the dialog.
    page.get_by_role("button", name="Move or rename /m/other", exact=True).click()
    target.fill("other/inside")
    target.press("Enter")
    expect(dialog.get_by_role("alert")).to_contain_text("inside")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
