"""The upload page: grade a transcript from outside, see each turn, bad input gets a clear 400;
only a signed-in operator (or above) of a tenant stores records in it, never a file's tenant."""

from __future__ import annotations

import html
import json
import random
import re

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from lab.accounts.models import Membership, Tenant
from lab.alerts.models import OutboxMessage
from lab.alerts.outbox import endpoint_create
from lab.alerts.targets import parse_allowed_hosts
from lab.audit.models import AuditRecord
from lab.facts.loader import constraints_from_bytes
from lab.operator.models import FlagCase
from lab.web.grade_views import MAX_TRANSCRIPT_BYTES
from tests.audit.calls import ROOT, SEED_LIST, demo_calls, jsonl, seed_call

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def loopback_receivers(settings):
    """This file's webhook endpoints are on loopback, which alerts reach only when it is named."""
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = parse_allowed_hosts("127.0.0.1")


def member_of(tenant: str, role: str, username: str) -> Client:
    found, _ = Tenant.objects.get_or_create(slug=tenant)
    user = User.objects.create(username=username)
    Membership.objects.create(user=user, tenant=found, role=role)
    signed_in = Client()
    signed_in.force_login(user)
    return signed_in


@pytest.fixture
def client(db) -> Client:
    """Demo's operator: the one who may store graded calls in demo."""
    return member_of("demo", "operator", "demo-operator")


def nothing_landed() -> bool:
    """No audit row, no case and no alert, in any tenant."""
    return not (
        AuditRecord.objects.exists() or FlagCase.objects.exists() or OutboxMessage.objects.exists()
    )


def upload(data: bytes, name: str = "calls.jsonl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def post(client: Client, data: bytes, **fields: object):
    return client.post("/grade/", {"transcript": upload(data), "tenant": "demo", **fields})


def turns_shown(page: str) -> list[tuple[str, str]]:
    """(verdict, grounding) of every turn card, in page order."""
    return re.findall(
        r'class="graded-turn[^"]*" id="turn-\d+" data-verdict="(\w+)" '
        r'data-grounding="(\w+)"',
        page,
    )


def test_the_form_offers_the_tenants_and_a_constraint_list_upload(client):
    page = client.get("/grade/").content.decode()
    assert '<option value="demo"' in page and "demo_v1" in page
    assert 'name="transcript"' in page and 'name="constraints"' in page
    assert 'name="csrfmiddlewaretoken"' in page


def test_an_upload_shows_each_turns_grade_grounding_claim_and_cited_chunks(client):
    lines, expected = demo_calls()
    response = post(client, jsonl(lines))
    assert response.status_code == 200
    page = response.content.decode()
    assert turns_shown(page) == [(e.verdict, e.grounding) for e in expected]
    assert 'class="badge grade unsupported">unsupported<' in page
    assert 'class="badge grounding no_marker">no_marker<' in page
    # The wrong wheel-truing price: the claim, the constraint checked and why.
    assert "wheel truing price $45.00" in page and "<code>px_wheel_true</code>" in page
    assert "conflicts with the listed wheel truing price of $35.00" in page
    assert (
        '<li class="chunk cited"><span class="marker">[KB-1]</span> <code>doc-px_flat_repair'
        in page
    )
    assert "[KB-5] (past a window of 2)" in page
    assert AuditRecord.objects.filter(channel="imported").count() == len(expected)


def test_an_uploaded_constraint_list_in_the_seeds_shape_is_graded_and_nothing_stored(client):
    lines, expected = seed_call()
    listing = upload(json.dumps(SEED_LIST).encode(), "list.json")
    response = post(client, jsonl(lines), source="upload", constraints=listing)
    assert response.status_code == 200
    assert turns_shown(response.content.decode()) == [(e.verdict, e.grounding) for e in expected]
    assert 'id="grade-not-stored"' in response.content.decode()
    assert nothing_landed()


def demo_list_naming(tenant: str) -> SimpleUploadedFile:
    fixture = json.loads((ROOT / "fixtures" / "tenant-demo.v1.json").read_text())
    return upload(json.dumps({**fixture, "tenant": tenant}).encode(), "list.json")


@pytest.mark.parametrize("who", ["anonymous", "acme-operator", "demo-viewer", "demo-operator"])
def test_a_list_that_names_a_tenant_writes_nothing_into_it_whoever_uploads_it(db, who):
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/hook")
    if who == "anonymous":
        uploader = Client()
    else:
        tenant, role = who.split("-")
        uploader = member_of(tenant, role, who)
    lines, expected = demo_calls()
    response = post(uploader, jsonl(lines), source="upload", constraints=demo_list_naming("demo"))
    assert response.status_code == 200
    # Still graded and shown: the flags are there, on the page only.
    assert turns_shown(response.content.decode()) == [(e.verdict, e.grounding) for e in expected]
    assert nothing_landed()


@pytest.mark.parametrize(
    ("who", "status"),
    [("anonymous", 403), ("acme-owner", 404), ("demo-viewer", 403)],
)
def test_grading_against_a_tenants_list_takes_one_of_its_operators(db, who, status):
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/hook")
    if who == "anonymous":
        uploader = Client()
    else:
        tenant, role = who.split("-")
        uploader = member_of(tenant, role, who)
    response = post(uploader, jsonl(demo_calls()[0]), source="tenant", tenant="demo")
    assert response.status_code == status
    assert "Nothing was stored" in response.content.decode()
    assert nothing_landed()


@pytest.mark.parametrize("role", ["operator", "admin", "owner"])
def test_an_operator_or_above_stores_into_their_tenant_with_its_queue_and_alerts(db, role):
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/hook")
    response = post(member_of("demo", role, f"demo-{role}"), jsonl(demo_calls()[0]))
    assert response.status_code == 200
    stored = set(AuditRecord.objects.values_list("tenant", flat=True))
    assert stored == {"demo"}
    assert FlagCase.objects.filter(tenant="demo").exists() and OutboxMessage.objects.exists()


def test_the_form_offers_only_the_tenants_one_may_store_into(db):
    assert '<option value="demo"' not in Client().get("/grade/").content.decode()
    assert 'id="grade-sign-in"' in Client().get("/grade/").content.decode()
    viewer = member_of("demo", "viewer", "viewer")
    assert '<option value="demo"' not in viewer.get("/grade/").content.decode()


def test_uploading_the_same_file_again_stores_nothing_new(client):
    data = jsonl(demo_calls()[0])
    post(client, data)
    page = post(client, data).content.decode()
    assert "0 new audit records" in page
    assert AuditRecord.objects.count() == len(demo_calls()[1])


@pytest.mark.parametrize(
    ("data", "fields", "words"),
    [
        (
            b'{"call_id": "c", "turn_id": "t", "speaker": "caller", "text": "hi"}\n{oops',
            {},
            "line 2: not a JSON object",
        ),
        (
            b'{"call_id": "c", "turn_id": "t", "speaker": "bot", "text": "hi"}',
            {},
            "line 1: speaker",
        ),
        (
            b'{"call_id": "c", "turn_id": "t", "speaker": "agent", "text": "hi", '
            b'"retrieval": [{"id": "a", "text": "x", "score": "high"}]}',
            {},
            "line 1: retrieval[0].score",
        ),
        (b"", {}, "no agent turns"),
        (b"x" * (MAX_TRANSCRIPT_BYTES + 1), {}, "over the limit of 2,097,152 bytes"),
        (jsonl(demo_calls()[0]), {"version": "demo_v9"}, "has no version 9"),
        (jsonl(demo_calls()[0]), {"agent": "Not A Slug"}, "not an agent slug"),
        (jsonl(demo_calls()[0]), {"source": "upload"}, "No constraint list was uploaded"),
        (jsonl(demo_calls()[0]), {"source": "telepathy"}, "source"),
    ],
)
def test_bad_uploads_are_a_400_that_says_what_is_wrong_and_store_nothing(
    client, data, fields, words
):
    response = post(client, data, **fields)
    assert response.status_code == 400
    assert words in response.content.decode().replace("&#x27;", "'")
    assert "Nothing was stored" in response.content.decode()
    assert AuditRecord.objects.count() == 0


def test_a_tenant_without_a_list_is_a_400(db):
    response = post(member_of("nobody", "owner", "nobody-owner"), b"x", tenant="nobody")
    assert response.status_code == 400
    assert "no constraint list for tenant" in response.content.decode().replace("&#x27;", "'")


def test_a_bad_constraint_list_upload_is_a_400_with_the_path(client):
    broken = upload(json.dumps({**SEED_LIST, "hours": {"sat": "15:00-09:00"}}).encode(), "l.json")
    response = post(client, jsonl(seed_call()[0]), source="upload", constraints=broken)
    assert response.status_code == 400 and "hours.sat" in response.content.decode()
    response = post(client, jsonl(seed_call()[0]), source="upload", constraints=upload(b"\xff"))
    assert response.status_code == 400 and "not UTF-8" in response.content.decode()


def test_no_transcript_is_a_400(client):
    response = client.post("/grade/", {"tenant": "demo"})
    assert response.status_code == 400 and "No transcript was uploaded" in response.content.decode()


def test_random_bytes_are_never_a_500(client):
    rng = random.Random(7)
    good = jsonl(demo_calls()[0])
    for _ in range(25):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        assert post(client, bytes(data)).status_code in (200, 400)


def test_a_post_without_the_csrf_token_is_refused():
    response = Client(enforce_csrf_checks=True).post(
        "/grade/", {"transcript": upload(jsonl(demo_calls()[0])), "tenant": "demo"}
    )
    assert response.status_code == 403
    assert AuditRecord.objects.count() == 0


def test_the_page_needs_no_inline_script_or_style(client):
    for page in (client.get("/grade/"), post(client, jsonl(demo_calls()[0]))):
        html = page.content.decode()
        assert not re.search(r"<script(?![^>]*\bsrc=)", html)
        assert "<style" not in html and " style=" not in html
        assert not re.search(r"\son[a-z]+=", html)


def _pre(page: str, element_id: str) -> str:
    found = re.search(rf'<pre class="format" id="{element_id}">(.*?)</pre>', page, re.S)
    assert found, element_id
    return html.unescape(found.group(1))


def test_the_page_shows_both_list_shapes_and_each_example_loads_as_shown(client):
    page = client.get("/grade/").content.decode()
    shape = page.split('id="list-shape"')[1].split("</section>")[0]
    for field in ("services", "hours", "policies", "capabilities", "promotions", "price_list"):
        assert f"<code>{field}</code>" in shape, field
    assert "<code>book_appointment</code>" in shape and "<code>take_payment</code>" in shape
    lab_list = constraints_from_bytes(_pre(page, "lab-shape").encode())
    assert lab_list.version == "demo_v1" and lab_list.services
    seed_list = constraints_from_bytes(_pre(page, "seed-shape").encode())
    assert seed_list.version.startswith("seed_") and seed_list.promotions


def test_every_example_list_in_fixtures_is_linked_and_downloads(client):
    page = client.get("/grade/").content.decode()
    links = re.findall(r'href="(/grade/examples/([^"]+))" download><code>fixtures/\2</code>', page)
    assert ("/grade/examples/tenant-demo.v1.json", "tenant-demo.v1.json") in links
    assert not any(name in ("calendar.json", "ledger.json") for _, name in links)
    for href, name in links:
        response = client.get(href)
        assert response.status_code == 200 and name in response["Content-Disposition"]
        assert constraints_from_bytes(response.content).business
    for bad in ("calendar.json", "..%2Fpyproject.toml", "nope.json"):
        assert client.get(f"/grade/examples/{bad}").status_code == 404


def test_a_refused_list_names_the_field_what_was_wrong_and_an_accepted_value(client):
    guessed = {**SEED_LIST, "hours": {"sat": "15:00-09:00"}}
    listing = upload(json.dumps(guessed).encode(), "guess.json")
    response = post(client, jsonl(seed_call()[0]), source="upload", constraints=listing)
    page = response.content.decode()
    assert response.status_code == 400
    error = page.split('id="grade-error"')[1].split("</div>")[0]
    assert '<code id="list-error-field">hours.sat</code>' in error
    example = json.loads(_pre(page, "list-error-example"))
    assert set(example) == {"hours"} and example["hours"]["monday"]["opens"] == "08:30"
    assert 'href="#list-shape"' in error
