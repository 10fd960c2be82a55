"""Keyboard use and accessible names: Tab reaches every control, each has a name and a visible focus ring;
Enter/Space activate, Escape cancels edits and dialogs."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from console_support import open_console, row

# Marks every control in `within` that a Tab press should reach (visible, enabled, not in a closed dialog), counts them.
MARK_CONTROLS = """(within) => {
  document.querySelectorAll('[data-tab-check]').forEach((e) => { delete e.dataset.tabCheck; });
  const controls = [...document.querySelector(within).querySelectorAll('a[href], button, input, select, textarea, [tabindex]')].filter(
    (e) => !e.disabled && e.tabIndex >= 0 && e.getClientRects().length > 0
      && getComputedStyle(e).visibility !== 'hidden' && !e.closest('[inert], dialog:not([open])'));
  controls.forEach((e, i) => { e.dataset.tabCheck = String(i); });
  return controls.length;
}"""

FOCUSED = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  return { index: e.dataset.tabCheck ?? null, outline: getComputedStyle(e).outlineStyle, html: e.outerHTML.slice(0, 120) };
}"""

# An aria snapshot line of a named control looks like: - button "Delete /kb/leaf" (YAML-quoted when the name has quotes)
NAMED = re.compile(r"^- '?[a-z]+ \"(\\.|[^\"\\])+\"")


def tab_through(page, count: int) -> set[int]:
    """Presses Tab from the top of the page; returns the marked controls reached (each with a visible focus ring)."""
    page.evaluate("document.activeElement?.blur()")
    reached: set[int] = set()
    for _ in range(count + 5):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused is None:
            continue
        assert focused["index"] is not None, f"focus went to an unexpected element: {focused['html']}"
        assert focused["outline"] != "none", f"no visible focus on {focused['html']}"
        reached.add(int(focused["index"]))
    return reached


def assert_named(page, count: int) -> None:
    for index in range(count):
        control = page.locator(f'[data-tab-check="{index}"]')
        snapshot = control.aria_snapshot().splitlines()[0]
        assert NAMED.match(snapshot), f"no accessible name: {control.evaluate('e => e.outerHTML.slice(0, 160)')}"


def test_every_control_is_reachable_with_tab_and_named(page, console_url, canopy, ns, snap):
    canopy.put(ns, "kb", {"leaf": "x", "obj": {"inner": 1}})

    page.goto(console_url + f"#/data/{ns}/kb")  # signed out: the sign-in form
    count = page.evaluate(MARK_CONTROLS, "body")
    assert count == 2
    assert tab_through(page, count) == set(range(count))
    assert_named(page, count)

    open_console(page, console_url, ns, "kb")
    page.get_by_role("button", name="/kb/obj", exact=True).click()
    expect(row(page, "/kb/obj/inner")).to_be_visible()
    count = page.evaluate(MARK_CONTROLS, "body")
    assert count > 25
    assert tab_through(page, count) == set(range(count))
    assert_named(page, count)
    snap("console")

    # The dialogs' controls too.
    page.get_by_role("button", name="Add child to /kb", exact=True).click()
    count = page.evaluate(MARK_CONTROLS, "dialog[open]")
    assert count == 4  # key, value, Cancel, Add
    assert tab_through(page, count) == set(range(count))  # the modal dialog keeps the focus
    assert_named(page, count)
    page.keyboard.press("Escape")


def test_keyboard_edit_expand_and_cancel(page, console_url, canopy, ns):
    canopy.put(ns, "kb", {"leaf": "x", "obj": {"inner": 1}})
    open_console(page, console_url, ns, "kb")

    # Enter and Space on the disclosure button expand and collapse.
    toggle = page.get_by_role("button", name="/kb/obj", exact=True)
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(row(page, "/kb/obj/inner")).to_be_visible()
    page.keyboard.press("Space")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(row(page, "/kb/obj/inner")).to_have_count(0)

    # Inline edit: Enter opens, Escape cancels (focus back on the value), Space opens, Enter saves.
    value = page.get_by_role("button", name="Edit /kb/leaf")
    value.focus()
    page.keyboard.press("Enter")
    editor = page.get_by_role("textbox", name="New value for /kb/leaf")
    expect(editor).to_be_focused()
    page.keyboard.type("ignored")
    page.keyboard.press("Escape")
    expect(editor).to_have_count(0)
    expect(value).to_be_focused()
    assert canopy.get(ns, "kb/leaf") == "x"
    page.keyboard.press("Space")
    expect(editor).to_be_focused()
    page.keyboard.press("Control+A")
    page.keyboard.type("true")
    page.keyboard.press("Enter")
    expect(value).to_have_text("true")
    assert canopy.get(ns, "kb/leaf") is True

    # A confirmation dialog opened from the keyboard takes the focus; Escape closes it and gives the focus back.
    delete = page.get_by_role("button", name="Delete /kb/leaf", exact=True)
    delete.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Delete data?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(delete).to_be_focused()
    assert canopy.get(ns, "kb/leaf") is True

    # Escape in the location bar puts back the current place.
    path_bar = page.get_by_label("Path", exact=True)
    path_bar.fill("/somewhere/else")
    path_bar.press("Escape")
    expect(path_bar).to_have_value("/kb")
