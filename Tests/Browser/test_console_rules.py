"""The rules view: errors at their line and column, publishing, the coverage heat-map, and the simulator's decision
with the trace of the rules tried, each linked to its line in the editor."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from conftest import RULES

SYNTAX_ERROR = '{\n "rules": {\n  ".read": "auth != null &&"\n }\n}'


def open_rules(page, url: str) -> None:
    page.goto(url + "#/rules?token=owner")
    expect(page.get_by_role("textbox", name="Rules")).to_have_value(RULES)


def caret(page) -> dict:
    """The editor's caret as line and column (1-based)."""
    return page.get_by_role("textbox", name="Rules").evaluate("""(e) => {
      const before = e.value.slice(0, e.selectionStart).split('\\n');
      return { line: before.length, column: before.at(-1).length + 1 };
    }""")


def test_a_syntax_error_is_shown_at_its_line(page, ruled, ruled_url, snap):
    open_rules(page, ruled_url)
    editor = page.get_by_role("textbox", name="Rules")
    editor.fill(SYNTAX_ERROR)
    page.get_by_role("button", name="Publish", exact=True).click()

    expect(page.locator("#rules-status")).to_have_text("Not published: 1 error.")
    errors = page.locator("#rules-errors li")
    expect(errors).to_have_count(1)
    expect(errors).to_contain_text("Line 3, column 28")
    expect(errors).to_contain_text("/.read")
    expect(page.locator("#rules-gutter .ln.error")).to_have_count(1)
    expect(page.locator("#rules-gutter .ln.error")).to_have_attribute("data-line", "3")
    snap("error")

    # Clicking the error puts the caret there and highlights the line.
    errors.get_by_role("button").click()
    expect(editor).to_be_focused()
    assert caret(page) == {"line": 3, "column": 28}
    expect(page.locator("#rules-gutter .ln.target")).to_have_attribute("data-line", "3")

    assert ruled.rules_text() == RULES  # nothing published


def test_publishing_valid_rules(page, ruled, ruled_url, ns, snap):
    open_rules(page, ruled_url)
    text = RULES.replace('".write": "auth != null"', '".write": "auth != null && newData.isNumber()"')
    assert text != RULES
    page.get_by_role("textbox", name="Rules").fill(text)
    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.locator("#rules-status")).to_have_text("Published")
    expect(page.locator("#rules-errors-box")).to_be_hidden()
    snap("published")
    assert ruled.rules_text() == text

    # In force at once in the namespace the console views (the default one; rules are per namespace), and the
    # heat-map counts the evaluations of the new rules. Another namespace keeps the server's rules.
    assert ruled.unauthenticated("PUT", "default", "locked/a", 1) == 401
    assert ruled.admin("GET", f"/.settings/rules.json?ns={ns}")[1].decode() == RULES
    line = text.splitlines().index('      ".write": "auth != null && newData.isNumber()"') + 1
    gutter_line = page.locator(f'#rules-gutter .ln[data-line="{line}"]')
    expect(gutter_line).to_have_attribute("data-cov", "false", timeout=6000)
    expect(gutter_line).to_have_attribute("data-heat", "1")
    expect(gutter_line).to_have_attribute("title", re.compile(r"/locked/\.write: 0 true, 1 false"))
    untouched = text.splitlines().index('''      ".read": "auth.uid == 'alice'"''') + 1
    expect(page.locator(f'#rules-gutter .ln[data-line="{untouched}"]')).to_have_attribute("data-cov", "none")
    snap("coverage")


def test_the_simulator_shows_the_decision_and_the_rules_tried(page, ruled, ruled_url, ns, snap):
    ruled.put(ns, "locked", {"y": "before"})
    open_rules(page, ruled_url)
    form = page.get_by_role("form", name="Simulator")
    form.get_by_label("Namespace of the data").fill(ns)
    form.get_by_label("Operation").select_option("set")
    form.get_by_label("Location").fill("/locked/x")
    form.get_by_label("Auth (JSON, or unauthenticated)").fill("unauthenticated")
    form.get_by_label("Value (JSON)").fill('{"n": 1}')
    form.get_by_role("button", name="Simulate").click()

    result = page.locator("#sim-result")
    expect(result.locator(".decision")).to_have_text("DENIED")
    step = result.locator('tr[data-rule="/locked/.write"]')
    expect(step).to_have_count(1)
    expect(step.locator(".outcome")).to_have_text("false")
    expect(step).to_contain_text("auth != null")
    snap("denied")
    assert ruled.get(ns, "locked") == {"y": "before"}  # nothing written

    # The rule links to its line in the editor.
    line = RULES.splitlines().index('      ".write": "auth != null"') + 1
    link = step.get_by_role("link")
    expect(link).to_have_text(f"/locked/.write line {line}")
    link.click()
    expect(page.get_by_role("textbox", name="Rules")).to_be_focused()
    assert caret(page)["line"] == line
    expect(page.locator("#rules-gutter .ln.target")).to_have_attribute("data-line", str(line))

    # As a signed-in user it is allowed.
    form.get_by_label("Auth (JSON, or unauthenticated)").fill('{"uid": "carol"}')
    form.get_by_role("button", name="Simulate").click()
    expect(result.locator(".decision")).to_have_text("ALLOWED")
    expect(result.locator('tr[data-rule="/locked/.write"] .outcome')).to_have_text("true")

    # The editor's rules, not yet published: lines are those of the editor (the server compiles its own copy).
    draft = RULES.replace('"locked": {', '"locked": {\n      // only the unauthenticated may write here\n').replace(
        '".write": "auth != null"', '".write": "auth == null"')
    page.get_by_role("textbox", name="Rules").fill(draft)
    form.get_by_label("Auth (JSON, or unauthenticated)").fill("unauthenticated")
    form.get_by_label("Use the editor's rules (not yet published)").check()
    form.get_by_role("button", name="Simulate").click()
    expect(result.locator(".decision")).to_have_text("ALLOWED")
    draft_line = draft.splitlines().index('      ".write": "auth == null"') + 1
    expect(result.locator('tr[data-rule="/locked/.write"]').get_by_role("link")).to_have_text(
        f"/locked/.write line {draft_line}")
    snap("draft")
    assert ruled.rules_text() == RULES
    assert ruled.get(ns, "locked") == {"y": "before"}

    # A draft that does not compile: the error is shown at its line in the editor.
    page.get_by_role("textbox", name="Rules").fill(SYNTAX_ERROR)
    form.get_by_role("button", name="Simulate").click()
    expect(result.get_by_role("alert")).to_contain_text("The rules do not load")
    expect(page.locator("#rules-gutter .ln.error")).to_have_attribute("data-line", "3")


def test_the_simulator_reads_updates_and_reports_bad_input(page, ruled, ruled_url, ns):
    ruled.put(ns, "private", {"secret": 1})
    open_rules(page, ruled_url)
    form = page.get_by_role("form", name="Simulator")
    form.get_by_label("Namespace of the data").fill(ns)
    form.get_by_label("Operation").select_option("read")
    expect(form.get_by_label("Value (JSON)")).to_be_hidden()
    form.get_by_label("Location").fill("/private")
    form.get_by_label("Auth (JSON, or unauthenticated)").fill('{"uid": "alice"}')
    form.get_by_role("button", name="Simulate").click()
    result = page.locator("#sim-result")
    expect(result.locator(".decision")).to_have_text("ALLOWED")
    expect(result.locator('tr[data-rule="/private/.read"] .outcome')).to_have_text("true")

    form.get_by_label("Operation").select_option("update")
    form.get_by_label("Location").fill("/open")
    form.get_by_label("Value (JSON)").fill(json.dumps({"a": 1, "b/c": 2}))
    form.get_by_role("button", name="Simulate").click()
    expect(result.locator(".decision")).to_have_text("ALLOWED")
    expect(result.locator('tr[data-rule="/open/.write"]')).to_have_count(1)
    assert ruled.get(ns, "open") is None

    form.get_by_label("Auth (JSON, or unauthenticated)").fill("{not json")
    form.get_by_role("button", name="Simulate").click()
    expect(result.get_by_role("alert")).to_contain_text("Auth is JSON")


def test_a_refused_credential_on_the_rules_view_returns_to_sign_in(page, ruled, ruled_url):
    page.goto(ruled_url + "#/rules?token=not-the-admin")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.locator("#sign-in-error")).to_contain_text("refused the credential")
    expect(page.get_by_role("navigation", name="Views")).to_be_hidden()
