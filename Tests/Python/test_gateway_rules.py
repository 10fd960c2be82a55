"""Security rules enforced over the wire (issue 5, acceptance 2): a denied listen, get, write or onDisconnect gets
`permission_denied` and no data; a permitted one works; writes are judged against the whole tree (data on other
shards included) with server values resolved; the admin credential bypasses the rules."""

import json

import pytest

import tokens
from conftest import Clients

SECRET = "canopy-rules-secret-0123456789abcdef"
DENIED = ("permission_denied", "Permission denied")

RULES = {
    "rules": {
        "public": {".read": True, ".write": "auth != null"},
        "users": {
            "$uid": {
                ".read": "auth != null && auth.uid == $uid",
                ".write": "auth != null && auth.uid == $uid",
                "age": {".validate": "newData.isNumber() && newData.val() >= 0"},
                "seen": {".validate": "newData.val() == now"},
            }
        },
        "posts": {
            "$id": {
                ".read": True,
                ".write": "auth != null && !root.child('banned').child(auth.uid).exists()",
                ".validate": "newData.hasChildren(['text'])",
            }
        },
        "scores": {".read": "query.limitToFirst <= 10", ".indexOn": "points"},
    }
}


@pytest.fixture(scope="module")
def rules_server(tmp_path_factory):
    from conftest import ServerFactory
    path = tmp_path_factory.mktemp("rules") / "database.rules.json"
    path.write_text(json.dumps(RULES))
    factory = ServerFactory()
    yield factory("--rules", str(path), "--auth-secret", SECRET)
    factory.finish()


def token(uid: str) -> str:
    return tokens.hs256(SECRET, tokens.claims(uid))


async def signed_in(clients, ns, uid):
    client = await clients.connect(ns)
    assert (await client.auth(token(uid))).ok
    return client


async def test_reads_are_granted_or_denied_with_no_data(rules_server, ns):
    async with Clients(rules_server.port) as clients:
        admin = await clients.connect(ns)
        assert (await admin.auth("owner", action="gauth")).ok
        assert (await admin.put("/users/alice", {"age": 30})).ok
        anonymous = await clients.connect(ns)
        view, response = await anonymous.listen("/users/alice")
        assert (response.status, response.data) == DENIED
        assert not [push for push in anonymous.pushes() if push.path.startswith("/users")]
        response = await anonymous.get("/users/alice")
        assert (response.status, response.data) == DENIED
        alice = await signed_in(clients, ns, "alice")
        view, response = await alice.listen("/users/alice")
        assert response.ok and view.cache == {"age": 30}
        _, response = await alice.listen("/users/bob")
        assert response.status == "permission_denied"
        _, response = await alice.listen("/users")  # rules are not filters: no grant at /users
        assert response.status == "permission_denied"


async def test_writes_need_write_and_validate_on_the_new_data(rules_server, ns):
    async with Clients(rules_server.port) as clients:
        anonymous = await clients.connect(ns)
        assert (await anonymous.put("/public/x", 1)).status == "permission_denied"
        alice = await signed_in(clients, ns, "alice")
        assert (await alice.put("/public/x", 1)).ok
        assert (await alice.put("/users/alice/age", 5)).ok
        assert (await alice.put("/users/alice/age", -1)).status == "permission_denied"
        assert (await alice.put("/users/bob/age", 5)).status == "permission_denied"
        assert (await alice.put("/users/alice/seen", {".sv": "timestamp"})).ok, "newData of a server timestamp is now"
        assert (await alice.put("/users/alice/seen", 12345)).status == "permission_denied"
        # One denied path denies the whole update; nothing of it is applied.
        response = await alice.merge("/", {"users/alice/age": 7, "users/bob/age": 7})
        assert response.status == "permission_denied"
        assert (await alice.get("/users/alice/age")).data == 5


async def test_rules_read_data_on_other_shards_through_root(rules_server, ns):
    async with Clients(rules_server.port) as clients:
        admin = await clients.connect(ns)
        assert (await admin.auth("owner", action="gauth")).ok
        assert (await admin.put("/banned/mallory", True)).ok
        mallory = await signed_in(clients, ns, "mallory")
        bob = await signed_in(clients, ns, "bob")
        assert (await mallory.put("/posts/p1", {"text": "spam"})).status == "permission_denied"
        assert (await bob.put("/posts/p2", {"text": "hello"})).ok
        assert (await bob.put("/posts/p3", {"title": "no text"})).status == "permission_denied"
        assert (await admin.put("/banned/mallory", None)).ok
        assert (await mallory.put("/posts/p1", {"text": "sorry"})).ok


async def test_query_rules_and_the_admin_bypass(rules_server, ns):
    async with Clients(rules_server.port) as clients:
        client = await clients.connect(ns)
        _, response = await client.listen("/scores", {"i": "points", "l": 10, "vf": "l"}, tag=1)
        assert response.ok
        _, response = await client.listen("/scores", {"i": "points", "l": 50, "vf": "l"}, tag=2)
        assert response.status == "permission_denied"
        admin = await clients.connect(ns)
        assert (await admin.auth("owner", action="gauth")).ok
        assert (await admin.put("/users/bob/age", -5)).ok, "the admin bypasses .validate too"
        _, response = await admin.listen("/users")
        assert response.ok


async def test_ondisconnect_is_checked_when_registered(rules_server, ns):
    async with Clients(rules_server.port) as clients:
        alice = await signed_in(clients, ns, "alice")
        denied = await alice.request("o", {"p": "/users/bob/age", "d": 1})
        assert (denied.status, denied.data) == DENIED
        denied = await alice.request("om", {"p": "/users", "d": {"alice/age": 1, "bob/age": 1}})
        assert denied.status == "permission_denied"
        allowed = await alice.request("o", {"p": "/users/alice/age", "d": 99})
        assert allowed.ok
        watcher = await signed_in(clients, ns, "alice")
        view, _ = await watcher.listen("/users/alice")
        await alice.close()
        await watcher.wait_for(lambda entry: view.cache == {"age": 99}, 10, "the onDisconnect write")


async def test_explain_denials_logs_each_rule_tried(start_server, tmp_path, ns):
    path = tmp_path / "database.rules.json"
    path.write_text(json.dumps(RULES))
    server = start_server("--rules", str(path), "--auth-secret", SECRET, "--explain-denials", "--log-level", "notice")
    async with Clients(server.port) as clients:
        alice = await signed_in(clients, ns, "alice")
        assert (await alice.put("/users/alice/age", -1)).status == "permission_denied"
        _, response = await alice.listen("/users/bob")
        assert response.status == "permission_denied"
        await alice.sync()
    log = server.log_path.read_text()
    assert "denied write at /users/alice/age for uid alice" in log, log
    assert "newData.isNumber() && newData.val() >= 0" in log, log
    assert "denied read at /users/bob for uid alice" in log, log
    assert "auth != null && auth.uid == $uid" in log, log


async def test_a_rules_reload_revokes_listens_no_longer_readable(start_server, tmp_path, ns):
    import asyncio
    path = tmp_path / "database.rules.json"
    path.write_text(json.dumps({"rules": {"open": {".read": True, ".write": True},
                                          "scores": {".read": True, ".write": True}}}))
    server = start_server("--rules", str(path))
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        assert (await client.put("/open/x", 1)).ok
        kept, response = await client.listen("/open")
        assert response.ok
        query = {"sp": 50, "sin": True, "i": "points"}
        _, response = await client.listen("/scores", query, tag=4)
        assert response.ok
        _, response = await client.listen("/scores")
        assert response.ok
        # The new version closes /scores: both listens there are revoked, the tagged one with its query.
        path.write_text(json.dumps({"rules": {"open": {".read": True, ".write": True}}}))
        revoked = await client.next_push(path="/scores", action="c", timeout=10)
        second = await client.next_push(path="/scores", action="c", timeout=10)
        queries = sorted([json.dumps(p.payload.get("q")) for p in (revoked, second)])
        assert queries == sorted([json.dumps(None), json.dumps([query])])
        assert not [p for p in client.pushes() if p.action == "c" and p.path == "/open"]
        assert (await client.put("/open/x", 2)).ok
        assert kept.cache == 2 or kept.cache == {"x": 2}
        # An invalid version is refused and the rules in force stay.
        path.write_text('{"rules": {".read": "nope("}}')
        await asyncio.sleep(2.5)
        assert (await client.put("/open/x", 3)).ok
        assert "kept the previous rules" in server.log_path.read_text()


async def test_unauth_revokes_listens_that_needed_the_credential(rules_server, ns):
    async with Clients(rules_server.port) as clients:
        alice = await signed_in(clients, ns, "alice")
        _, response = await alice.listen("/users/alice")
        assert response.ok
        _, response = await alice.listen("/posts")  # .read true at /posts/$id only: denied at /posts itself
        assert response.status == "permission_denied"
        _, response = await alice.listen("/public")
        assert response.ok
        assert (await alice.request("unauth", {})).ok
        revoked = await alice.next_push(path="/users/alice", action="c", timeout=10)
        assert "q" not in revoked.payload
        await alice.sync()
        assert not [p for p in alice.pushes() if p.action == "c" and p.path == "/public"]


async def test_live_rule_coverage_is_in_the_metrics(rules_server, ns):
    import urllib.request
    async with Clients(rules_server.port) as clients:
        alice = await signed_in(clients, ns, "alice")
        assert (await alice.put("/users/alice/age", -3)).status == "permission_denied"
    with urllib.request.urlopen(f"http://127.0.0.1:{rules_server.port}/.metrics", timeout=10) as response:
        text = response.read().decode()
    lines = [line for line in text.splitlines() if line.startswith("canopy_rule_evaluations_total{")]
    assert any('rule="/users/$uid/age/.validate"' in line and 'outcome="false"' in line and not line.endswith(" 0")
               for line in lines), lines
    assert "newData.isNumber()" not in text, "rule source must not be exposed"


def admin_rules(port: int, ns: str, body: bytes | None = None) -> tuple[int, str]:
    """GET (or PUT `body`) the rules of namespace `ns` with the admin credential."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/.settings/rules.json?ns={ns}", data=body, method="GET" if body is None else "PUT",
        headers={"Authorization": "Bearer owner"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


LOCKED = {"rules": {".read": True, "open": {".write": True}}}


async def test_rules_are_per_namespace_an_upload_to_one_leaves_the_other(server, ns):
    """Issue 25: `PUT /.settings/rules.json?ns=A` replaces A's rules only, and each namespace's clients are judged
    by their own (in cluster mode the upload travels through A's log)."""
    first, second = ns + "-a", ns + "-b"
    async with Clients(server.port) as clients:
        # Both namespaces open, under the rules the server started with.
        for name in (first, second):
            client = await clients.connect(name)
            assert (await client.put("/locked/x", 0)).ok
        before = admin_rules(server.port, second)
        status, _ = admin_rules(server.port, first, json.dumps(LOCKED).encode())
        assert status == 200
        assert json.loads(admin_rules(server.port, first)[1]) == LOCKED
        assert admin_rules(server.port, second) == before
        judged = await clients.connect(first)
        assert (await judged.put("/locked/x", 1)).status == "permission_denied"
        assert (await judged.put("/open/x", 1)).ok
        other = await clients.connect(second)
        assert (await other.put("/locked/x", 2)).ok
        # The namespace that was never uploaded to still follows the server's rules; the other keeps its upload.
        fresh = await clients.connect(ns + "-c")
        assert (await fresh.put("/locked/x", 3)).ok


async def test_a_rules_directory_gives_namespaces_their_own_rules(start_server, tmp_path, ns):
    directory = tmp_path / "rules.d"
    directory.mkdir()
    (directory / f"{ns}-own.rules.json").write_text(json.dumps(LOCKED))
    defaults = tmp_path / "database.rules.json"
    defaults.write_text(json.dumps({"rules": {".read": True, ".write": True}}))
    server = start_server("--rules", str(defaults), "--rules-dir", str(directory))
    async with Clients(server.port) as clients:
        own = await clients.connect(ns + "-own")
        assert (await own.put("/locked/x", 1)).status == "permission_denied"
        other = await clients.connect(ns + "-other")
        assert (await other.put("/locked/x", 1)).ok
        assert json.loads(admin_rules(server.port, ns + "-own")[1]) == LOCKED
        # Editing the namespace's file takes effect for it alone.
        (directory / f"{ns}-own.rules.json").write_text(json.dumps({"rules": {".read": True, ".write": True}}))
        import asyncio
        for _ in range(100):
            if (await own.put("/locked/x", 2)).ok:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the namespace's edited rules file was not taken")
