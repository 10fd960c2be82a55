"""Firebase Auth in production (issue 25): ID tokens verified with keys fetched from a URL and kept fresh.

A local HTTPS key server (key_server.py, the tests' own CA) publishes the signing keys the way Google does: a
certificate map (``{"kid": "-----BEGIN CERTIFICATE-----..."}``) with ``Cache-Control: max-age``. The same suite runs
against a non-Google OpenID Connect issuer publishing a JWKS (``--auth-jwks-url`` with ``--auth-issuer`` and
``--auth-audience``). Each suite checks: key 1 passes; after a rotation to key 2 (both published, as Google does),
new tokens pass at once without a restart and old ones still pass; wrong ``iss``, wrong ``aud``, missing ``sub``,
expired, future ``iat``, HS256, ``alg: none`` and an unknown ``kid`` are each refused with the reason in the log;
and the key server going down leaves the cached keys working. Then the Firebase-only checks (``auth_time``, RS256
only, a ``kid`` required), the cache (``max-age`` honoured, unknown kids rate-limited), REST waiting for a rotated
key, and a server whose key URL cannot be reached at start.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

import tokens
from conftest import Clients, ServerFactory
from key_server import KeyServer, LocalCA, certificate_map, jwks

PROJECT = tokens.PROJECT
OIDC_ISSUER = "https://issuer.example.test/realms/canopy"
OIDC_AUDIENCE = "canopy-app"


@dataclass
class Issuer:
    """One kind of token issuer: where its keys are published and what its tokens claim."""

    name: str
    path: str
    document: object  # function of KeyPairs -> document
    iss: str
    aud: str

    def flags(self, url: str) -> list[str]:
        if self.name == "google":
            return ["--auth-firebase-project", PROJECT, "--auth-jwks-url", url]
        return ["--auth-jwks-url", url, "--auth-issuer", self.iss, "--auth-audience", self.aud]

    def claims(self, uid: str = "alice", **extra) -> dict:
        result = tokens.claims(uid, iss=self.iss, aud=self.aud)
        result.update(extra)
        return result


ISSUERS = [
    Issuer("google", "/certs", certificate_map, f"https://securetoken.google.com/{PROJECT}", PROJECT),
    Issuer("jwks", "/jwks", jwks, OIDC_ISSUER, OIDC_AUDIENCE),
]


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> LocalCA:
    return LocalCA(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def key_server(ca):
    server = KeyServer(ca).start()
    yield server
    server.stop()


def config_file(directory: Path, **auth) -> Path:
    path = directory / "canopy-test.json"
    path.write_text(json.dumps({"auth": auth}))
    return path


def start_canopy(start_server: ServerFactory, ca: LocalCA, issuer: Issuer, url: str, tmp_path: Path,
                 min_refresh: float = 0, *extra: str):
    """A server verifying ``issuer``'s tokens with keys from ``url``, logging at info (auth reasons)."""
    return start_server(
        "--log-level", "info", "--auth-keys-ca-file", str(ca.ca_path), "--auth-clock-skew", "5",
        "--config", str(config_file(tmp_path, keysMinRefreshSeconds=min_refresh)), *issuer.flags(url), *extra)


async def auth(port: int, token: str) -> tuple[str, object]:
    async with Clients(port) as clients:
        client = await clients.connect("auth")
        response = await client.auth(token)
        return response.status, response.data


async def wait_for_log(server, text: str, timeout: float = 5.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = server.log_path.read_text(errors="replace")
        if text in log:
            return log
        await asyncio.sleep(0.05)
    raise AssertionError(f"{text!r} not in the server log: {server.log_tail()}")


def rest_status(port: int, token: str, path: str = "/rest.json") -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}?ns=auth",
                                     headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


# -- the suite, for Google's certificate map and for a JWKS issuer ----------------------------------------------------


@pytest.fixture(params=ISSUERS, ids=lambda issuer: issuer.name)
def issuer(request) -> Issuer:
    return request.param


@pytest.fixture
def keys():
    return tokens.KeyPair("RS256", "key-1"), tokens.KeyPair("RS256", "key-2")


@pytest.fixture
def canopy(start_server, ca, key_server, issuer, keys, tmp_path):
    key_server.publish(issuer.path, issuer.document(keys[0]))
    return start_canopy(start_server, ca, issuer, key_server.url(issuer.path), tmp_path)


async def test_key_1_passes(canopy, issuer, keys):
    status, data = await auth(canopy.port, keys[0].sign(issuer.claims("alice")))
    assert status == "ok", data
    assert data["auth"]["uid"] == "alice"


async def test_rotation_new_tokens_pass_at_once_and_old_ones_until_they_expire(canopy, key_server, issuer, keys):
    old_token = keys[0].sign(issuer.claims("alice"))
    assert (await auth(canopy.port, old_token))[0] == "ok"
    # Google publishes the next key while tokens signed with the previous one are still valid.
    key_server.publish(issuer.path, issuer.document(keys[0], keys[1]))
    fetches = key_server.count(issuer.path)
    status, data = await auth(canopy.port, keys[1].sign(issuer.claims("bob")))
    assert status == "ok", f"a token of the rotated key must pass on the first try: {data} {canopy.log_tail()}"
    assert key_server.count(issuer.path) == fetches + 1, "the unknown kid fetches the keys again, once"
    assert (await auth(canopy.port, old_token))[0] == "ok", "the old key stays while it is published"
    assert (await auth(canopy.port, keys[0].sign(issuer.claims("carol"))))[0] == "ok"


@pytest.mark.parametrize("case,reason", [
    ("wrong iss", "the iss claim does not name the configured issuer"),
    ("wrong aud", "the aud claim does not name the configured audience"),
    ("missing sub", "the sub claim is missing or not a string"),
    ("empty sub", "the sub claim is empty"),
    ("long sub", "the sub claim is longer than 128 characters"),
    ("future iat", "the token was issued in the future (iat)"),
    ("HS256", "the token's alg is HS256"),
    ("alg none", "unsigned tokens (alg none) are not accepted"),
    ("unknown kid", "no current RS256 key has the token's kid \"key-unknown\""),
    ("other key", "the signature does not verify"),
])
async def test_bad_tokens_are_refused_with_the_reason_logged(canopy, issuer, keys, case, reason):
    now = int(time.time())
    claims = issuer.claims("mallory")
    token = None
    if case == "wrong iss":
        claims["iss"] = "https://securetoken.google.com/another-project" if issuer.name == "google" else \
            "https://issuer.example.test/realms/other"
    elif case == "wrong aud":
        claims["aud"] = "another-project"
    elif case == "missing sub":
        del claims["sub"]
    elif case == "empty sub":
        claims["sub"] = ""
    elif case == "long sub":
        claims["sub"] = "u" * 129
    elif case == "future iat":
        claims.update(iat=now + 3600, exp=now + 7200)
    elif case == "HS256":
        token = tokens.hs256("a-secret-the-server-never-heard-of-0123456789", claims)
    elif case == "alg none":
        token = tokens.unsigned(claims)
    elif case == "unknown kid":
        token = tokens.KeyPair("RS256", "key-unknown").sign(claims)
    elif case == "other key":
        token = tokens.KeyPair("RS256", "x").sign(claims, kid=keys[0].kid)
    token = token or keys[0].sign(claims)
    status, data = await auth(canopy.port, token)
    assert status == "invalid_token", data
    log = await wait_for_log(canopy, reason)
    assert "auth.rejected" in log


async def test_expired_token_is_refused_with_the_reason_logged(canopy, issuer, keys):
    now = int(time.time())
    token = keys[0].sign(issuer.claims("alice", iat=now - 7200, auth_time=now - 7200, exp=now - 3600))
    status, data = await auth(canopy.port, token)
    assert status == "expired_token", data
    await wait_for_log(canopy, "the token expired (exp)")


async def test_key_server_down_keeps_the_cached_keys(canopy, key_server, issuer, keys):
    assert (await auth(canopy.port, keys[0].sign(issuer.claims("alice"))))[0] == "ok"
    key_server.stop()
    # A token naming an unknown key makes the server try to fetch the keys again, which fails...
    status, _ = await auth(canopy.port, keys[1].sign(issuer.claims("bob")))
    assert status == "invalid_token"
    await wait_for_log(canopy, "auth.keys_fetch_failed")
    # ...and the cached keys still verify.
    for uid in ("alice", "carol"):
        status, data = await auth(canopy.port, keys[0].sign(issuer.claims(uid)))
        assert status == "ok", data
    # Back up with the rotated key published: the next unknown kid fetches it.
    key_server.publish(issuer.path, issuer.document(keys[0], keys[1]))
    key_server.start()
    status, data = await auth(canopy.port, keys[1].sign(issuer.claims("bob")))
    assert status == "ok", data


async def test_rest_waits_for_a_rotated_key(canopy, key_server, issuer, keys):
    assert rest_status(canopy.port, keys[0].sign(issuer.claims("alice"))) == 200
    key_server.publish(issuer.path, issuer.document(keys[0], keys[1]))
    assert rest_status(canopy.port, keys[1].sign(issuer.claims("bob"))) == 200
    assert rest_status(canopy.port, tokens.KeyPair("RS256", "nope").sign(issuer.claims("eve"))) == 401
    log = await wait_for_log(canopy, "no current RS256 key has the token's kid \"nope\"")
    assert "caller=REST" in log


async def test_requests_after_a_waiting_auth_run_in_order_with_its_identity(start_server, ca, key_server, issuer,
                                                                           keys, tmp_path):
    """The JS SDK sends its listens and writes right behind `auth` without waiting for the answer: while the auth
    waits for the keys, they are held, and then run as the user the token names."""
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": {"users": {"$uid": {".read": "auth.uid == $uid",
                                                              ".write": "auth.uid == $uid"}}}}))
    key_server.publish(issuer.path, issuer.document(keys[0]))
    canopy = start_canopy(start_server, ca, issuer, key_server.url(issuer.path), tmp_path, 0, "--rules", str(rules))
    key_server.publish(issuer.path, issuer.document(keys[0], keys[1]))
    async with Clients(canopy.port) as clients:
        client = await clients.connect("auth")
        auth_answer = await client.send_request("auth", {"cred": keys[1].sign(issuer.claims("bob"))})
        write = await client.send_request("p", {"p": "/users/bob/name", "d": "Bob"})
        read = await client.send_request("g", {"p": "/users/bob", "q": {}})
        assert (await client.wait_response(auth_answer)).status == "ok"
        assert (await client.wait_response(write)).status == "ok"
        answer = await client.wait_response(read)
        assert answer.status == "ok" and answer.data == {"name": "Bob"}, answer.inbound.text


# -- Firebase-only checks -----------------------------------------------------------------------------------------------


GOOGLE = ISSUERS[0]


@pytest.fixture
def firebase(start_server, ca, key_server, keys, tmp_path):
    key_server.publish(GOOGLE.path, GOOGLE.document(keys[0]))
    return start_canopy(start_server, ca, GOOGLE, key_server.url(GOOGLE.path), tmp_path)


@pytest.mark.parametrize("case,reason", [
    ("future auth_time", "the user signed in in the future (auth_time)"),
    ("missing auth_time", "the auth_time claim is missing"),
    ("no kid", "the header names no key (kid)"),
    ("ES256", "the token's alg is ES256"),
    ("project id as issuer of another", "the iss claim does not name the configured issuer"),
])
async def test_firebase_rules(firebase, keys, case, reason):
    now = int(time.time())
    claims = GOOGLE.claims("mallory")
    token = None
    if case == "future auth_time":
        claims["auth_time"] = now + 3600
    elif case == "missing auth_time":
        del claims["auth_time"]
    elif case == "no kid":
        token = keys[0].sign(claims, with_kid=False)
    elif case == "ES256":
        token = tokens.KeyPair("ES256", keys[0].kid).sign(claims)
    elif case == "project id as issuer of another":
        claims["iss"] = "https://securetoken.google.com/" + PROJECT + "-other"
    token = token or keys[0].sign(claims)
    status, data = await auth(firebase.port, token)
    assert status == "invalid_token", data
    await wait_for_log(firebase, reason)


async def test_keys_are_cached_for_max_age_then_fetched_again(start_server, ca, tmp_path, keys):
    server = KeyServer(ca, max_age=2).start()
    try:
        server.publish("/certs", certificate_map(keys[0]))
        canopy = start_canopy(start_server, ca, GOOGLE, server.url("/certs"), tmp_path)
        for uid in ("a", "b", "c"):
            assert (await auth(canopy.port, keys[0].sign(GOOGLE.claims(uid))))[0] == "ok"
        assert server.count("/certs") == 1, "known keys are served from the cache"
        # After max-age the keys are fetched again on their own, before any token needs it: here key 1 was
        # withdrawn (its tokens have all expired, as Google waits for) and key 2 is the current one.
        server.publish("/certs", certificate_map(keys[1]))
        await wait_for_log(canopy, "kids=key-2", timeout=8)
        fetches = server.count("/certs")
        assert fetches >= 2, "the cache expired after max-age=2 and was refreshed"
        assert (await auth(canopy.port, keys[1].sign(GOOGLE.claims("d"))))[0] == "ok"
        assert server.count("/certs") == fetches, "the rotated key was fetched before a token needed it"
        assert (await auth(canopy.port, keys[0].sign(GOOGLE.claims("e"))))[0] == "invalid_token"
        await wait_for_log(canopy, "no current RS256 key has the token's kid \"key-1\"")
    finally:
        server.stop()


async def test_unknown_kids_are_rate_limited(start_server, ca, key_server, keys, tmp_path):
    key_server.publish(GOOGLE.path, GOOGLE.document(keys[0]))
    canopy = start_canopy(start_server, ca, GOOGLE, key_server.url(GOOGLE.path), tmp_path, 30)
    assert (await auth(canopy.port, keys[0].sign(GOOGLE.claims("a"))))[0] == "ok"
    fetches = key_server.count(GOOGLE.path)
    for index in range(5):
        stranger = tokens.KeyPair("RS256", f"random-{index}")
        assert (await auth(canopy.port, stranger.sign(GOOGLE.claims("b"))))[0] == "invalid_token"
    assert key_server.count(GOOGLE.path) == fetches, "fetched at start, then not again within keysMinRefreshSeconds"


async def test_unreachable_key_url_at_start(start_server, ca, tmp_path, keys):
    """No network at start is required: the server starts, serves unauthenticated and admin traffic, logs it."""
    dead = KeyServer(ca).start()
    url = dead.url("/certs")
    dead.stop()
    canopy = start_canopy(start_server, ca, GOOGLE, url, tmp_path)
    await wait_for_log(canopy, "auth.keys_fetch_failed")
    async with Clients(canopy.port) as clients:
        anonymous = await clients.connect("auth")
        assert (await anonymous.put("/open", 1)).ok
        admin = await clients.connect("auth")
        assert (await admin.auth("owner", "gauth")).ok
        assert (await admin.put("/admin", 2)).ok
        refused = await anonymous.auth(keys[0].sign(GOOGLE.claims("alice")))
        assert refused.status == "invalid_token"
    await wait_for_log(canopy, "no signing keys have been fetched from")
    # The key server comes up on that address: the next token fetches the keys and passes.
    alive = KeyServer(ca)
    alive.port = int(url.split(":")[2].split("/")[0])
    alive.publish("/certs", certificate_map(keys[0]))
    alive.start()
    try:
        status, data = await auth(canopy.port, keys[0].sign(GOOGLE.claims("alice")))
        assert status == "ok", data
    finally:
        alive.stop()


@pytest.mark.parametrize("flags,message", [
    (["--auth-firebase-project", PROJECT, "--auth-secret", "0123456789abcdef0123456789abcdef"], "remove auth.secret"),
    (["--auth-jwks-url", "https://127.0.0.1:1/jwks"], "auth.jwksURL needs auth.issuer and auth.audience"),
    (["--auth-jwks-url", "http://127.0.0.1:1/jwks", "--auth-issuer", "i", "--auth-audience", "a"],
     "must be an https:// URL"),
    (["--auth-firebase-project", "Not A Project"], "is not a Firebase project id"),
    (["--auth-firebase-project", PROJECT, "--auth-keys-ca-file", "/nonexistent/ca.pem"], "/nonexistent/ca.pem"),
])
def test_bad_settings_stop_the_server_with_the_reason(tmp_path, flags, message):
    import subprocess
    from conftest import canopy_binary

    result = subprocess.run([str(canopy_binary()), "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
                             *flags], cwd=tmp_path, capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr, result.stdout + result.stderr


# -- the HTTPS client against hostile or broken key servers ----------------------------------------------------------


async def test_an_oversized_key_document_is_refused(start_server, ca, key_server, keys, tmp_path):
    key_server.publish("/huge", json.dumps({"pad": "x" * (2 << 20)}).encode())
    canopy = start_canopy(start_server, ca, GOOGLE, key_server.url("/huge"), tmp_path)
    await wait_for_log(canopy, "the response is larger than 1048576 bytes")


async def test_redirects_are_followed_a_few_times_only(start_server, ca, key_server, keys, tmp_path):
    key_server.publish("/certs", certificate_map(keys[0]))
    key_server.redirect("/moved", key_server.url("/certs"))
    canopy = start_canopy(start_server, ca, GOOGLE, key_server.url("/moved"), tmp_path)
    assert (await auth(canopy.port, keys[0].sign(GOOGLE.claims("alice"))))[0] == "ok"
    for index in range(5):
        key_server.redirect(f"/loop{index}", key_server.url(f"/loop{index + 1}"))
    looping = start_canopy(start_server, ca, GOOGLE, key_server.url("/loop0"), tmp_path)
    await wait_for_log(looping, "more than 3 redirects")


async def test_the_key_server_certificate_must_verify(start_server, ca, key_server, keys, tmp_path):
    """Without the test CA the server's certificate is not trusted (the system store does not know it)."""
    key_server.publish("/certs", certificate_map(keys[0]))
    canopy = start_server("--log-level", "info", "--config", str(config_file(tmp_path, keysMinRefreshSeconds=0)),
                          *GOOGLE.flags(key_server.url("/certs")))
    await wait_for_log(canopy, "auth.keys_fetch_failed")
    assert "certificate" in canopy.log_path.read_text()
    assert (await auth(canopy.port, keys[0].sign(GOOGLE.claims("alice"))))[0] == "invalid_token"


async def test_a_silent_key_server_times_out(start_server, ca, keys, tmp_path):
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        url = f"https://127.0.0.1:{silent.getsockname()[1]}/certs"
        config = tmp_path / "silent.json"
        config.write_text(json.dumps({"auth": {"keysMinRefreshSeconds": 0, "keysFetchTimeoutSeconds": 1}}))
        canopy = start_server("--log-level", "info", "--auth-keys-ca-file", str(ca.ca_path), "--config",
                              str(config), *GOOGLE.flags(url))
        await wait_for_log(canopy, "timed out while in the TLS handshake", timeout=8)
        started = time.monotonic()
        async with Clients(canopy.port) as clients:
            client = await clients.connect("auth")
            assert (await client.put("/meanwhile", 1)).ok, "the event loops are not held by the fetch"
            answer = await client.auth(keys[0].sign(GOOGLE.claims("alice")), timeout=10)
            assert answer.status == "invalid_token"
        assert time.monotonic() - started < 5, "a token waits at most the fetch timeout (plus a second)"
    finally:
        silent.close()


def test_settings_from_the_environment_and_the_file(tmp_path):
    import os
    import subprocess
    from conftest import canopy_binary

    def serve(*flags: str, env: dict | None = None) -> str:
        result = subprocess.run([str(canopy_binary()), "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
                                 *flags], cwd=tmp_path, capture_output=True, text=True, timeout=20,
                                env={**os.environ, **(env or {})})
        assert result.returncode != 0
        return result.stdout + result.stderr

    assert "is not a Firebase project id" in serve(env={"CANOPY_AUTH_FIREBASE_PROJECT_ID": "Bad Id"})
    assert "auth.jwksURL must be an https:// URL" in serve(env={"CANOPY_AUTH_JWKS_URL": "ftp://x"})
    assert "auth.keysFetchTimeoutSeconds must be" in serve(env={"CANOPY_AUTH_KEYS_FETCH_TIMEOUT_SECONDS": "0"})
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"appCheck": {"projectNumber": 123456, "mode": "strict"}}))
    assert "appCheck.mode must be one of off, monitor, enforce" in serve("--config", str(config))
