"""The origin check: who signed exactly this body, and whether the reader trusts that key.

Pure: no Django, no I/O; the caller passes this lab's key and the keys the reader trusts.
"""

from __future__ import annotations

from collections.abc import Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from lab.reports.findings import Finding
from lab.reports.results import Check, CheckResult, Origin, short
from lab.reports.schema import Report
from lab.reports.signing import (
    ORIGIN_DOES_NOT_PROVE,
    ORIGIN_PROVES,
    KeyProblem,
    key_id,
    public_key_from_pem,
    public_key_pem,
    raw_public_key,
    signature_bytes,
    signature_verifies,
)


def _verifies(key: Ed25519PublicKey | None, signature: bytes, digest: str) -> bool:
    return key is not None and signature_verifies(key, signature, digest)


def _same_key(a: Ed25519PublicKey, b: Ed25519PublicKey | None) -> bool:
    return b is not None and raw_public_key(a) == raw_public_key(b)


def check_origin(
    report: Report,
    recomputed_digest: str | Exception,
    *,
    lab_key: Ed25519PublicKey | None,
    trusted_keys: Sequence[Ed25519PublicKey] = (),
) -> tuple[CheckResult, Origin]:
    """Who signed exactly this body: this lab, a key the reader trusts, someone else, nobody."""
    signature = report.signature
    unproven = "so nothing shows that this lab or a key you trust wrote it"
    if signature is None:
        finding = Finding(
            "unsigned",
            f"the report carries no signature, {unproven}: anyone can write a consistent report",
            blocking=False,
        )
        return CheckResult(Check.ORIGIN, "unsigned: origin unproven", (finding,)), Origin.ABSENT
    try:
        named = public_key_from_pem(signature.public_key_pem.encode())
    except KeyProblem as error:
        finding = Finding("bad_public_key", f"the public key the report names is unusable: {error}")
        return CheckResult(Check.ORIGIN, "invalid", (finding,)), Origin.INVALID
    findings: list[Finding] = []
    named_id = key_id(named)
    if public_key_pem(named) != signature.public_key_pem:
        # The signature does not cover this block, so only one spelling of the key may pass.
        findings.append(
            Finding("key_not_canonical", "the named public key is not in its canonical PEM form")
        )
    if named_id != signature.key_id:
        findings.append(
            Finding(
                "key_id_mismatch",
                f"key id {short(signature.key_id)} does not name the embedded public key "
                f"(whose id is {short(named_id)})",
            )
        )
    value = signature_bytes(signature.value)
    if value is None or isinstance(recomputed_digest, Exception):
        why = (
            "is not 64 bytes in canonical base64"
            if value is None
            else "covers a body that cannot be read"
        )
        findings.append(Finding("signature_malformed", f"the signature {why}"))
        return CheckResult(Check.ORIGIN, "invalid", tuple(findings)), Origin.INVALID
    if not signature_verifies(named, value, recomputed_digest):
        by_lab = _verifies(lab_key, value, recomputed_digest)
        if by_lab or any(_verifies(key, value, recomputed_digest) for key in trusted_keys):
            whose = "this lab's key" if by_lab else "a key you trust"
            findings.append(
                Finding(
                    "key_swapped",
                    f"the signature does not verify with the key the report names (id "
                    f"{short(named_id)}) but does with {whose}: the named key was swapped",
                )
            )
        else:
            tried = ["the key the report names", "this lab's key" if lab_key else None]
            tried.append("the keys you trust" if trusted_keys else None)
            findings.append(
                Finding(
                    "signature_invalid",
                    f"the signature does not verify over this body with "
                    f"{' or '.join(t for t in tried if t)}: the body or the signature was "
                    "changed after signing",
                )
            )
        return CheckResult(Check.ORIGIN, "invalid", tuple(findings)), Origin.INVALID
    meaning = f"it proves {ORIGIN_PROVES}; it does not prove {ORIGIN_DOES_NOT_PROVE}"
    if _same_key(named, lab_key):
        origin = Origin.VALID_LAB
        summary = f"signed by this lab's key (id {short(named_id)}): {meaning}"
    elif any(_same_key(named, key) for key in trusted_keys):
        origin = Origin.VALID_TRUSTED
        summary = f"signed by a key you trust (id {short(named_id)}): " + meaning.replace(
            "this lab instance's key", "the holder of that key"
        )
    else:
        origin = Origin.UNKNOWN_KEY
        summary = f"signed by an unknown key (id {short(named_id)}): origin unproven"
        findings.append(
            Finding(
                "unknown_key",
                "the key is neither this lab's nor one you trust: the signature proves only "
                f"that whoever holds that key signed these bytes, {unproven}",
                blocking=False,
            )
        )
    if any(f.blocking for f in findings):
        origin, summary = Origin.INVALID, "invalid"
    return CheckResult(Check.ORIGIN, summary, tuple(findings)), origin
