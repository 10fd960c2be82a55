"""The real Python ``firebase-admin`` SDK (PyPI, pinned in requirements.txt) against Canopy's REST API (issue 6,
acceptance 1), pointed at the server the way users point it at the emulator: ``FIREBASE_DATABASE_EMULATOR_HOST``
plus a ``https://<ns>.firebaseio.com`` database URL (namespace = first label), or a ``http://host:port?ns=NAME``
URL. In emulator mode the SDK sends ``Authorization: Bearer owner`` and ``ns=<namespace>`` on every request.

Each test gets its own SDK app (deleted afterwards) and namespace. Query results are checked against the independent
model (firebase_model.evaluate_query); the SDK re-sorts results itself, so only their content is compared.
Run with ``-v`` to see one line per SDK feature.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from typing import Any, Callable

import firebase_admin
import pytest
from firebase_admin import db, exceptions
from google.auth.credentials import AnonymousCredentials

import firebase_model as model
from conftest import ServerFactory
from rest_client import LARGE_NAMESPACE_LIMIT, RULES, EnvironmentFor, Rest, bounded

EMULATOR_HOST = "FIREBASE_DATABASE_EMULATOR_HOST"
QUERY_NAMESPACE = "sdk-queries"
EVENT_TIMEOUT = 10.0



@pytest.fixture(scope="module")
def server():
    """This module's open server (no rules file), with room for one namespace per test."""
    factory = ServerFactory()
    with EnvironmentFor(**LARGE_NAMESPACE_LIMIT):
        started = factory()
    yield started
    factory.finish()


@pytest.fixture(scope="module")
def rules_server(tmp_path_factory):
    path = tmp_path_factory.mktemp("sdk-rules") / "database.rules.json"
    path.write_text(json.dumps(RULES))
    factory = ServerFactory()
    with EnvironmentFor(**LARGE_NAMESPACE_LIMIT):
        started = factory("--rules", str(path))
    yield started
    factory.finish()


@pytest.fixture(autouse=True)
def _rules_server_survives(request):
    yield
    if "rules_server" in request.fixturenames:
        shared = request.getfixturevalue("rules_server")
        if not shared.alive():
            pytest.fail(f"the rules server died during this test: {shared.log_tail()}")


def new_app(database_url: str, **options: Any) -> firebase_admin.App:
    """A separate SDK app; no service account is needed, emulator mode replaces the credential with ``owner``."""
    settings = {"databaseURL": database_url, "httpTimeout": 15}
    settings.update(options)
    return firebase_admin.initialize_app(AnonymousCredentials(), settings, name=f"canopy-{uuid.uuid4().hex}")


class Apps:
    """Creates SDK apps for one test against one server (via the emulator variable) and deletes them afterwards."""

    def __init__(self, port: int):
        self.port = port
        self.created: list[firebase_admin.App] = []

    def root(self, ns: str, **options: Any) -> db.Reference:
        """The root reference of ``ns`` through ``https://<ns>.firebaseio.com`` and the emulator variable."""
        with EnvironmentFor(**{EMULATOR_HOST: f"127.0.0.1:{self.port}"}):
            app = new_app(f"https://{ns}.firebaseio.com", **options)
            self.created.append(app)
            return db.reference("/", app=app)  # the database service reads the variable here

    def delete_all(self) -> None:
        for app in self.created:
            firebase_admin.delete_app(app)
        self.created.clear()


@pytest.fixture
def apps(server):
    created = Apps(server.port)
    yield created
    created.delete_all()


@pytest.fixture
def rules_apps(rules_server):
    created = Apps(rules_server.port)
    yield created
    created.delete_all()


@pytest.fixture
def root(apps, ns) -> db.Reference:
    return apps.root(ns)


def raw(server, ns: str) -> Rest:
    return Rest(server.port, ns, {"Authorization": "Bearer owner"})


# ---------------------------------------------------------------------------------------------------------------
# Reading and writing


@bounded(30)
def test_set_then_get_then_delete(root):
    ref = root.child("users/alice")
    ref.set({"name": "Alice", "age": 30, "admin": False, "score": 2.5, "tags": {"x": True}})
    assert ref.get() == {"name": "Alice", "age": 30, "admin": False, "score": 2.5, "tags": {"x": True}}
    assert ref.child("name").get() == "Alice"
    for value in ("text", 42, -7.25, True, {"nested": {"deep": "v"}}, "\u00e9\U0001F600"):
        ref.child("value").set(value)
        assert ref.child("value").get() == value
    ref.delete()
    assert ref.get() is None
    assert root.child("never/written").get() is None


@bounded(30)
def test_update_writes_several_paths_at_once_and_leaves_others(root):
    ref = root.child("m")
    ref.set({"a": {"x": 1, "y": 2}, "b": {"z": 3}, "keep": True})
    ref.update({"a/x": 10, "a/y": None, "b": {"w": 4}, "c": "new"})
    assert ref.get() == {"a": {"x": 10}, "b": {"w": 4}, "c": "new", "keep": True}
    root.update({"m/keep": False, "other/list/k": 1})
    assert root.get() == {"m": {"a": {"x": 10}, "b": {"w": 4}, "c": "new", "keep": False},
                          "other": {"list": {"k": 1}}}


@bounded(30)
def test_push_creates_children_with_increasing_20_character_ids(root):
    before = int(time.time() * 1000)
    refs = [root.child("log").push({"n": index}) for index in range(20)]
    keys = [ref.key for ref in refs]
    assert all(len(key) == 20 and all(char in model.PUSH_CHARS for char in key) for key in keys), keys
    assert keys == sorted(keys) and len(set(keys)) == 20, keys
    assert before - 1000 <= model.push_id_time(keys[0]) <= int(time.time() * 1000) + 1000
    assert root.child("log").get() == {key: {"n": index} for index, key in enumerate(keys)}
    empty = root.child("log").push()
    assert empty.get() == "", "push() without a value stores the SDK's default empty string"


@bounded(30)
def test_shallow_get_returns_true_for_each_child(root):
    root.child("sh").set({"a": {"deep": {"x": 1}}, "b": 2, "c": "s"})
    assert root.child("sh").get(shallow=True) == {"a": True, "b": True, "c": True}
    assert root.child("sh/b").get(shallow=True) == 2
    assert root.child("sh/none").get(shallow=True) is None


@bounded(30)
def test_server_timestamp_and_increment_through_set_and_update(root):
    before = int(time.time() * 1000)
    root.child("sv").set({"at": {".sv": "timestamp"}, "n": 5})
    after = int(time.time() * 1000)
    stored = root.child("sv").get()
    assert isinstance(stored["at"], int) and before <= stored["at"] <= after, stored
    root.child("sv").update({"n": {".sv": {"increment": 3}}, "fresh": {".sv": {"increment": 1.5}},
                             "touched": {".sv": "timestamp"}})
    stored = root.child("sv").get()
    assert stored["n"] == 8 and stored["fresh"] == 1.5 and stored["touched"] >= stored["at"], stored
    root.child("sv/n").set({".sv": {"increment": -10}})
    assert root.child("sv/n").get() == -2


@bounded(30)
def test_priorities_written_by_the_sdk_are_kept_but_not_returned_by_get(root, server, ns):
    root.child("pr").set({"a": {".value": 1, ".priority": 5}, "b": {"c": 2, ".priority": "x"}})
    assert root.child("pr").get() == {"a": 1, "b": {"c": 2}}
    exported = raw(server, ns).get("/pr", {"format": "export"})
    assert exported.json() == {"a": {".value": 1, ".priority": 5}, "b": {"c": 2, ".priority": "x"}}


@bounded(30)
def test_the_namespace_is_the_first_label_of_the_database_url(apps, server, ns):
    first, second = apps.root(ns), apps.root(ns[:40] + "-two")
    first.child("who").set("first")
    second.child("who").set("second")
    assert first.child("who").get() == "first" and second.child("who").get() == "second"
    assert raw(server, ns).value("/who") == "first"
    assert raw(server, ns[:40] + "-two").value("/who") == "second"


@bounded(30)
def test_the_ns_query_form_of_the_database_url(server, ns, monkeypatch):
    monkeypatch.delenv(EMULATOR_HOST, raising=False)
    app = new_app(f"http://127.0.0.1:{server.port}?ns={ns}")
    try:
        ref = db.reference("/form", app=app)
        ref.set({"via": "ns-param"})
        ref.update({"more": 1})
        assert ref.get() == {"via": "ns-param", "more": 1}
        assert raw(server, ns).value("/form") == {"via": "ns-param", "more": 1}
    finally:
        firebase_admin.delete_app(app)


# ---------------------------------------------------------------------------------------------------------------
# Queries: every order_by_* with start_at / end_at / equal_to / limit_to_first / limit_to_last

CHILDREN = {
    "a": {"score": 10, "name": "ann", "nested": {"v": 3}},
    "b": {"score": 20, "name": "bob", "nested": {"v": 1}},
    "c": {"score": 20, "name": "cid"},
    "d": {"score": 30.5, "name": "dan", "nested": {"v": "m"}},
    "e": {"score": "high", "name": "eve"},
    "f": {"name": "fay", "nested": {"v": 3}},
    "g": {"score": True},
    "h": {"score": False, "name": "hal"},
    "2": {"score": 5, "nested": {"v": True}},
    "10": {"score": -1},
    "z": {"score": {"deep": 1}},
    "leaf": 7,
}
VALUES = {"a": 3, "b": 1, "c": "x", "d": True, "e": 1, "f": 2.5, "g": False, "h": "abc", "i": {"nested": 1},
          "j": -4, "k": "x"}

ORDERS = {
    "child(score)": ("score", [False, True, 10, 20, "high"]),
    "child(nested/v)": ("nested/v", [True, 3, "m"]),
    "key": (".key", ["10", "2", "b", "e", "leaf"]),
    "value": (".value", [False, 1, 2.5, "abc", "x"]),
}
LIMITS = [("", {}), (".limit_to_first(2)", {"l": 2, "vf": "l"}), (".limit_to_last(2)", {"l": 2, "vf": "r"}),
          (".limit_to_first(1)", {"l": 1, "vf": "l"}), (".limit_to_last(1)", {"l": 1, "vf": "r"})]


def query_cases() -> list[tuple[str, str, list[tuple[str, Any]], dict]]:
    """(id, order, [(method, argument)], model query) for every order × bound form × limit."""
    cases = []
    for order_name, (index, values) in ORDERS.items():
        bounds: list[tuple[str, list[tuple[str, Any]], dict]] = [("", [], {})]
        for value in values:
            bounds += [
                (f".start_at({value!r})", [("start_at", value)], {"sp": value}),
                (f".end_at({value!r})", [("end_at", value)], {"ep": value}),
                (f".equal_to({value!r})", [("equal_to", value)], {"sp": value, "ep": value}),
            ]
        low, high = values[1], values[-1]
        bounds.append((f".start_at({low!r}).end_at({high!r})", [("start_at", low), ("end_at", high)],
                       {"sp": low, "ep": high}))
        for bound_name, calls, bound_query in bounds:
            for limit_name, limit_query in LIMITS:
                calls_with_limit = list(calls)
                if limit_query:
                    method = "limit_to_first" if limit_query["vf"] == "l" else "limit_to_last"
                    calls_with_limit.append((method, limit_query["l"]))
                query = {"i": index, **bound_query, **limit_query}
                cases.append((f"order_by_{order_name}{bound_name}{limit_name}", order_name, calls_with_limit, query))
    return cases


QUERY_CASES = query_cases()


@pytest.fixture(scope="module")
def query_root(server):
    """Module-wide data for the query cases (written once through the SDK)."""
    created = Apps(server.port)
    root = created.root(QUERY_NAMESPACE)
    root.child("children").set(CHILDREN)
    root.child("values").set(VALUES)
    yield root
    created.delete_all()


def as_dict(result: Any) -> dict:
    """A query result as a plain dict (array-rendered results keyed by index; an empty result as ``{}``)."""
    if result is None:
        return {}
    if isinstance(result, list):
        return {str(index): item for index, item in enumerate(result) if item is not None}
    return dict(result)


@pytest.mark.parametrize("order,calls,query", [case[1:] for case in QUERY_CASES],
                         ids=[case[0] for case in QUERY_CASES])
@bounded(30)
def test_query(query_root, order, calls, query):
    location, data = ("values", VALUES) if order == "value" else ("children", CHILDREN)
    ref = query_root.child(location)
    if order == "key":
        built = ref.order_by_key()
    elif order == "value":
        built = ref.order_by_value()
    else:
        built = ref.order_by_child(ORDERS[order][0])
    for method, argument in calls:
        built = getattr(built, method)(argument)
    expected = model.to_plain(model.evaluate_query(model.normalize(data), query)) or {}
    assert as_dict(built.get()) == expected


@bounded(30)
def test_invalid_queries_raise_the_sdks_invalid_argument_error(query_root):
    ref = query_root.child("children")
    with pytest.raises(exceptions.InvalidArgumentError) as raised:
        ref.order_by_key().limit_to_first(0).get()
    assert str(raised.value) == "Query parameter limitToFirst must be a positive integer"
    with pytest.raises(exceptions.InvalidArgumentError) as raised:
        ref.order_by_key().start_at(1).get()
    assert str(raised.value) == "Provided key index type is invalid, must be string"
    with pytest.raises(exceptions.InvalidArgumentError) as raised:
        ref.order_by_child("score").equal_to(1).start_at(0).get()
    assert str(raised.value) == "equalTo cannot be combined with startAt or endAt"


# ---------------------------------------------------------------------------------------------------------------
# Transactions and ETags


@bounded(180)
def test_transaction_from_10_threads_incrementing_50_times_each_ends_at_500(root):
    counter = root.child("counter")
    committed: list[int] = []
    failures: list[BaseException] = []
    aborted = [0]
    lock = threading.Lock()

    def increment(current: Any) -> int:
        return (current or 0) + 1

    def worker() -> None:
        try:
            for _ in range(50):
                while True:
                    try:
                        value = counter.transaction(increment)
                        break
                    except db.TransactionAbortedError:  # 25 lost races in a row: nothing was written, try again
                        with lock:
                            aborted[0] += 1
                with lock:
                    committed.append(value)
        except BaseException as error:  # reported below
            failures.append(error)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(170)
    assert not any(thread.is_alive() for thread in threads), "transaction threads still running"
    assert not failures, failures
    assert counter.get() == 500
    assert sorted(committed) == list(range(1, 501)), "two transactions committed from the same value"
    print(f"500 transactions committed; {aborted[0]} SDK transaction calls aborted after 25 lost races")


@bounded(30)
def test_get_with_etag_and_set_if_unchanged(root):
    ref = root.child("etag")
    assert ref.get(etag=True) == (None, "null_etag")
    ref.set({"v": 1})
    data, etag = ref.get(etag=True)
    assert data == {"v": 1} and etag == model.node_hash({"v": 1}) and len(etag) == 28
    success, value, new_etag = ref.set_if_unchanged(etag, {"v": 2})
    assert (success, value) == (True, {"v": 2})
    assert new_etag == model.node_hash({"v": 2})
    assert ref.get() == {"v": 2}
    success, value, current_etag = ref.set_if_unchanged(etag, {"v": 3})
    assert (success, value, current_etag) == (False, {"v": 2}, model.node_hash({"v": 2}))
    assert ref.get() == {"v": 2}, "a set with a stale ETag was applied"
    fresh = root.child("etag-new")
    assert fresh.set_if_unchanged("null_etag", "created")[0] is True
    assert fresh.set_if_unchanged("null_etag", "again") == (False, "created", model.node_hash("created"))


@bounded(30)
def test_get_if_changed(root):
    ref = root.child("changed")
    ref.set({"v": 1})
    _, etag = ref.get(etag=True)
    assert ref.get_if_changed(etag) == (False, None, None)
    ref.child("v").set(2)
    assert ref.get_if_changed(etag) == (True, {"v": 2}, model.node_hash({"v": 2}))
    assert root.child("nothing").get_if_changed("null_etag") == (False, None, None)


# ---------------------------------------------------------------------------------------------------------------
# listen()


class Listener:
    """``ref.listen`` feeding a queue; ``stop`` closes it (writing under the path while the SDK's blocked reader
    thread waits for a byte to notice the closed response)."""

    def __init__(self, ref: db.Reference):
        self.ref = ref
        self.events: queue.Queue = queue.Queue()
        self.registration = ref.listen(self.events.put)

    def next(self, timeout: float = EVENT_TIMEOUT) -> db.Event:
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no listen() event within {timeout}s") from None

    def expect(self, event_type: str, path: str, data: Any) -> None:
        event = self.next()
        assert (event.event_type, event.path, event.data) == (event_type, path, data), \
            (event.event_type, event.path, event.data)

    def stop(self, wake: Callable[[int], None], timeout: float = EVENT_TIMEOUT) -> None:
        closer = threading.Thread(target=self.registration.close, daemon=True)
        closer.start()
        deadline = time.monotonic() + timeout
        count = 0
        while closer.is_alive() and time.monotonic() < deadline:
            closer.join(0.2)
            if closer.is_alive():
                count += 1
                wake(count)
        assert not closer.is_alive(), "ListenerRegistration.close() did not return"


# ListenerRegistration.close() closes the response under the SDK's reader thread, which then dies reading a closed
# file (AttributeError in urllib3): the SDK's own shutdown race, not a server answer.
SDK_CLOSE_RACE = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


@SDK_CLOSE_RACE
@bounded(60)
def test_listen_receives_the_initial_put_then_put_and_patch_events(root):
    ref = root.child("rooms/r1")
    ref.set({"title": "hello", "members": {"alice": True}})
    listener = Listener(ref)
    try:
        listener.expect("put", "/", {"title": "hello", "members": {"alice": True}})
        ref.child("title").set("changed")
        listener.expect("put", "/title", "changed")
        ref.child("members/bob").set(True)
        listener.expect("put", "/members/bob", True)
        ref.update({"topic": "news", "count": 1})
        listener.expect("patch", "/", {"topic": "news", "count": 1})
        ref.child("members").update({"carol": True, "alice": None})
        listener.expect("patch", "/members", {"carol": True, "alice": None})
        ref.child("title").delete()
        listener.expect("put", "/title", None)
        root.child("rooms/elsewhere").set("not seen")
        ref.set({"reset": 1})
        listener.expect("put", "/", {"reset": 1})
        # A multi-path update at a parent: each written path is a set, relative to the location.
        root.child("rooms").update({"r1/more": 2, "other": 3})
        listener.expect("put", "/more", 2)
        root.child("rooms").update({"r1": {"replaced": True}})
        listener.expect("put", "/", {"replaced": True})
        root.child("rooms").delete()
        listener.expect("put", "/", None)
    finally:
        listener.stop(lambda count: ref.child("wake").set(count))


@SDK_CLOSE_RACE
@bounded(60)
def test_listen_on_an_empty_location_starts_with_null(root):
    ref = root.child("empty/here")
    listener = Listener(ref)
    try:
        listener.expect("put", "/", None)
        ref.child("a").set(1)
        listener.expect("put", "/a", 1)
    finally:
        listener.stop(lambda count: ref.child("wake").set(count))


# ---------------------------------------------------------------------------------------------------------------
# Rules


def assert_denied(action: Callable[[], Any]) -> None:
    with pytest.raises(exceptions.UnauthenticatedError) as raised:
        action()
    assert str(raised.value) == "Permission denied"
    assert raised.value.http_response is not None and raised.value.http_response.status_code == 401


@bounded(30)
def test_rules_denials_raise_unauthenticated_error_permission_denied(rules_apps, rules_server, ns):
    admin = rules_apps.root(ns)
    alice = rules_apps.root(ns, databaseAuthVariableOverride={"uid": "alice"})
    nobody = rules_apps.root(ns, databaseAuthVariableOverride=None)
    admin.child("users/bob").set({"age": 40})
    alice.child("users/alice").set({"age": 30})
    assert alice.child("users/alice").get() == {"age": 30}
    alice.child("users/alice").update({"age": 31})
    assert alice.child("users/alice/age").transaction(lambda age: age + 1) == 32
    assert_denied(lambda: alice.child("users/bob").get())
    assert_denied(lambda: alice.child("users/bob").get(etag=True))
    assert_denied(lambda: alice.child("users/bob").set({"age": 1}))
    assert_denied(lambda: alice.child("users/bob").push({"x": 1}))
    assert_denied(lambda: alice.child("users/bob").delete())
    assert_denied(lambda: alice.child("users").update({"alice/age": 1, "bob/age": 1}))
    assert_denied(lambda: alice.child("users/bob").transaction(lambda value: value))
    assert_denied(lambda: alice.child("users").order_by_key().limit_to_first(1).get())
    assert_denied(lambda: nobody.child("users/alice").get())
    nobody.child("public/x").set(1)
    assert nobody.child("public/x").get() == 1
    assert_denied(lambda: nobody.child("users/alice/age").set(0))
    assert admin.child("users").get() == {"alice": {"age": 32}, "bob": {"age": 40}}, "a denied write was applied"


@bounded(30)
def test_a_denied_listen_raises_unauthenticated_error(rules_apps, ns):
    alice = rules_apps.root(ns, databaseAuthVariableOverride={"uid": "alice"})
    assert_denied(lambda: alice.child("users/bob").listen(lambda event: None))


@bounded(30)
def test_unindexed_queries_raise_invalid_argument_under_rules(rules_apps, ns):
    admin = rules_apps.root(ns)
    admin.child("unindexed").set({"a": {"score": 1}})
    admin.child("indexed").set({"a": {"score": 2}, "b": {"score": 1}})
    with pytest.raises(exceptions.InvalidArgumentError) as raised:
        admin.child("unindexed").order_by_child("score").get()
    assert str(raised.value) == 'Index not defined, add ".indexOn": "score", for path "/unindexed", to the rules'
    assert dict(admin.child("indexed").order_by_child("score").limit_to_first(1).get()) == {"b": {"score": 1}}
    assert dict(admin.child("unindexed").order_by_key().get()) == {"a": {"score": 1}}
