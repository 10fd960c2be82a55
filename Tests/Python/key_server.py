"""A local HTTPS server publishing signing keys the way Google does, for the Firebase Auth and App Check tests.

``LocalCA`` is the tests' own certificate authority (made with ``cryptography``); the server's certificate names
127.0.0.1 and localhost, so the server under test verifies it with ``--auth-keys-ca-file`` pointing at the CA.
``KeyServer`` serves documents over ``http.server`` + ``ssl`` on a loopback port from a thread: Google-style X.509
certificate maps (``{"kid": "-----BEGIN CERTIFICATE-----..."}``) and JWKS documents, each with a
``Cache-Control: public, max-age=N`` header, and counts the requests per path. Documents can be replaced while it
runs (a key rotation), and the server can be stopped and started again on the same port (the key server going down).
"""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import json
import ssl
import threading
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

import tokens


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class LocalCA:
    """A CA certificate and a server certificate for 127.0.0.1/localhost, written as PEM files into ``directory``."""

    def __init__(self, directory: Path):
        now = datetime.datetime.now(datetime.timezone.utc)
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(_name("Canopy test CA"))
            .issuer_name(_name("Canopy test CA"))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False),
                critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        server_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        server_certificate = (
            x509.CertificateBuilder()
            .subject_name(_name("127.0.0.1"))
            .issuer_name(self.certificate.subject)
            .public_key(server_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        directory.mkdir(parents=True, exist_ok=True)
        self.ca_path = directory / "ca.pem"
        self.ca_path.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))
        self.server_certificate_path = directory / "server.pem"
        self.server_certificate_path.write_bytes(server_certificate.public_bytes(serialization.Encoding.PEM))
        self.server_key_path = directory / "server.key"
        self.server_key_path.write_bytes(server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def certificate_pem(pair: tokens.KeyPair, subject: str = "securetoken.system.gserviceaccount.com") -> str:
    """A self-signed certificate of ``pair``'s public key, as Google publishes its ID-token keys."""
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(subject))
        .public_key(pair.private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=14))
        .sign(pair.private, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode("ascii")


def certificate_map(*pairs: tokens.KeyPair) -> dict:
    """Google's format: key id to PEM certificate."""
    return {pair.kid: certificate_pem(pair) for pair in pairs}


def jwks(*pairs: tokens.KeyPair) -> dict:
    return {"keys": [pair.jwk() for pair in pairs]}


class KeyServer:
    """Serves ``documents`` (path -> JSON-able object) over HTTPS with ``Cache-Control: max-age``."""

    def __init__(self, ca: LocalCA, max_age: int = 3600):
        self.ca = ca
        self.max_age = max_age
        self.documents: dict[str, object] = {}
        self.redirects: dict[str, str] = {}
        self.status: dict[str, int] = {}
        self.requests: dict[str, int] = {}
        self.lock = threading.Lock()
        self.port = 0
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def publish(self, path: str, document: object, *, status: int = 200) -> None:
        with self.lock:
            self.documents[path] = document
            self.status[path] = status

    def redirect(self, path: str, location: str) -> None:
        with self.lock:
            self.redirects[path] = location

    def count(self, path: str) -> int:
        with self.lock:
            return self.requests.get(path, 0)

    def start(self) -> "KeyServer":
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 (http.server's naming)
                path = self.path.split("?")[0]
                with owner.lock:
                    owner.requests[path] = owner.requests.get(path, 0) + 1
                    document = owner.documents.get(path)
                    status = owner.status.get(path, 200)
                    location = owner.redirects.get(path)
                if location is not None:
                    self.send_response(302)
                    self.send_header("Location", location)
                    self.send_header("Content-Length", "0")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    return
                if document is None:
                    status, body = 404, b'{"error":"not found"}'
                else:
                    body = document if isinstance(document, bytes) else json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", f"public, max-age={owner.max_age}, must-revalidate, no-transform")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca.server_certificate_path, self.ca.server_key_path)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Goes down: the port refuses connections until ``start`` (same port) again."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
