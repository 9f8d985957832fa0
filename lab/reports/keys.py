"""This lab instance's Ed25519 report-signing key (LAB_SIGNING_KEY / LAB_SIGNING_KEY_FILE when
set, else kept in LAB_STATE_DIR, outside the repository), and the public keys the lab's
configuration trusts (LAB_TRUSTED_KEYS)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
)
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from lab.config import signing_key_from_pem
from lab.reports.signing import KeyProblem, public_key_from_pem

KEY_FILENAME = "lab-ed25519.pem"


def key_path() -> Path:
    return Path(settings.LAB_STATE_DIR) / KEY_FILENAME


def _create(path: Path) -> None:
    """Write a new key readable by its owner only; a concurrent creator's key wins, not ours."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    pem = Ed25519PrivateKey.generate().private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
    )
    draft = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
        # link() refuses to replace, so the file appears whole and only once.
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        draft.unlink(missing_ok=True)


@functools.cache
def _load(path: Path) -> Ed25519PrivateKey:
    if not path.exists():
        _create(path)
    return signing_key_from_pem(path.read_bytes(), str(path))


def lab_private_key() -> Ed25519PrivateKey:
    """The configured signing key, else this instance's own, generated on first use."""
    configured: Ed25519PrivateKey | None = settings.LAB_SIGNING_KEY
    return configured if configured is not None else _load(key_path())


def lab_public_key() -> Ed25519PublicKey:
    return lab_private_key().public_key()


@functools.cache
def _trusted(paths: tuple[str, ...]) -> tuple[Ed25519PublicKey, ...]:
    keys = []
    for path in paths:
        try:
            keys.append(public_key_from_pem(Path(path).read_bytes()))
        except (OSError, KeyProblem) as error:
            raise ImproperlyConfigured(f"LAB_TRUSTED_KEYS: {path} is unusable: {error}") from None
    return tuple(keys)


def configured_trusted_keys() -> tuple[Ed25519PublicKey, ...]:
    """The keys every reader of this lab trusts, from PEM files named in LAB_TRUSTED_KEYS."""
    return _trusted(tuple(settings.LAB_TRUSTED_KEYS))
