"""The child filter (a tagged wire query on the root listen) and import/export of the current node over REST."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import expect

from console_support import open_console, row, wait_loaded

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "import.json"


def root_paths(page) -> list[str]:
    return page.locator("#tree .row.root > ul.children > li.row:not(.removed)").evaluate_all(
        "rows => rows.map(row => row.dataset.path)")


def apply_filter(page, **fields: str) -> None:
    form = page.get_by_role("form", name="Filter children")
    form.get_by_role("button", name="Clear filter").click()
    wait_loaded(page)
    for label, value in fields.items():
        if label == "Order by":
            form.get_by_label(label).select_option(value)
        else:
            form.get_by_label(label, exact=True).fill(value)
    form.get_by_role("button", name="Apply filter").click()
    wait_loaded(page)


def test_filter_limits_and_orders_the_children(page, console_url, canopy, ns, snap):
    queries: list[dict] = []
    page.on("websocket", lambda socket: socket.on("framesent", lambda payload: queries.append(json.loads(payload)["d"]["b"])
                                                  if '"a":"q"' in payload else None))
    canopy.put(ns, "f", {key: {"score": score} for key, score in zip("edcba", (1, 5, 3, 4, 2))})
    open_console(page, console_url, ns, "f")
    assert root_paths(page) == ["/f/a", "/f/b", "/f/c", "/f/d", "/f/e"]

    apply_filter(page, limitToFirst="2")
    expect(page.locator("#tree .row.root > ul.children > li.row")).to_have_count(2)
    assert root_paths(page) == ["/f/a", "/f/b"]
    snap("limit-to-first")
    assert queries[-1]["q"] == {"l": 2, "vf": "l"} and isinstance(queries[-1]["t"], int)

    # Ordered by a child, the last two by score, listed in score order; the window stays live.
    apply_filter(page, **{"Order by": "child", "Child name": "score", "limitToLast": "2"})
    assert root_paths(page) == ["/f/b", "/f/d"]  # scores 4, 5
    assert queries[-1]["q"] == {"l": 2, "vf": "r", "i": "score"}
    canopy.put(ns, "f/z", {"score": 10})
    expect(row(page, "/f/z")).to_be_visible(timeout=1000)
    expect(row(page, "/f/b")).to_have_count(0, timeout=3000)
    assert root_paths(page) == ["/f/d", "/f/z"]

    # Ranges: equalTo, startAt/endAt on values and keys.
    apply_filter(page, **{"Order by": "child", "Child name": "score", "equalTo": "3"})
    assert root_paths(page) == ["/f/c"]
    apply_filter(page, **{"Order by": "key", "startAt": "b", "endAt": "d"})
    assert root_paths(page) == ["/f/b", "/f/c", "/f/d"]
    assert queries[-1]["q"] == {"sp": "b", "ep": "d", "i": ".key"}

    # Inconsistent input is refused with a message; clearing shows everything.
    apply_filter(page, limitToFirst="1", limitToLast="1")
    expect(page.locator("#notice")).to_contain_text("either limitToFirst or limitToLast")
    page.get_by_role("button", name="Clear filter").click()
    wait_loaded(page)
    assert root_paths(page) == ["/f/a", "/f/b", "/f/c", "/f/d", "/f/e", "/f/z"]


def test_import_then_export_round_trips(page, console_url, canopy, ns, snap):
    fixture = json.loads(FIXTURE.read_text())
    canopy.put(ns, "imp", {"old": "data"})
    open_console(page, console_url, ns, "imp")

    page.get_by_label("Import JSON", exact=True).set_input_files(str(FIXTURE))
    dialog = page.get_by_role("dialog", name="Import JSON?")
    expect(dialog).to_contain_text("import.json")
    expect(dialog).to_contain_text("/imp")
    snap("confirm")
    dialog.get_by_role("button", name="Import").click()
    expect(page.locator("#notice")).to_contain_text("Imported import.json")
    assert canopy.get(ns, "imp", format="export") == fixture
    expect(row(page, "/imp/title")).to_contain_text("Canopy console import fixture")
    expect(row(page, "/imp/old")).to_have_count(0, timeout=3000)

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export JSON").click()
    download = download_info.value
    assert download.suggested_filename == f"{ns}-imp.json"
    assert json.loads(Path(download.path()).read_text()) == fixture

    # Cancelling the confirmation imports nothing; a file that is not JSON is refused.
    page.get_by_label("Import JSON", exact=True).set_input_files(files=[{"name": "other.json", "mimeType": "application/json",
                                                              "buffer": b'{"x": 1}'}])
    dialog.get_by_role("button", name="Cancel").click()
    page.get_by_label("Import JSON", exact=True).set_input_files(files=[{"name": "broken.json", "mimeType": "application/json",
                                                              "buffer": b"{nope"}])
    expect(page.locator("#notice")).to_contain_text("broken.json is not valid JSON")
    assert canopy.get(ns, "imp", format="export") == fixture
