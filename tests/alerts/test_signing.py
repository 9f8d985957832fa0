from __future__ import annotations

import hashlib
import hmac

import pytest

from lab.alerts.signing import SignatureError, signature_header, verify_signature

SECRET = "whsec_test"
BODY = b'{"event":"hallucination_grader.flag"}'
AT = 1_780_000_000


def test_a_header_verifies_against_the_body_it_signed_and_names_its_time():
    header = signature_header(SECRET, BODY, AT)
    expected = hmac.new(SECRET.encode(), f"{AT}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert header == f"t={AT},v1={expected}"
    assert verify_signature(SECRET, BODY, header, now=AT + 5) == AT


@pytest.mark.parametrize(
    ("secret", "body"), [("whsec_other", BODY), (SECRET, BODY.replace(b"flag", b"flog"))]
)
def test_another_secret_or_a_changed_body_is_refused(secret, body):
    with pytest.raises(SignatureError, match="no v1 signature matches"):
        verify_signature(secret, body, signature_header(SECRET, BODY, AT), now=AT)


def test_a_signature_replayed_outside_the_tolerance_is_refused():
    header = signature_header(SECRET, BODY, AT)
    assert verify_signature(SECRET, BODY, header, now=AT + 299, tolerance_s=300) == AT
    with pytest.raises(SignatureError, match="more than 300 s"):
        verify_signature(SECRET, BODY, header, now=AT + 301, tolerance_s=300)


def test_one_matching_signature_among_several_is_enough_while_a_secret_rotates():
    old = signature_header("whsec_old", BODY, AT).split(",")[1]
    header = f"{signature_header(SECRET, BODY, AT)},{old}"
    assert verify_signature("whsec_old", BODY, header, now=AT) == AT


@pytest.mark.parametrize("header", ["", "v1=abc", f"t={AT}", "t=soon,v1=abc"])
def test_a_malformed_header_is_a_clear_signature_error(header):
    with pytest.raises(SignatureError):
        verify_signature(SECRET, BODY, header, now=AT)
