"""Signing in: the form shown without a credential, a credential passed in the URL fragment, a refused one."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from console_support import open_console, row


def stored_token(page) -> str | None:
    return page.evaluate("sessionStorage.getItem('canopy.token')")


def test_sign_in_form_is_shown_without_a_credential(page, console_url, canopy, ns, snap):
    canopy.put(ns, "greeting", "hello")
    page.goto(console_url + f"#/data/{ns}/")
    expect(page.locator("#sign-in")).to_be_visible()
    expect(page.locator("#console")).to_be_hidden()
    credential = page.get_by_label("Admin credential")
    expect(credential).to_have_attribute("type", "password")
    expect(credential).to_be_focused()
    snap("form")

    credential.fill("owner")
    credential.press("Enter")
    expect(page.locator("#sign-in")).to_be_hidden()
    expect(page.locator("#connection")).to_have_text(re.compile("^Connected"))
    expect(row(page, "/greeting")).to_contain_text('"hello"')
    assert stored_token(page) == "owner"

    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("#sign-in")).to_be_visible()
    assert stored_token(page) is None


def test_credential_in_the_fragment_is_stored_and_removed_from_the_url(page, console_url, canopy, ns):
    canopy.put(ns, "a/b", 1)
    open_console(page, console_url, ns, "a")  # the fragment carries ?token=owner
    assert page.url.endswith(f"#/data/{ns}/a"), page.url
    assert stored_token(page) == "owner"
    expect(row(page, "/a/b")).to_contain_text("1")

    # A bare #token=… leads to the default namespace's root.
    page.goto(console_url + "#token=owner")
    expect(page.locator("#connection")).to_have_text(re.compile("^Connected to default"))
    assert page.url.endswith("#/data/default/"), page.url
    assert "token" not in page.url


def test_the_sign_in_link_printed_by_the_server_works(page, canopy, ns):
    """``canopy serve`` logs ``console: http://HOST:PORT/.console/#token=…`` with a credential made at start."""
    link = re.search(r"console: (http://\S+/\.console/#token=\S+)", canopy.log_text())
    assert link, canopy.log_tail()
    canopy.put("default", f"console-link-{ns}", True)
    page.goto(link.group(1))
    expect(page.locator("#connection")).to_have_text("Connected to default")
    assert "token" not in page.url
    expect(row(page, f"/console-link-{ns}")).to_contain_text("true")


def test_a_refused_credential_returns_to_the_sign_in_form(page, console_url, ns, snap):
    page.goto(console_url + f"#/data/{ns}/?token=not-a-credential")
    expect(page.locator("#sign-in")).to_be_visible()
    expect(page.locator("#sign-in-error")).to_contain_text("refused")
    assert stored_token(page) is None
    snap("refused")
