"""App Check (issue 25): tokens verified with Firebase's App Check JWKS (a local HTTPS stand-in), in monitor and
enforce mode, on the wire (`appcheck`, the `ac` URL parameter) and over REST (`X-Firebase-AppCheck`).

App Check tokens are RS256 JWTs naming a key of the App Check JWKS, with `iss`
`https://firebaseappcheck.googleapis.com/<project number>`, `aud` `["projects/<number>", "projects/<id>"]` and the
app id as `sub`. Monitor mode counts and logs; enforce mode refuses data access without a valid token
(`permission_denied`, REST 401) and answers a refused `appcheck` with `invalid_token`; `apc` is sent when the
connection's token expires. One test per claim that must be checked.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import tokens
from conftest import Clients, ServerFactory
from firebase_wire import WireClient
from key_server import KeyServer, LocalCA, jwks

NUMBER = "123456789012"
APP_ID = f"1:{NUMBER}:web:0123456789abcdef"


def claims(lifetime: int = 3600, **extra) -> dict:
    now = int(time.time())
    result = {
        "sub": APP_ID,
        "aud": [f"projects/{NUMBER}", f"projects/{tokens.PROJECT}"],
        "provider": "debug",
        "iss": f"https://firebaseappcheck.googleapis.com/{NUMBER}",
        "iat": now,
        "exp": now + lifetime,
        "jti": "x" * 22,
    }
    result.update(extra)
    return result


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> LocalCA:
    return LocalCA(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def app_keys():
    return tokens.KeyPair("RS256", "ac-1"), tokens.KeyPair("RS256", "ac-2")


@pytest.fixture(scope="module")
def key_server(ca, app_keys):
    server = KeyServer(ca).start()
    server.publish("/v1/jwks", jwks(app_keys[0]))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def servers(ca, key_server, tmp_path_factory):
    """An enforcing and a monitoring server (no clock skew, so a token expires when its exp says)."""
    directory = tmp_path_factory.mktemp("config")
    config = directory / "canopy-test.json"
    config.write_text(json.dumps({"auth": {"keysMinRefreshSeconds": 0}}))
    factory = ServerFactory()
    common = ["--log-level", "info", "--auth-keys-ca-file", str(ca.ca_path), "--auth-clock-skew", "0",
              "--config", str(config), "--app-check-project", NUMBER, "--app-check-jwks-url",
              key_server.url("/v1/jwks")]
    started = {
        "enforce": factory(*common, "--app-check-mode", "enforce"),
        "monitor": factory(*common, "--app-check-mode", "monitor"),
    }
    yield started
    factory.finish()


def metrics(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/.metrics", timeout=5).read().decode()
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("canopy_appcheck_"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


async def wait_for_log(server, text: str, timeout: float = 5.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = server.log_path.read_text(errors="replace")
        if text in log:
            return log
        await asyncio.sleep(0.05)
    raise AssertionError(f"{text!r} not in the server log: {server.log_tail()}")


def rest(port: int, method: str = "GET", headers: dict | None = None, query: str = "") -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/appcheck/rest.json?ns=appcheck{query}",
                                     method=method, headers=headers or {},
                                     data=b'"x"' if method == "PUT" else None)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


# -- enforce ----------------------------------------------------------------------------------------------------------


async def test_enforce_refuses_data_access_without_a_token(servers):
    port = servers["enforce"].port
    before = metrics(port)
    async with Clients(port) as clients:
        client = await clients.connect("appcheck")
        assert (await client.put("/a", 1)).status == "permission_denied"
        assert (await client.merge("/a", {"b": 1})).status == "permission_denied"
        assert (await client.get("/a")).status == "permission_denied"
        listen = await client.request("q", {"p": "/a", "h": ""})
        assert listen.status == "permission_denied"
        assert (await client.request("o", {"p": "/a", "d": 1})).status == "permission_denied"
        # Requests that touch no data still work.
        assert (await client.request("s", {"c": {"sdk.js.10-4-0": 1}})).ok
    after = metrics(port)
    assert after["canopy_appcheck_refused_total"] >= before["canopy_appcheck_refused_total"] + 5
    assert after["canopy_appcheck_missing_total"] >= before["canopy_appcheck_missing_total"] + 5


async def test_enforce_admits_a_valid_token_sent_with_appcheck(servers, app_keys):
    port = servers["enforce"].port
    async with Clients(port) as clients:
        client = await clients.connect("appcheck")
        answer = await client.request("appcheck", {"token": app_keys[0].sign(claims())})
        assert answer.ok, answer.inbound.text
        assert (await client.put("/b", 1)).ok
        assert (await client.get("/b")).data == 1
        # unappeck (the JS SDK's spelling) drops it again.
        assert (await client.request("unappeck", {})).ok
        assert (await client.put("/b", 2)).status == "permission_denied"


async def test_enforce_admits_a_valid_token_in_the_url(servers, app_keys):
    port = servers["enforce"].port
    token = app_keys[0].sign(claims())
    client = await WireClient.connect(port, params=f"v=5&ac={token}&ns=appcheck")
    try:
        assert (await client.put("/c", 1)).ok
    finally:
        await client.aclose()


async def test_enforce_admits_a_valid_token_in_the_header(servers, app_keys):
    port = servers["enforce"].port
    client = await WireClient.connect(port, "appcheck", headers={"X-Firebase-AppCheck": app_keys[0].sign(claims())})
    try:
        assert (await client.put("/c", 2)).ok
    finally:
        await client.aclose()


async def test_enforce_admits_a_valid_token_in_the_long_poll_url(servers, app_keys):
    """Browsers on long polling send the token as `ac` in the start request, as on `/.ws`."""
    from longpoll_client import LongPollSession

    port = servers["enforce"].port

    def open_session(extra: list) -> LongPollSession:
        session = LongPollSession(port, "appcheck")
        session.start(extra=extra)
        session.start_polling()
        return session

    loop = asyncio.get_running_loop()
    with_token = await loop.run_in_executor(None, open_session, [("ac", app_keys[0].sign(claims()))])
    without = await loop.run_in_executor(None, open_session, [])
    try:
        assert (await with_token.aput("/lp", 1)).ok
        assert (await without.aput("/lp", 2)).status == "permission_denied"
    finally:
        for session in (with_token, without):
            await session.run(session.close)


async def test_enforce_exempts_the_admin_credential(servers):
    async with Clients(servers["enforce"].port) as clients:
        admin = await clients.connect("appcheck")
        assert (await admin.auth("owner", "gauth")).ok
        assert (await admin.put("/admin", 1)).ok


async def test_enforce_answers_an_invalid_token_with_invalid_token(servers, app_keys):
    port = servers["enforce"].port
    async with Clients(port) as clients:
        client = await clients.connect("appcheck")
        answer = await client.request("appcheck", {"token": app_keys[0].sign(claims(iss="https://example.test"))})
        assert answer.status == "invalid_token" and answer.data == "Invalid appcheck token", answer.inbound.text
        assert (await client.put("/d", 1)).status == "permission_denied"


async def test_apc_is_sent_when_the_token_expires(servers, app_keys):
    port = servers["enforce"].port
    before = metrics(port)["canopy_appcheck_revoked_total"]
    async with Clients(port) as clients:
        client = await clients.connect("appcheck")
        assert (await client.request("appcheck", {"token": app_keys[0].sign(claims(lifetime=2))})).ok
        view = await client.listen("/e")
        assert (await client.put("/e", 1)).ok
        revoked = await client.wait_for(lambda inbound: inbound.action == "apc", timeout=6)
        assert revoked.payload == {"s": "expired_token", "d": "App Check token is expired."}
        # The connection stays (the SDKs refresh the token without reconnecting); new data requests wait for it.
        assert (await client.put("/e", 2)).status == "permission_denied"
        assert (await client.request("appcheck", {"token": app_keys[0].sign(claims())})).ok
        assert (await client.put("/e", 3)).ok
        assert view is not None
    assert metrics(port)["canopy_appcheck_revoked_total"] == before + 1


async def test_a_rotated_app_check_key_works_on_the_first_try(servers, key_server, app_keys):
    key_server.publish("/v1/jwks", jwks(*app_keys))
    try:
        async with Clients(servers["enforce"].port) as clients:
            client = await clients.connect("appcheck")
            token = app_keys[1].sign(claims())
            # Sent right behind the appcheck, as the JS SDK does: held until the keys are fetched, then admitted.
            check = await client.send_request("appcheck", {"token": token})
            write = await client.send_request("p", {"p": "/rotated", "d": 1})
            assert (await client.wait_response(check)).ok
            assert (await client.wait_response(write)).ok
    finally:
        key_server.publish("/v1/jwks", jwks(app_keys[0]))


def test_rest_enforce(servers, app_keys):
    port = servers["enforce"].port
    assert rest(port) == 401
    assert rest(port, "PUT") == 401
    token = app_keys[0].sign(claims())
    assert rest(port, headers={"X-Firebase-AppCheck": token}) == 200
    assert rest(port, "PUT", headers={"X-Firebase-AppCheck": token}) == 200
    assert rest(port, query=f"&ac={token}") == 200
    assert rest(port, headers={"X-Firebase-AppCheck": app_keys[0].sign(claims(lifetime=-10))}) == 401
    assert rest(port, "PUT", headers={"Authorization": "Bearer owner"}) == 200


# -- one test per claim --------------------------------------------------------------------------------------------------


def forge(case: str, app_keys) -> str:
    now = int(time.time())
    key = app_keys[0]
    if case == "wrong iss":
        return key.sign(claims(iss="https://firebaseappcheck.googleapis.com/999999999999"))
    if case == "wrong aud":
        return key.sign(claims(aud=["projects/999999999999", f"projects/{tokens.PROJECT}"]))
    if case == "aud names only the project id":
        return key.sign(claims(aud=[f"projects/{tokens.PROJECT}"]))
    if case == "missing sub":
        payload = claims()
        del payload["sub"]
        return key.sign(payload)
    if case == "expired":
        return key.sign(claims(iat=now - 7200, exp=now - 3600))
    if case == "future iat":
        return key.sign(claims(iat=now + 3600, exp=now + 7200))
    if case == "missing exp":
        payload = claims()
        del payload["exp"]
        return key.sign(payload)
    if case == "HS256":
        return tokens.hs256("an-app-check-secret-nobody-configured-000", claims())
    if case == "alg none":
        return tokens.unsigned(claims())
    if case == "no kid":
        return key.sign(claims(), with_kid=False)
    if case == "unknown kid":
        return tokens.KeyPair("RS256", "ac-unknown").sign(claims())
    if case == "wrong key":
        return tokens.KeyPair("RS256", "x").sign(claims(), kid=key.kid)
    raise ValueError(case)


CLAIM_CASES = [
    ("wrong iss", "invalid_token", "the iss claim does not name the configured issuer"),
    ("wrong aud", "invalid_token", "the aud claim does not name the configured audience"),
    ("aud names only the project id", "invalid_token", "the aud claim does not name the configured audience"),
    ("missing sub", "invalid_token", "the sub claim is missing or not a string"),
    ("expired", "expired_token", "the token expired (exp)"),
    ("future iat", "invalid_token", "the token was issued in the future (iat)"),
    ("missing exp", "invalid_token", "the exp claim is missing"),
    ("HS256", "invalid_token", "the token's alg is HS256; App Check tokens are signed with RS256 only"),
    ("alg none", "invalid_token", "unsigned tokens (alg none) are not accepted"),
    ("no kid", "invalid_token", "the header names no key (kid), which App Check tokens must"),
    ("unknown kid", "invalid_token", "no current RS256 key has the token's kid \"ac-unknown\""),
    ("wrong key", "invalid_token", "the signature does not verify"),
]


@pytest.mark.parametrize("case,status,reason", CLAIM_CASES, ids=[case[0] for case in CLAIM_CASES])
async def test_each_claim_is_checked(servers, app_keys, case, status, reason):
    port = servers["enforce"].port
    async with Clients(port) as clients:
        client = await clients.connect("appcheck")
        answer = await client.request("appcheck", {"token": forge(case, app_keys)})
        assert answer.status == status, answer.inbound.text
        assert (await client.put("/claims", 1)).status == "permission_denied"
    log = await wait_for_log(servers["enforce"], reason)
    assert "appcheck.rejected" in log


# -- monitor ---------------------------------------------------------------------------------------------------------


async def test_monitor_counts_and_refuses_nothing(servers, app_keys):
    port = servers["monitor"].port
    before = metrics(port)
    async with Clients(port) as clients:
        missing = await clients.connect("appcheck")
        assert (await missing.put("/m", 1)).ok
        assert (await missing.get("/m")).ok
        invalid = await clients.connect("appcheck")
        # Monitor mode changes nothing for the client: even a refused token is answered ok.
        assert (await invalid.request("appcheck", {"token": forge("wrong aud", app_keys)})).ok
        assert (await invalid.put("/m", 2)).ok
        valid = await clients.connect("appcheck")
        assert (await valid.request("appcheck", {"token": app_keys[0].sign(claims())})).ok
        assert (await valid.put("/m", 3)).ok
    assert rest(port) == 200
    after = metrics(port)
    assert after["canopy_appcheck_valid_total"] == before["canopy_appcheck_valid_total"] + 1
    assert after["canopy_appcheck_invalid_total"] == before["canopy_appcheck_invalid_total"] + 1
    assert after["canopy_appcheck_missing_total"] >= before["canopy_appcheck_missing_total"] + 4
    assert after["canopy_appcheck_refused_total"] == 0
    await wait_for_log(servers["monitor"], "appcheck.missing")


async def test_app_check_key_metrics(servers):
    text = urllib.request.urlopen(f"http://127.0.0.1:{servers['monitor'].port}/.metrics", timeout=5).read().decode()
    assert 'canopy_auth_keys{tokens="appcheck"} ' in text
    assert 'canopy_auth_key_fetches_total{tokens="appcheck"} ' in text


def test_off_without_a_project_number(start_server):
    """Without appCheck.projectNumber nothing is checked (the default)."""
    server = start_server()
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.port}/.metrics", timeout=5).read().decode()
    assert "canopy_auth_keys" not in text
    assert rest(server.port, "PUT") == 200
