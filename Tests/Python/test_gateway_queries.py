"""Query listens for every index and range/limit form the JS, Android and iOS SDKs send, checked against an
independent Python evaluation (firebase_model.evaluate_query, data-model.md §7–§8) while another client writes.

For every listen the view fed by the server's tagged pushes must equal the expected window after each write, and
the child events an SDK would raise (wire-protocol.md §12) must equal those between consecutive expected windows.
"""

import random

import pytest

import firebase_model as model
from conftest import Clients
from firebase_wire import View, WireClient

MAX_KEY_LEN = 786

DATA = {
    "a": {"score": 10, "nested": {"v": "m"}, ".priority": 5},
    "b": {"score": 20, "nested": {"v": 3}},
    "c": {"score": 20, "nested": {"v": True}, ".priority": "pa"},
    "10": {"score": "text", ".priority": 1},
    "2": {"score": 5.5, "nested": {"v": 3}, ".priority": 1},
    "-1": {"score": False},
    "007": {"score": True, ".priority": 5},
    "x y": {"other": 1},
    "Z": {"score": {"deep": 1}},
    "\u00e9": {"score": 20, ".priority": 0.5},
    "\U0001F600": {"score": -3, ".priority": "pb"},
    "lz": {"score": 10, ".priority": "pb"},
    "leaf": {".value": 7, ".priority": 2},
    "s": "x",
    "t": True,
    "f": 2.5,
}

INDEXES = {
    "child": ("score", [None, False, 10, 20, "text"]),
    "deep-child": ("nested/v", [None, True, 3, "m"]),
    "value": (".value", [None, False, 7, "x"]),
    "priority": (None, [None, 1, 5, "pa"]),
    "key": (".key", ["-1", "10", "a", "lz", "x y"]),
}
NAMES = ["b", "10", "lz", "zz"]


def successor(key: str, pad: str) -> str:
    number = model.int_key(key)
    if number is not None and number < 2**31 - 1:
        return str(number + 1)
    return key + pad


def predecessor(key: str) -> str:
    """Android's predecessor shape: previous character in the push alphabet, padded with 'z' to 786 characters."""
    number = model.int_key(key)
    if number is not None and number > -(2**31):
        return str(number - 1)
    last = key[-1]
    position = model.PUSH_CHARS.find(last)
    if position <= 0:
        return key[:-1]
    return (key[:-1] + model.PUSH_CHARS[position - 1]).ljust(MAX_KEY_LEN, "z")


def with_index(query: dict, index: str | None) -> dict:
    return dict(query, i=index) if index is not None else query


def query_forms(index: str | None, values: list) -> list[tuple[str, dict]]:
    """Every range form (JS with sin/ein, iOS and Android with sentinels or successor/predecessor keys)."""
    forms: list[tuple[str, dict]] = []
    if index == ".key":
        for key in values:
            forms += [
                (f"startAt({key})", {"sp": key, "sin": True}),
                (f"endAt({key})", {"ep": key, "ein": True}),
                (f"equalTo({key})", {"sp": key, "sin": True, "ep": key, "ein": True}),
                (f"js startAfter({key})", {"sp": key, "sin": False}),
                (f"android startAfter({key})", {"sp": successor(key, "-")}),
                (f"ios startAfter({key})", {"sp": successor(key, " ")}),
                (f"js endBefore({key})", {"ep": key, "ein": False}),
                (f"android endBefore({key})", {"ep": predecessor(key)}),
            ]
        forms.append(("range(10..lz)", {"sp": "10", "ep": "lz"}))
    else:
        for value in values:
            forms += [
                (f"startAt({value!r})", {"sp": value, "sin": True}),
                (f"endAt({value!r})", {"ep": value, "ein": True}),
                (f"equalTo({value!r})", {"sp": value, "sin": True, "ep": value, "ein": True}),
                (f"js startAfter({value!r})", {"sp": value, "sn": model.MAX_NAME, "sin": False}),
                (f"ios startAfter({value!r})", {"sp": value, "sn": model.MAX_NAME}),
                (f"android startAfter({value!r})", {"sp": value, "sn": model.MAX_KEY}),
                (f"js endBefore({value!r})", {"ep": value, "en": model.MIN_NAME, "ein": False}),
                (f"mobile endBefore({value!r})", {"ep": value, "en": model.MIN_NAME}),
            ]
            for name in NAMES[:2]:
                forms += [
                    (f"startAt({value!r},{name})", {"sp": value, "sn": name, "sin": True}),
                    (f"endAt({value!r},{name})", {"ep": value, "en": name, "ein": True}),
                    (f"equalTo({value!r},{name})", {"sp": value, "sn": name, "ep": value, "en": name}),
                    (f"js startAfter({value!r},{name})", {"sp": value, "sn": name, "sin": False}),
                    (f"android startAfter({value!r},{name})", {"sp": value, "sn": successor(name, "-")}),
                    (f"ios startAfter({value!r},{name})", {"sp": value, "sn": successor(name, " ")}),
                    (f"js endBefore({value!r},{name})", {"ep": value, "en": name, "ein": False}),
                    (f"android endBefore({value!r},{name})", {"ep": value, "en": predecessor(name)}),
                ]
        forms.append((f"range({values[1]!r}..{values[-1]!r})", {"sp": values[1], "ep": values[-1]}))
    with_limits: list[tuple[str, dict]] = [("limitToFirst(3)", {"l": 3, "vf": "l"}),
                                           ("limitToLast(3)", {"l": 3, "vf": "r"}),
                                           ("limitToFirst(1)", {"l": 1, "vf": "l"}),
                                           ("limitToLast(1)", {"l": 1, "vf": "r"})]
    for name, query in forms:
        with_limits.append((name, query))
        with_limits.append((name + ".limitToFirst(2)", dict(query, l=2, vf="l")))
        with_limits.append((name + ".limitToLast(2)", dict(query, l=2, vf="r")))
    return [(name, with_index(query, index)) for name, query in with_limits]


def random_writes(rng: random.Random, base: str, count: int) -> list[tuple[str, str, object]]:
    """A deterministic mix of sets, removals, priority changes and merges under ``base``."""
    keys = list(DATA) + ["new1", "new2", "5", "-7", "zz"]
    values = [None, False, True, -3, 0, 5.5, 10, 20, 21, "a", "text", "zzz", {"deep": 2}]
    priorities = [None, 0.5, 1, 5, 9, "pa", "pz"]
    writes = []
    for _ in range(count):
        key = rng.choice(keys)
        kind = rng.random()
        if kind < 0.25:
            writes.append(("p", f"{base}/{key}/score", rng.choice(values)))
        elif kind < 0.4:
            writes.append(("p", f"{base}/{key}", None))
        elif kind < 0.5:
            writes.append(("p", f"{base}/{key}/.priority", rng.choice(priorities)))
        elif kind < 0.6:
            writes.append(("p", f"{base}/{key}", rng.choice(values[1:])))
        elif kind < 0.7:
            writes.append(("p", f"{base}/{key}/nested/v", rng.choice(values)))
        elif kind < 0.75:
            other = rng.choice(keys)
            change = {f"{key}/.priority": rng.choice(priorities)}
            if other != key:
                change[f"{other}/nested/v"] = rng.choice(values)
            writes.append(("m", base, change))
        elif kind < 0.85:
            other = rng.choice(keys)
            change = {f"{key}/score": rng.choice(values)}
            if other != key:
                change[f"{other}"] = {"score": rng.choice(values[1:]), ".priority": rng.choice(priorities)}
            writes.append(("m", base, change))
        else:
            writes.append(("p", f"{base}/{key}", {"score": rng.choice(values[1:]), ".priority": rng.choice(priorities)}))
    return writes


def check_view(view: View, name: str, expected_window, expected_events, step: str):
    assert not view.errors, (name, view.errors)
    assert model.nodes_equal(view.visible, expected_window), \
        f"{step}: {name} q={model.dumps(view.query)[:200]}\n got      {view.visible}\n expected {expected_window}"
    if "no_index" not in view.warnings:
        got_events = view.all_events()
        assert got_events == expected_events, \
            f"{step}: {name} q={model.dumps(view.query)[:200]} events\n got      {got_events}\n expected {expected_events}"


async def run_query_suite(port: int, ns: str, index_name: str, writes_count: int = 30):
    index, values = INDEXES[index_name]
    base = f"/q/{index_name}"
    async with Clients(port) as clients:
        writer = await clients.connect(ns)
        listener = await clients.connect(ns)
        assert (await writer.put(base, DATA)).ok
        data = model.set_at(None, base, DATA)

        forms = query_forms(index, values)
        pending = []
        for tag, (name, query) in enumerate(forms, start=1):
            view, future = await listener.listen_nowait(base, query, tag)
            pending.append((name, view, future))
        # The orderBy without range/limit: an untagged listen ordered on the client.
        default_view, default_future = await listener.listen_nowait(base)
        default_view.query = with_index({}, index)
        for name, view, future in pending:
            response = await listener.wait_response(future)
            assert response.ok, (name, response.inbound.text)
            assert isinstance(response.data, dict), (name, response.inbound.text)
            view.warnings = list(response.data.get("w") or [])
            assert set(view.warnings) <= {"no_index"}, response.inbound.text
        assert (await listener.wait_response(default_future)).ok

        windows = {view.tag: model.evaluate_query(model.get(data, base), view.query) for _, view, _ in pending}
        events = {view.tag: model.child_events(None, windows[view.tag], view.query) for _, view, _ in pending}
        for name, view, _ in pending:
            check_view(view, name, windows[view.tag], events[view.tag], "initial")

        rng = random.Random(f"{index_name}-writes")
        for step, (action, path, value) in enumerate(random_writes(rng, base, writes_count)):
            response = await writer.request(action, {"p": path, "d": value})
            assert response.ok, (action, path, value, response.inbound.text)
            data = model.set_at(data, path, value) if action == "p" else model.update_at(data, path, value)
            await listener.sync()
            node = model.get(data, base)
            for name, view, _ in pending:
                window = model.evaluate_query(node, view.query)
                events[view.tag] += model.child_events(windows[view.tag], window, view.query)
                windows[view.tag] = window
                check_view(view, name, window, events[view.tag], f"after write {step} {action} {path}={value!r}")
            assert model.nodes_equal(default_view.cache, node), (default_view.cache, node)
            assert default_view.keys == model.ordered_keys(node, default_view.query)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("index_name", list(INDEXES))
async def test_every_range_and_limit_form_tracks_the_expected_window(server, index_name):
    await run_query_suite(server.port, "queries", index_name, writes_count=40)


async def test_limit_to_last_window_moves_when_an_item_is_pushed_out_and_back(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        reader = await clients.connect(ns)
        assert (await writer.put("/messages", {"m1": {"text": "a"}, "m2": {"text": "b"}, "m3": {"text": "c"}})).ok
        view, response = await reader.listen("/messages", {"l": 2, "vf": "r"}, tag=1)
        assert response.ok
        assert view.keys == ["m2", "m3"]
        assert view.all_events() == [("child_added", "m2"), ("child_added", "m3"), ("value", "")]

        mark = len(view.events)
        assert (await writer.put("/messages/m4", {"text": "d"})).ok
        await reader.sync()
        assert view.keys == ["m3", "m4"]
        assert [e for batch in view.events[mark:] for e in batch] == [
            ("child_removed", "m2"), ("child_added", "m4"), ("value", "")]

        mark = len(view.events)
        assert (await writer.put("/messages/m4", None)).ok
        await reader.sync()
        assert view.keys == ["m2", "m3"]
        assert [e for batch in view.events[mark:] for e in batch] == [
            ("child_removed", "m4"), ("child_added", "m2"), ("value", "")]

        mark = len(view.events)
        assert (await writer.put("/messages/m1/text", "changed outside the window")).ok
        await reader.sync()
        assert view.events[mark:] == [], "a change outside the window must not be pushed"

        mark = len(view.events)
        assert (await writer.put("/messages/m3/text", "C")).ok
        await reader.sync()
        assert [e for batch in view.events[mark:] for e in batch] == [("child_changed", "m3"), ("value", "")]


async def test_limit_window_on_a_child_index_moves_and_raises_child_moved(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        reader = await clients.connect(ns)
        board = {"ann": {"s": 5}, "ben": {"s": 9}, "cat": {"s": 7}, "dan": {"s": 1}}
        assert (await writer.put("/board", board)).ok
        query = {"l": 3, "vf": "r", "i": "s"}
        view, _ = await reader.listen("/board", query, tag=4)
        assert view.keys == ["ann", "cat", "ben"]

        mark = len(view.events)
        assert (await writer.put("/board/dan/s", 8)).ok  # dan enters, ann leaves
        await reader.sync()
        assert view.keys == ["cat", "dan", "ben"]
        assert [e for batch in view.events[mark:] for e in batch] == [
            ("child_removed", "ann"), ("child_added", "dan"), ("value", "")]

        mark = len(view.events)
        assert (await writer.put("/board/cat/s", 10)).ok  # cat moves to the top inside the window
        await reader.sync()
        assert view.keys == ["dan", "ben", "cat"]
        assert [e for batch in view.events[mark:] for e in batch] == [
            ("child_moved", "cat"), ("child_changed", "cat"), ("value", "")]

        mark = len(view.events)
        assert (await writer.put("/board/ben", None)).ok  # ben leaves, ann refills from below
        await reader.sync()
        assert view.keys == ["ann", "dan", "cat"]
        assert [e for batch in view.events[mark:] for e in batch] == [
            ("child_removed", "ben"), ("child_added", "ann"), ("value", "")]


async def test_two_listens_with_one_query_and_different_tags_both_get_their_own_pushes(server, ns):
    async with Clients(server.port) as clients:
        writer = await clients.connect(ns)
        a = await clients.connect(ns)
        b = await clients.connect(ns)
        query = {"sp": 2, "i": "n"}
        view_a1, _ = await a.listen("/shared", query, tag=1)
        view_a2, _ = await a.listen("/shared", dict(query, l=1, vf="l"), tag=2)
        view_b, _ = await b.listen("/shared", query, tag=9)
        for key, n in [("x", 1), ("y", 2), ("z", 3), ("x", 5)]:
            assert (await writer.put(f"/shared/{key}", {"n": n})).ok
        await a.sync()
        await b.sync()
        assert view_a1.cache == view_b.cache == {"y": {"n": 2}, "z": {"n": 3}, "x": {"n": 5}}
        assert view_a2.cache == {"y": {"n": 2}}
        assert all(p.tag in (1, 2) for p in a.pushes()) and all(p.tag == 9 for p in b.pushes())
