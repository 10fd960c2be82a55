"""The shipped rules, ``Config/database.rules.json`` (issue 25): they check clean, their cases file
(``Config/database.rules.test.json``) passes and evaluates every rule, and a server started from the repository root
without ``--rules``, as ``scripts/run`` starts it, enforces them over the wire and REST: per-user data, the chat room's
validation with server timestamps, the ``.indexOn`` indexes and the public read-only section."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

import tokens
from conftest import REPO_ROOT, START_TIMEOUT, STOP_TIMEOUT, Clients, canopy_binary

RULES = REPO_ROOT / "Config" / "database.rules.json"
CASES = REPO_ROOT / "Config" / "database.rules.test.json"
SECRET = "canopy-shipped-rules-secret-0123456789"
DENIED = "permission_denied"
TS = {".sv": "timestamp"}


def rules_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(canopy_binary()), "rules", *args], capture_output=True, text=True, timeout=60,
                          cwd=REPO_ROOT)


def test_the_shipped_rules_check_without_errors_or_warnings():
    result = rules_command("check", "Config/database.rules.json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK (" in result.stdout and ", 0 warnings)" in result.stdout, result.stdout


def test_the_shipped_cases_pass_and_evaluate_every_rule():
    result = rules_command("test", "Config/database.rules.json", "Config/database.rules.test.json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    passed = re.search(r"^(\d+) of (\d+) cases passed$", result.stdout, re.M)
    assert passed and passed[1] == passed[2] and int(passed[1]) >= 50, result.stdout
    evaluated = re.search(r"^(\d+) of (\d+) rule expressions evaluated$", result.stdout, re.M)
    assert evaluated and evaluated[1] == evaluated[2], result.stdout
    # Each rule is seen both allowing and denying, except constants (`true`, `false`), which cannot be.
    rows = [line.split("|") for line in result.stdout.splitlines() if re.match(r"^\| /\S+ \| \d+ \|", line)]
    assert len(rows) == int(evaluated[2])
    for row in rows:
        rule, true_count, false_count, expression = row[1].strip(), int(row[3]), int(row[4]), row[6].strip()
        if expression not in ("`true`", "`false`"):
            assert true_count > 0 and false_count > 0, f"{rule} is never {'true' if true_count == 0 else 'false'}"


def test_every_case_is_named_and_the_file_covers_the_three_kinds_of_caller():
    suite = json.loads(CASES.read_text())
    names = [case["name"] for case in suite["cases"]]
    assert len(names) == len(set(names)), "case names are unique"
    callers = {json.dumps(case.get("auth", suite["auth"])) for case in suite["cases"]}
    assert "null" in callers and len(callers) >= 3, "signed out, one user and another user"


class RepositoryServer:
    """``canopy serve`` with the repository root as its working directory and no ``--rules``: what ``scripts/run``
    starts, on an ephemeral port with a temporary data directory."""

    def __init__(self, directory):
        self.directory = directory
        self.port_file = directory / "port"
        self.log_path = directory / "server.log"
        self.log = open(self.log_path, "wb")
        command = [str(canopy_binary()), "serve", "--port", "0", "--port-file", str(self.port_file),
                   "--data-dir", str(directory / "data"), "--namespaces", "*", "--auth-secret", SECRET]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, cwd=REPO_ROOT)
        deadline = time.monotonic() + START_TIMEOUT
        while not (self.port_file.exists() and self.port_file.read_text().strip().isdigit()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the server did not start: {self.log_path.read_text()[-4000:]}")
            time.sleep(0.02)
        self.port = int(self.port_file.read_text().strip())

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
                return -9
        self.log.close()
        return self.process.returncode

    def rest(self, method: str, path: str, ns: str, body=None, **params) -> tuple[int, object]:
        query = urllib.parse.urlencode({"ns": ns, **{k: json.dumps(v) for k, v in params.items()}})
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}.json?{query}", method=method,
                                         data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")


@pytest.fixture(scope="module")
def repo_server(tmp_path_factory):
    server = RepositoryServer(tmp_path_factory.mktemp("shipped-rules"))
    yield server
    assert server.stop() == 0, server.log_path.read_text()[-4000:]


async def signed_in(clients: Clients, ns: str, uid: str):
    client = await clients.connect(ns)
    assert (await client.auth(tokens.hs256(SECRET, tokens.claims(uid)))).ok
    return client


def message(uid: str, text: str, created=TS) -> dict:
    return {"uid": uid, "text": text, "createdAt": created}


async def test_a_server_started_in_the_repository_enforces_them(repo_server, ns):
    assert "enforcing security rules from Config/database.rules.json" in repo_server.log_path.read_text()
    async with Clients(repo_server.port) as clients:
        anonymous = await clients.connect(ns)
        alice = await signed_in(clients, ns, "alice")
        bob = await signed_in(clients, ns, "bob")
        # Per-user data: the owner only.
        assert (await alice.put("/users/alice", {"displayName": "Alice", "createdAt": TS})).ok
        assert (await alice.put("/users/alice/createdAt", 1)).status == DENIED
        assert (await alice.put("/users/alice/displayName", "")).status == DENIED
        view, response = await alice.listen("/users/alice")
        assert response.ok and view.cache["displayName"] == "Alice"
        assert isinstance(view.cache["createdAt"], int)
        assert (await bob.get("/users/alice")).status == DENIED
        assert (await anonymous.get("/users/alice")).status == DENIED
        assert (await bob.put("/users/alice/displayName", "Bob")).status == DENIED
        # The chat room: posting as oneself, stamped by the server; validated shape and length.
        messages = "/rooms/general/messages"
        assert (await alice.put(f"{messages}/m1", message("alice", "Hello, room"))).ok
        assert (await bob.put(f"{messages}/m2", message("bob", "Hi Alice"))).ok
        assert (await alice.put(f"{messages}/m3", message("bob", "I am Bob"))).status == DENIED
        assert (await alice.put(f"{messages}/m3", message("alice", "x" * 501))).status == DENIED
        # A client's own clock a minute behind (a time from the same millisecond as the server's would pass).
        made_up = int(time.time() * 1000) - 60_000
        assert (await alice.put(f"{messages}/m3", message("alice", "late", made_up))).status == DENIED
        assert (await anonymous.put(f"{messages}/m3", message("alice", "anon"))).status == DENIED
        assert (await alice.put("/rooms/Not-Lowercase/messages/m1", message("alice", "hi"))).status == DENIED
        # The indexed query a chat client makes: allowed for the signed-in, with no no_index warning.
        query = {"i": "createdAt", "l": 50, "vf": "r"}
        view, response = await bob.listen(messages, query, tag=1)
        assert response.ok and view.warnings == [] and set(view.cache) == {"m1", "m2"}
        _, response = await anonymous.listen(messages, query, tag=1)
        assert response.status == DENIED
        # Edits and deletes: the author only, createdAt kept.
        assert (await bob.merge(f"{messages}/m1", {"text": "edited by bob"})).status == DENIED
        assert (await alice.merge(f"{messages}/m1", {"createdAt": TS})).status == DENIED
        assert (await alice.merge(f"{messages}/m1", {"text": "Hello, everyone"})).ok
        assert (await bob.put(f"{messages}/m1", None)).status == DENIED
        assert (await alice.put(f"{messages}/m1", None)).ok
        # Public, read-only: only the admin credential writes it.
        admin = await clients.connect(ns)
        assert (await admin.auth("owner", action="gauth")).ok
        assert (await admin.put("/public/announcements/a1", {"title": "Welcome", "publishedAt": TS})).ok
        assert (await alice.put("/public/announcements/a2", {"title": "Mine"})).status == DENIED
        view, response = await anonymous.listen("/public")
        assert response.ok and view.cache["announcements"]["a1"]["title"] == "Welcome"


def test_rest_reads_the_public_section_and_its_index(repo_server, ns):
    status, _ = repo_server.rest("PUT", "/public/announcements/a1", ns, {"title": "Hi", "publishedAt": 1})
    assert status in (401, 403), "anonymous REST writes are refused"
    status, body = repo_server.rest("GET", "/public/announcements", ns, orderBy="publishedAt", limitToLast=10)
    assert status == 200, body
    status, body = repo_server.rest("GET", "/public/announcements", ns, orderBy="title")
    assert status == 400 and "index" in json.dumps(body).lower(), "only the declared .indexOn serves REST queries"
    status, _ = repo_server.rest("GET", "/users/alice", ns)
    assert status in (401, 403)
