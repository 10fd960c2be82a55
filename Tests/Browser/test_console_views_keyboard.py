"""Keyboard use of the rules, requests and server views: Tab reaches every control, each has an accessible name and
a visible focus ring."""

from __future__ import annotations

from playwright.sync_api import expect

from conftest import RULES
from test_console_keyboard import MARK_CONTROLS, assert_named, tab_through


def check_tab_order(page) -> int:
    count = page.evaluate(MARK_CONTROLS, "body")
    assert tab_through(page, count) == set(range(count))
    assert_named(page, count)
    return count


def test_the_new_views_are_keyboard_reachable_and_named(page, ruled, ruled_url, ns, snap):
    ruled.put(ns, "locked", {"a": 1})
    page.goto(ruled_url + "#/rules?token=owner")
    expect(page.get_by_role("textbox", name="Rules")).not_to_have_value("")

    # Rules: after a simulation (its trace links) and a failed publish (its error buttons).
    form = page.get_by_role("form", name="Simulator")
    form.get_by_label("Namespace of the data").fill(ns)
    form.get_by_label("Location").fill("/locked/b")
    form.get_by_role("button", name="Simulate").click()
    expect(page.locator("#sim-result .decision")).to_have_text("DENIED")
    page.get_by_role("textbox", name="Rules").fill(RULES.replace('"auth != null"', '"auth != "'))
    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.locator("#rules-errors li")).to_have_count(1)
    page.get_by_role("button", name="Coverage of each rule").press("Enter")
    expect(page.locator("#coverage-table tbody button").first).to_be_visible()
    count = check_tab_order(page)
    assert count >= 20
    snap("rules")

    # Activating a trace link from the keyboard moves the caret to the rule.
    page.locator("#sim-result a.rule-link").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("textbox", name="Rules")).to_be_focused()

    # Requests: with a row, expanded with Enter.
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Requests").click()
    expect(page.locator("#requests-status")).to_contain_text("Live")
    assert ruled.unauthenticated("PUT", ns, "locked/c", 1) == 401
    toggle = page.locator("#requests-table tbody.event").filter(has_text="/locked/c").get_by_role("button")
    expect(toggle).to_have_count(1)
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    page.get_by_role("button", name="Clear").press("Enter")
    expect(page.locator("#requests-table tbody")).to_have_count(0)
    assert ruled.unauthenticated("PUT", ns, "locked/d", 1) == 401
    expect(page.locator("#requests-table tbody.event")).to_have_count(1)
    page.locator("#requests-table tbody.event button").press("Space")
    check_tab_order(page)
    pause = page.get_by_role("button", name="Pause")
    pause.focus()
    page.keyboard.press("Space")
    expect(page.get_by_role("button", name="Resume")).to_be_focused()
    snap("requests")

    # Server: the navigation only (figures, charts and tables are not interactive).
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Server").press("Enter")
    expect(page.locator("#figure-connections")).not_to_have_text("–")
    assert check_tab_order(page) == 5  # four views and Sign out
    expect(page.locator('svg[data-chart="connections"]')).to_have_attribute("role", "img")
