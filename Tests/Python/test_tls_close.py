"""TLS connections end with a close_notify alert (RFC 8446 §6.1): a real client (Python `ssl`, ragged EOFs not
suppressed) sees the end of the data as a clean TLS close, never as a truncation, whether the server closes after
a response or after a WebSocket close."""

from __future__ import annotations

import socket
import ssl
import subprocess

import pytest


@pytest.fixture
def tls_server(start_server, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    port_file = tmp_path / "tls-port"
    server = start_server("--tls-cert", str(cert), "--tls-key", str(key), "--tls-port", "0",
                          "--tls-port-file", str(port_file))
    server.tls_port = int(port_file.read_text())
    return server


def connect(port: int) -> ssl.SSLSocket:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return context.wrap_socket(raw, server_hostname="127.0.0.1", suppress_ragged_eofs=False)


def read_to_the_end(connection: ssl.SSLSocket) -> bytes:
    """Everything until the TLS session ends; raises ssl.SSLEOFError if the TCP stream ends without close_notify."""
    received = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            return received
        received += chunk


def test_a_response_with_connection_close_ends_with_close_notify(tls_server):
    with connect(tls_server.tls_port) as connection:
        connection.sendall(b"GET /.health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = read_to_the_end(connection)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"status":"ok"}'), answer


def test_a_websocket_closed_by_the_server_ends_with_close_notify(tls_server):
    """A WebSocket upgrade with a bad frame (unmasked, which clients must mask): the server closes with 1002, and
    the TLS session ends cleanly after the close frame."""
    with connect(tls_server.tls_port) as connection:
        connection.sendall(b"GET /.ws?v=5&ns=tls HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                           b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                           b"Sec-WebSocket-Version: 13\r\n\r\n")
        connection.sendall(b"\x81\x02hi")  # unmasked text frame: a protocol error
        received = read_to_the_end(connection)
    assert received.startswith(b"HTTP/1.1 101"), received[:200]
    assert b"\x88" in received, "no close frame before the end"
