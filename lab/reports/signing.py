"""Ed25519 signatures over a report's body digest, and the key identities reports name.

Pure: no Django, no I/O; the lab's own key lives in lab/reports/keys.py.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_public_key,
)

from lab.reports.schema import Signature

ORIGIN_PROVES = "this lab instance's key signed exactly these bytes"
ORIGIN_DOES_NOT_PROVE = (
    "that the events happened as recorded, or that the run was not fabricated "
    "by whoever holds the key"
)


class KeyProblem(ValueError):
    """A public key that is not an Ed25519 key in PEM form."""


def raw_public_key(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    """SHA-256 hex of the raw 32-byte public key: short enough to compare by eye."""
    return hashlib.sha256(raw_public_key(key)).hexdigest()


def public_key_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo).decode()


def public_key_from_pem(data: bytes) -> Ed25519PublicKey:
    try:
        key = load_pem_public_key(data)
    except (ValueError, TypeError) as error:
        raise KeyProblem(f"not a PEM public key ({error})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyProblem(f"a {type(key).__name__.removeprefix('_')}, not an Ed25519 public key")
    return key


def digest_sign(key: Ed25519PrivateKey, body_digest: str) -> Signature:
    public = key.public_key()
    return Signature(
        algorithm="ed25519",
        key_id=key_id(public),
        public_key_pem=public_key_pem(public),
        value=base64.b64encode(key.sign(bytes.fromhex(body_digest))).decode(),
    )


def signature_bytes(value: str) -> bytes | None:
    """The decoded signature, or None unless value is the one base64 spelling of 64 bytes."""
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    # Other spellings of the same bytes would let the unsigned signature block vary unnoticed.
    if len(decoded) != 64 or base64.b64encode(decoded).decode() != value:
        return None
    return decoded


def signature_verifies(key: Ed25519PublicKey, signature: bytes, body_digest: str) -> bool:
    try:
        key.verify(signature, bytes.fromhex(body_digest))
    except InvalidSignature:
        return False
    return True
