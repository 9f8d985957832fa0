from __future__ import annotations

from lab.reports.canonical import body_digest


def test_the_body_digest_leaves_out_the_integrity_and_signature_members():
    body = {"schema_version": 1, "events": []}
    sealed = {**body, "integrity": {"body_digest": "x"}, "signature": None}
    assert body_digest(sealed) == body_digest(body)
    assert body_digest({**body, "events": [1]}) != body_digest(body)
