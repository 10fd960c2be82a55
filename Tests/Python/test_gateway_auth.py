"""auth / gauth / unauth with HS256, RS256 and ES256 tokens, emulator mock tokens, the admin credential, and the
revocation of a token that expires during the connection (wire-protocol.md §6.2, §11 `ac`, §13 examples 1, 12).
"""

import asyncio
import base64
import datetime
import hashlib
import hmac
import json
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

import tokens
from conftest import Clients, ServerFactory

SECRET = "canopy-test-secret-0123456789abcdef"
AUDIENCE = "demo-canopy"
ISSUER = "https://securetoken.google.com/demo-canopy"


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """One server per auth configuration, shared by the module."""
    directory = tmp_path_factory.mktemp("keys")
    rsa = tokens.KeyPair("RS256", "r1")
    ec = tokens.KeyPair("ES256", "e1")
    factory = ServerFactory()
    started = {
        # No leeway, so that a token expiring during a test is revoked at once (the default leeway is 60 s).
        "hs256": factory("--auth-secret", SECRET, "--auth-clock-skew", "0"),
        "pem": factory("--auth-public-keys", str(tokens.write_pem(directory / "rsa.pem", rsa))),
        "pem-ec": factory("--auth-public-keys", str(tokens.write_pem(directory / "ec.pem", ec))),
        "jwks": factory("--auth-public-keys", str(tokens.write_jwks(directory / "keys.json", rsa, ec))),
        "claims": factory("--auth-secret", SECRET, "--auth-audience", AUDIENCE, "--auth-issuer", ISSUER),
        "unsigned": factory("--allow-unsigned-tokens"),
        "admin": factory("--admin-token", "s3cret-admin"),
        "open": factory(),
    }
    yield {"servers": started, "rsa": rsa, "ec": ec, "directory": directory}
    factory.finish()


@pytest.fixture(autouse=True)
def _auth_servers_survive(request):
    yield
    if "servers" in request.fixturenames:
        for name, server in request.getfixturevalue("servers")["servers"].items():
            assert server.alive(), f"server {name} died during this test: {server.log_tail()}"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


async def auth_status(port: int, token: str, action: str = "auth") -> tuple[str, object, str]:
    async with Clients(port) as clients:
        client = await clients.connect("auth")
        response = await client.auth(token, action)
        # Whatever the answer, the connection keeps working (JS closes it itself after a failure).
        assert (await client.put("/after-auth", 1)).ok
        return response.status, response.data, response.inbound.text


async def test_hs256_valid_token_is_accepted(servers):
    port = servers["servers"]["hs256"].port
    status, data, text = await auth_status(port, tokens.hs256(SECRET, tokens.claims("alice")))
    assert status == "ok", text


async def test_hs256_expired_token_gets_expired_token(servers):
    port = servers["servers"]["hs256"].port
    token = tokens.hs256(SECRET, tokens.claims("alice", iat=int(time.time()) - 7200, lifetime=3600))
    status, data, text = await auth_status(port, token)
    assert status == "expired_token" and isinstance(data, str) and data, text


async def test_hs256_wrongly_signed_token_gets_invalid_token(servers):
    port = servers["servers"]["hs256"].port
    status, data, text = await auth_status(port, tokens.hs256("another-secret-entirely-0000000000", tokens.claims()))
    assert status == "invalid_token" and isinstance(data, str), text


@pytest.mark.parametrize("token", [
    "not-a-jwt",
    "a.b.c",
    "",
    "..",
    b64(b'{"alg":"HS256"}') + "." + b64(b"not json") + "." + b64(b"sig"),
    b64(b"not json") + "." + b64(b'{"sub":"x"}') + "." + b64(b"sig"),
    b64(b'{"alg":"HS256","typ":"JWT"}') + "." + b64(b'{"sub":"x","iat":1}') + ".%%%",
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOi...iat...In0.c2lnbmF0dXJl",
])
async def test_malformed_tokens_get_invalid_token(servers, token):
    port = servers["servers"]["hs256"].port
    status, data, text = await auth_status(port, token)
    assert status == "invalid_token", text


async def test_token_issued_in_the_future_is_refused(servers):
    port = servers["servers"]["hs256"].port
    token = tokens.hs256(SECRET, tokens.claims("alice", iat=int(time.time()) + 3600))
    status, _, text = await auth_status(port, token)
    assert status != "ok", text


async def test_token_without_expiry_is_refused(servers):
    """Firebase ID tokens always carry exp; one without it would never expire (and never be revoked with ac)."""
    port = servers["servers"]["hs256"].port
    claims = tokens.claims("alice")
    del claims["exp"]
    status, _, text = await auth_status(port, tokens.hs256(SECRET, claims))
    assert status == "invalid_token", text


async def test_token_with_an_empty_subject_is_refused(servers):
    port = servers["servers"]["hs256"].port
    status, _, text = await auth_status(port, tokens.hs256(SECRET, tokens.claims("")))
    assert status == "invalid_token", text


async def test_unsigned_token_is_refused_without_the_test_mode(servers):
    port = servers["servers"]["hs256"].port
    status, _, text = await auth_status(port, tokens.unsigned(tokens.claims("mallory")))
    assert status == "invalid_token", text


async def test_rs256_with_a_pem_key(servers):
    port = servers["servers"]["pem"].port
    status, _, text = await auth_status(port, servers["rsa"].sign(tokens.claims("alice")))
    assert status == "ok", text
    status, _, text = await auth_status(port, servers["rsa"].sign(tokens.claims("alice"), with_kid=False))
    assert status == "ok", "a PEM key has no kid; a token without kid must verify against it: " + text
    other = tokens.KeyPair("RS256", "r1")
    status, _, text = await auth_status(port, other.sign(tokens.claims("alice")))
    assert status == "invalid_token", text
    expired = servers["rsa"].sign(tokens.claims("alice", iat=int(time.time()) - 7200, lifetime=60))
    status, _, text = await auth_status(port, expired)
    assert status == "expired_token", text


async def test_es256_with_a_pem_key(servers):
    port = servers["servers"]["pem-ec"].port
    status, _, text = await auth_status(port, servers["ec"].sign(tokens.claims("erin")))
    assert status == "ok", text
    status, _, text = await auth_status(port, tokens.KeyPair("ES256", "e1").sign(tokens.claims("erin")))
    assert status == "invalid_token", text


async def test_hs256_signed_with_the_public_key_is_refused_on_an_rs256_server(servers):
    """The classic algorithm confusion: an attacker signs HS256 with the server's public PEM as the secret."""
    port = servers["servers"]["pem"].port
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps(tokens.claims("mallory")).encode())
    pem = servers["rsa"].public_pem().encode()
    signature = b64(hmac.new(pem, f"{header}.{payload}".encode(), hashlib.sha256).digest())
    status, _, text = await auth_status(port, f"{header}.{payload}.{signature}")
    assert status == "invalid_token", text


async def test_rs256_and_es256_with_a_jwks_file(servers):
    port = servers["servers"]["jwks"].port
    for pair in (servers["rsa"], servers["ec"]):
        status, _, text = await auth_status(port, pair.sign(tokens.claims("alice")))
        assert status == "ok", (pair.kind, text)
    status, _, text = await auth_status(port, servers["rsa"].sign(tokens.claims(), kid="unknown"))
    assert status == "invalid_token", text
    status, _, text = await auth_status(port, tokens.KeyPair("ES256", "e1").sign(tokens.claims()))
    assert status == "invalid_token", text


async def test_public_keys_given_as_an_x509_certificate(tmp_path, start_server):
    """Google publishes its token keys as X.509 certificates; a PEM file holding one should work as well."""
    pair = tokens.KeyPair("RS256", "c1")
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "canopy-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(pair.private.public_key()).serial_number(1)
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .sign(pair.private, hashes.SHA256()))
    path = tmp_path / "cert.pem"
    path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    server = start_server("--auth-public-keys", str(path))
    status, _, text = await auth_status(server.port, pair.sign(tokens.claims("carol")))
    assert status == "ok", text


async def test_audience_and_issuer_are_checked_when_configured(servers):
    port = servers["servers"]["claims"].port
    status, _, text = await auth_status(port, tokens.hs256(SECRET, tokens.claims("alice")))
    assert status == "ok", text
    status, _, text = await auth_status(port, tokens.hs256(SECRET, tokens.claims("alice", aud="other-project")))
    assert status == "invalid_token", text
    status, _, text = await auth_status(port, tokens.hs256(SECRET, tokens.claims("alice", iss="https://evil")))
    assert status == "invalid_token", text


async def test_emulator_mock_tokens_in_test_mode(servers):
    port = servers["servers"]["unsigned"].port
    mock = tokens.unsigned(tokens.claims("mock-user", iat=0, lifetime=10**10))
    assert mock.endswith(".")
    status, _, text = await auth_status(port, mock)
    assert status == "ok", text


async def test_owner_is_admin_on_loopback_without_a_configured_admin_token(servers):
    port = servers["servers"]["open"].port
    status, _, text = await auth_status(port, "owner", "gauth")
    assert status == "ok", text


async def test_a_configured_admin_token_replaces_owner(servers):
    port = servers["servers"]["admin"].port
    status, _, text = await auth_status(port, "s3cret-admin", "gauth")
    assert status == "ok", text
    status, _, text = await auth_status(port, "owner", "gauth")
    assert status != "ok", "with an admin token configured, 'owner' must not be an admin credential: " + text


async def test_reauth_and_unauth_on_one_connection(servers):
    port = servers["servers"]["hs256"].port
    async with Clients(port) as clients:
        client = await clients.connect("auth")
        assert (await client.auth(tokens.hs256(SECRET, tokens.claims("alice")))).ok
        assert (await client.auth(tokens.hs256(SECRET, tokens.claims("bob")))).ok
        response = await client.request("unauth", {})
        assert response.inbound.text == '{"t":"d","d":{"r":3,"b":{"s":"ok","d":""}}}'
        assert (await client.auth(tokens.hs256(SECRET, tokens.claims("carol")))).ok


@pytest.mark.timeout(20)
async def test_a_token_expiring_during_the_connection_is_revoked_with_ac(servers):
    port = servers["servers"]["hs256"].port
    async with Clients(port) as clients:
        client = await clients.connect("auth")
        neighbour = await clients.connect("auth")
        assert (await neighbour.auth(tokens.hs256(SECRET, tokens.claims("bob")))).ok
        token = tokens.hs256(SECRET, tokens.claims("alice", lifetime=2))
        assert (await client.auth(token)).ok
        started = time.monotonic()
        revoked = await client.next_push(action="ac", timeout=8)
        assert revoked.payload.get("s") == "expired_token" and isinstance(revoked.payload.get("d"), str), \
            revoked.text
        assert time.monotonic() - started < 6
        await neighbour.sync()
        assert not neighbour.pushes(), "the neighbour's token was revoked too"


async def test_a_token_replaced_before_it_expires_is_not_revoked(servers):
    port = servers["servers"]["hs256"].port
    async with Clients(port) as clients:
        client = await clients.connect("auth")
        assert (await client.auth(tokens.hs256(SECRET, tokens.claims("alice", lifetime=2)))).ok
        assert (await client.auth(tokens.hs256(SECRET, tokens.claims("alice", lifetime=3600)))).ok
        view, _ = await client.listen("/wait")
        # Write something 3.5 s later through another client; by then the first token has expired.
        other = await clients.connect("auth")
        await asyncio.sleep(3.5)
        assert (await other.put("/wait/x", 1)).ok
        await client.sync()
        assert not [p.text for p in client.pushes() if p.action == "ac"], "the replaced token was revoked"


async def test_unauth_before_expiry_means_no_revocation_later(servers):
    port = servers["servers"]["hs256"].port
    async with Clients(port) as clients:
        client = await clients.connect("auth")
        other = await clients.connect("auth")
        assert (await client.auth(tokens.hs256(SECRET, tokens.claims("alice", lifetime=2)))).ok
        assert (await client.request("unauth", {})).ok
        view, _ = await client.listen("/wait2")
        await asyncio.sleep(3.5)
        assert (await other.put("/wait2/x", 1)).ok
        await client.sync()
        assert not [p.text for p in client.pushes() if p.action == "ac"], "a dropped token was revoked"


async def test_the_connection_keeps_working_after_a_revocation(servers):
    port = servers["servers"]["hs256"].port
    async with Clients(port) as clients:
        client = await clients.connect("auth")
        assert (await client.auth(tokens.hs256(SECRET, tokens.claims("alice", lifetime=2)))).ok
        await client.next_push(action="ac", timeout=6)
        assert (await client.put("/after-ac", True)).ok
        assert (await client.auth(tokens.hs256(SECRET, tokens.claims("alice")))).ok


@pytest.mark.parametrize("body", [
    {"cred": "owner", "authvar": {"uid": "impersonated", "role": "worker"}},
    {"cred": "owner", "noauth": True},
])
async def test_admin_sdk_auth_overrides_are_accepted(servers, body):
    """Node Admin's databaseAuthVariableOverride arrives as gauth with authvar, or noauth for a null override."""
    port = servers["servers"]["open"].port
    async with Clients(port) as clients:
        client = await clients.connect("auth")
        response = await client.request("gauth", body)
        assert response.ok, response.inbound.text
