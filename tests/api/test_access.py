"""Every endpoint as every kind of caller: the status each gets, and never another tenant's rows."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.api.world import World, build

pytestmark = pytest.mark.django_db

GROUNDING = "/api/agents/{agent}/grounding-citations-audit"
GRADER = "/api/agents/{agent}/grader-verdicts"
ROLLUP = "/api/agents/grounding-citations-audit"
ACME_ONLY = "after-hours"  # an agent globex does not have
# caller -> status per endpoint kind, for acme's agent after-hours and the caller's own rollup
EXPECTED = {
    "acme-owner": {"agent": 200, "rollup": 200},
    "acme-admin": {"agent": 200, "rollup": 200},
    "acme-operator": {"agent": 200, "rollup": 403},
    "acme-viewer": {"agent": 200, "rollup": 403},
    "globex-owner": {"agent": 404, "rollup": 200},
    "globex-viewer": {"agent": 404, "rollup": 403},
    "nobody": {"agent": 403, "rollup": 403},
    "anonymous": {"agent": 401, "rollup": 401},
    "bad": {"agent": 401, "rollup": 401},
    "revoked": {"agent": 401, "rollup": 401},
}
CODES = {200: None, 401: "unauthenticated", 403: "forbidden", 404: "not_found"}


@pytest.fixture
def world() -> World:
    return build(timezone.now())


def _acme_ids(world: World) -> set[int]:
    return {i for (tenant, _), ids in world.ids.items() if tenant == "acme" for i in ids}


@pytest.mark.parametrize("caller", sorted(EXPECTED))
def test_every_endpoint_answers_each_caller_as_its_role_allows(client, world, caller):
    expected = EXPECTED[caller]
    for url, kind in (
        (GROUNDING.format(agent=ACME_ONLY), "agent"),
        (GRADER.format(agent=ACME_ONLY), "agent"),
        (ROLLUP, "rollup"),
    ):
        response = client.get(url, headers=world.header(caller))
        status = expected[kind]
        assert response.status_code == status, (caller, url, response.content[:300])
        body = response.json()
        if status == 200:
            continue
        assert response["Content-Type"] == "application/problem+json"
        assert (body["code"], body["status"]) == (CODES[status], status)
        assert body["detail"] and body["title"] and body["type"].endswith(body["code"])
        if status == 401:
            assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("endpoint", [GROUNDING, GRADER])
def test_an_agent_slug_two_tenants_share_shows_each_only_its_own_rows(client, world, endpoint):
    for caller, tenant in (("acme-viewer", "acme"), ("globex-owner", "globex")):
        body = client.get(
            endpoint.format(agent="front-desk") + "?limit=200", headers=world.header(caller)
        ).json()
        assert body["tenant"] == tenant
        assert [row["id"] for row in body["items"]] == world.ids[(tenant, "front-desk")]
    # globex's own agent is not found from acme, and naming globex is not a way in.
    acme = world.header("acme-owner")
    assert client.get(endpoint.format(agent="globex-bot"), headers=acme).status_code == 404
    named = client.get(endpoint.format(agent="front-desk") + "?tenant=globex", headers=acme)
    assert (named.status_code, named.json()["code"]) == (404, "not_found")


def test_the_rollup_counts_only_the_callers_tenant(client, world):
    for caller, tenant in (("acme-owner", "acme"), ("globex-owner", "globex")):
        body = client.get(ROLLUP + "?limit=200", headers=world.header(caller)).json()
        own = {i for (t, _), ids in world.ids.items() if t == tenant for i in ids}
        assert body["tenant"] == tenant
        assert body["totals"]["turns"] == len(own)
        assert {row["id"] for row in body["triage"]} <= own
        assert {a["agent"] for a in body["agents"]} == {a for (t, a) in world.ids if t == tenant}
    assert _acme_ids(world).isdisjoint(
        row["id"]
        for row in client.get(ROLLUP, headers=world.header("globex-owner")).json()["triage"]
    )


def test_a_member_of_two_tenants_names_one(client, world):
    both = world.header("both")
    ambiguous = client.get(GROUNDING.format(agent="front-desk"), headers=both)
    assert ambiguous.status_code == 400
    assert (ambiguous.json()["code"], ambiguous.json()["choices"]) == (
        "ambiguous_tenant",
        ["acme", "globex"],
    )
    chosen = client.get(GROUNDING.format(agent="front-desk") + "?tenant=globex", headers=both)
    assert [r["id"] for r in chosen.json()["items"]] == world.ids[("globex", "front-desk")][:50]
    # owner of acme, viewer of globex: the rollup follows the role in the tenant named
    assert client.get(ROLLUP + "?tenant=acme", headers=both).status_code == 200
    assert client.get(ROLLUP + "?tenant=globex", headers=both).status_code == 403


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "bearer nonsense",
        "Token abc",
        "Bearer " + "x" * 500,
    ],
)
def test_malformed_authorization_headers_are_401_problems(client, world, header):
    response = client.get(ROLLUP, headers={"Authorization": header})
    assert (response.status_code, response.json()["code"]) == (401, "unauthenticated")


def test_unknown_addresses_under_api_are_json_404s(client, world):
    for url in ("/api/", "/api/nothing", "/api/agents/front-desk/", "/api/agents/a/b/c"):
        response = client.get(url, headers=world.header("acme-owner"))
        assert response.status_code == 404, url
        assert response.json()["code"] == "not_found"
    bad_slug = client.get(GRADER.format(agent="NOT%20A%20SLUG"), headers=world.header("acme-owner"))
    assert (bad_slug.status_code, bad_slug.json()["code"]) == (404, "not_found")


def test_a_wrong_method_is_a_405_problem_naming_the_allowed_one(client, world):
    for url in (ROLLUP, GRADER.format(agent="front-desk")):
        response = client.post(url, headers=world.header("acme-owner"))
        assert response.status_code == 405, url
        assert response.json()["code"] == "method_not_allowed"
        assert response["Allow"] == "GET"
