"""Minting test credentials: HS256/RS256/ES256 JWTs (PyJWT + cryptography), emulator mock tokens, key files."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

PROJECT = "demo-canopy"


def claims(uid: str = "alice", *, lifetime: int = 3600, iat: int | None = None, **extra: Any) -> dict:
    """Firebase ID token claims for ``uid``: issued now, expiring after ``lifetime`` seconds."""
    now = int(time.time()) if iat is None else iat
    result = {
        "iss": f"https://securetoken.google.com/{PROJECT}",
        "aud": PROJECT,
        "auth_time": now,
        "user_id": uid,
        "sub": uid,
        "iat": now,
        "exp": now + lifetime,
        "firebase": {"identities": {}, "sign_in_provider": "password"},
    }
    result.update(extra)
    return result


def hs256(secret: str, payload: dict) -> str:
    return jwt.encode(payload, secret, algorithm="HS256")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unsigned(payload: dict) -> str:
    """An emulator mock user token: header ``{"alg":"none","type":"JWT"}`` and an empty signature."""
    header = {"alg": "none", "type": "JWT"}
    return (_b64(json.dumps(header, separators=(",", ":")).encode()) + "."
            + _b64(json.dumps(payload, separators=(",", ":")).encode()) + ".")


class KeyPair:
    """An RSA or EC P-256 key pair that signs RS256/ES256 tokens and writes its public half as PEM or JWK."""

    def __init__(self, kind: str, kid: str):
        self.kind = kind
        self.kid = kid
        if kind == "RS256":
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif kind == "ES256":
            self.private = ec.generate_private_key(ec.SECP256R1())
        else:
            raise ValueError(kind)

    def sign(self, payload: dict, *, kid: str | None = None, with_kid: bool = True) -> str:
        """A token signed with this key; its header names ``kid`` (default: this key's id) unless ``with_kid`` is off."""
        headers = {"kid": kid or self.kid} if with_kid else None
        return jwt.encode(payload, self.private, algorithm=self.kind, headers=headers)

    def public_pem(self) -> str:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")

    def jwk(self) -> dict:
        if self.kind == "RS256":
            key = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key()))
        else:
            key = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.private.public_key()))
        key.update({"kid": self.kid, "alg": self.kind, "use": "sig"})
        return key


def write_pem(path: Path, *pairs: KeyPair) -> Path:
    path.write_text("".join(pair.public_pem() for pair in pairs))
    return path


def write_jwks(path: Path, *pairs: KeyPair) -> Path:
    path.write_text(json.dumps({"keys": [pair.jwk() for pair in pairs]}))
    return path
