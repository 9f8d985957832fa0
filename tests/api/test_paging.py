"""Limits, cursors and the OpenAPI document of the audit APIs."""

from __future__ import annotations

import base64

import pytest
from django.contrib.staticfiles import finders
from django.utils import timezone

from lab.api.cursor import BadCursor, cursor_decode, cursor_encode
from tests.api.world import World, build

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "/api/agents/front-desk/grounding-citations-audit",
    "/api/agents/front-desk/grader-verdicts",
]
ROLLUP = "/api/agents/grounding-citations-audit"


@pytest.fixture
def world() -> World:
    return build(timezone.now(), copies=5)


def _get(client, world: World, url: str, caller: str = "acme-viewer"):
    return client.get(url, headers=world.header(caller))


@pytest.mark.parametrize("endpoint", [*ENDPOINTS, ROLLUP])
@pytest.mark.parametrize("limit", ["0", "201", "abc", "-1", "1.5", "", "99999999999999999999"])
def test_a_limit_outside_1_to_200_is_a_400_that_says_so(client, world, endpoint, limit):
    response = _get(client, world, f"{endpoint}?limit={limit}", caller="acme-owner")
    assert response.status_code == 400
    body = response.json()
    assert (body["code"], body["detail"]) == ("invalid_limit", "limit must be between 1 and 200")


@pytest.mark.parametrize("days", ["0", "91", "x", "-3"])
def test_rollup_days_outside_1_to_90_is_a_400(client, world, days):
    body = _get(client, world, f"{ROLLUP}?days={days}", caller="acme-owner").json()
    assert (body["status"], body["code"], body["detail"]) == (
        400,
        "invalid_days",
        "days must be between 1 and 90",
    )


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("limit", [1, 7, 50, 200])
def test_pages_cover_every_row_once_newest_first(client, world, endpoint, limit):
    expected = world.ids[("acme", "front-desk")]
    seen: list[int] = []
    url = f"{endpoint}?limit={limit}"
    while True:
        body = _get(client, world, url).json()
        assert len(body["items"]) <= limit
        seen += [row["id"] for row in body["items"]]
        if body["next_cursor"] is None:
            break
        url = f"{endpoint}?limit={limit}&cursor={body['next_cursor']}"
    assert seen == expected
    # the last page is never empty: a page is only promised when a row is left for it
    assert len(expected) % limit == 0 or len(body["items"]) == len(expected) % limit


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize(
    "cursor",
    [
        "not-base64!",
        "AAAA",
        base64.urlsafe_b64encode(b"id:0").decode(),
        base64.urlsafe_b64encode(b"id:-5").decode(),
        base64.urlsafe_b64encode(b"id:1' OR 1=1").decode(),
        base64.urlsafe_b64encode(b"id:" + b"9" * 30).decode(),
        "x" * 65,
        "%00",
    ],
)
def test_a_tampered_cursor_is_a_400(client, world, endpoint, cursor):
    body = _get(client, world, f"{endpoint}?cursor={cursor}").json()
    assert (body["status"], body["code"]) == (400, "invalid_cursor"), body


def test_cursors_round_trip_and_refuse_anything_else():
    assert cursor_decode(cursor_encode(123456)) == 123456
    for bad in (
        "",
        " ",
        "aWQ6",
        "aWQ6MDE",
        base64.urlsafe_b64encode("id:\u0661".encode()).decode(),
    ):
        with pytest.raises(BadCursor):
            cursor_decode(bad)


def test_a_row_says_what_the_audit_record_holds(client, world):
    grounding = _get(client, world, ENDPOINTS[0] + "?limit=200").json()["items"]
    grades = _get(client, world, ENDPOINTS[1] + "?limit=200").json()["items"]
    assert [g["id"] for g in grounding] == [g["id"] for g in grades]
    cited = next(row for row in grounding if row["grounding"]["verdict"] == "ok")
    assert cited["audit_row_ref"] == f"audit_{cited['id']}"
    assert cited["grounding"]["retrieved"][0]["score"] > 0
    assert cited["grounding"]["markers"] == [1] and cited["grounding"]["confidence"] > 0
    assert cited["retrieval"]["chunks"][0]["text"]
    assert cited["constraint_list_version"] == "demo_v1"
    assert {"graded_at", "recorded_at", "spoken_at", "knowledge_base_version"} <= cited.keys()
    unsupported = next(row for row in grades if row["grade"]["verdict"] == "unsupported")
    assert unsupported["grade"]["claim"] and unsupported["grade"]["constraint_ref"]
    assert unsupported["grade"]["rationale"] and unsupported["grade"]["severity"]
    assert unsupported["grade"]["grader_version"] and unsupported["grade"]["category"]
    no_retrieval = next(row for row in grounding if row["retrieval"] is None)
    assert no_retrieval["grounding"]["confidence"] is None


def test_the_openapi_document_lists_every_endpoint_with_its_errors(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    spec = response.json()
    assert spec["openapi"].startswith("3.")
    paths = spec["paths"]
    assert set(paths) >= {ROLLUP, *(e.replace("front-desk", "{agent}") for e in ENDPOINTS)}
    for operation in (path["get"] for path in paths.values()):
        assert {"200", "400", "401", "403", "404"} <= set(operation["responses"])
        limit = next(p for p in operation["parameters"] if p["name"] == "limit")
        assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 200)
    schemes = spec["components"]["securitySchemes"]
    assert any(s.get("scheme") == "bearer" for s in schemes.values())
    assert "Problem" in spec["components"]["schemas"]


def test_the_docs_page_loads_its_scripts_from_the_labs_own_static_files(client):
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in html and "cdn" not in html.lower()
    for asset in ("swagger-ui-bundle.js", "swagger-ui-init.js", "swagger-ui.css"):
        assert finders.find(f"ninja/{asset}"), asset


def test_the_docs_answer_with_a_trailing_slash_and_name_the_tokens_page(client):
    response = client.get("/api/docs/")
    assert response.status_code == 302 and response["Location"] == "/api/docs"
    assert client.get(response["Location"]).status_code == 200
    description = client.get("/api/openapi.json").json()["info"]["description"]
    assert "/accounts/tokens/" in description and "createtoken" in description
