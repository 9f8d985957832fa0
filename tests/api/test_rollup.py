"""The tenant rollup: its numbers against the rows themselves, its page, and its chart."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, date, timedelta

import pytest
from django.utils import timezone

from lab.api.chart import trend_chart
from lab.api.rollup_fold import CountRow, day_window, fold
from lab.api.schemas import TrendDay
from lab.audit.models import AuditRecord
from lab.grading.grounding import GroundingVerdict
from lab.grading.schema import Verdict
from lab.operator.models import FlagCase
from tests.api.world import World, build

ROLLUP = "/api/agents/grounding-citations-audit"


@pytest.fixture
def world(db) -> World:
    return build(timezone.now(), copies=5)


def _expected(tenant: str, days: int) -> dict:
    """The rollup worked out row by row in Python, from what is stored."""
    today = timezone.now().date()
    first = today - timedelta(days=days - 1)
    rows = [
        r
        for r in AuditRecord.objects.filter(tenant=tenant)
        if r.graded_at.astimezone(UTC).date() >= first
    ]
    per_day = Counter(r.graded_at.astimezone(UTC).date() for r in rows)
    return {
        "turns": len(rows),
        "flagged": sum(r.flagged for r in rows),
        "verdicts": Counter(r.verdict for r in rows),
        "grounding": Counter(r.grounding_verdict for r in rows),
        "agents": Counter(r.agent for r in rows),
        "per_day": {d.isoformat(): n for d, n in per_day.items()},
        "flagged_ids": sorted(
            AuditRecord.objects.filter(tenant=tenant, flagged=True).values_list("id", flat=True),
            reverse=True,
        ),
    }


@pytest.mark.parametrize("days", [1, 2, 30])
def test_the_rollup_matches_the_rows_it_counts(client, world, days):
    body = client.get(f"{ROLLUP}?days={days}&limit=200", headers=world.header("acme-admin")).json()
    want = _expected("acme", days)
    totals = body["totals"]
    assert (totals["turns"], totals["flagged"]) == (want["turns"], want["flagged"])
    assert totals["verdicts"] == {v: want["verdicts"][v] for v in Verdict}
    assert totals["grounding"] == {g: want["grounding"][g] for g in GroundingVerdict}
    assert {a["agent"]: a["turns"] for a in body["agents"]} == dict(want["agents"])
    assert sum(a["flagged"] for a in body["agents"]) == want["flagged"]
    assert len(body["trend"]) == days and body["trend"][-1]["day"] == body["until"]
    assert {d["day"]: d["turns"] for d in body["trend"] if d["turns"]} == want["per_day"]
    assert sum(d["no_marker"] for d in body["trend"]) == want["grounding"]["no_marker"]
    assert sum(d["orphan_marker"] for d in body["trend"]) == want["grounding"]["orphan_marker"]
    assert [t["id"] for t in body["triage"]] == want["flagged_ids"][:200]
    assert body["queue_url"] == "/t/acme/queue/"


def test_the_triage_list_is_the_newest_flagged_turns(client, world):
    body = client.get(f"{ROLLUP}?limit=3", headers=world.header("acme-owner")).json()
    assert [t["id"] for t in body["triage"]] == _expected("acme", 30)["flagged_ids"][:3]
    first = body["triage"][0]
    assert first["verdict"] == "unsupported" or first["grounding_verdict"] in (
        "no_marker",
        "orphan_marker",
    )
    assert first["audit_row_ref"] == f"audit_{first['id']}" and first["utterance"]


def test_fold_counts_each_row_once_in_totals_agents_and_days():
    window = day_window(date(2026, 3, 2), 3)
    assert window == [date(2026, 2, 28), date(2026, 3, 1), date(2026, 3, 2)]
    rows = [
        CountRow(window[0], "b", Verdict.SUPPORTED, GroundingVerdict.OK, 5, False),
        CountRow(window[0], "a", Verdict.SUPPORTED, GroundingVerdict.NO_MARKER, 2, True),
        CountRow(window[2], "a", Verdict.UNSUPPORTED, GroundingVerdict.EMPTY_RETRIEVAL, 1, True),
        CountRow(window[2], "a", Verdict.OUT_OF_SCOPE, GroundingVerdict.ORPHAN_MARKER, 4, True),
    ]
    folded = fold(rows, window)
    assert (folded.totals.turns, folded.totals.flagged) == (12, 7)
    assert [(a.agent, a.turns, a.flagged) for a in folded.agents] == [("a", 7, 7), ("b", 5, 0)]
    assert [(d.turns, d.flagged, d.no_marker, d.orphan_marker) for d in folded.trend] == [
        (7, 2, 2, 0),
        (0, 0, 0, 0),
        (5, 5, 0, 4),
    ]
    with pytest.raises(ValueError, match="outside the window"):
        row = CountRow(date(2026, 1, 1), "a", Verdict.SUPPORTED, GroundingVerdict.OK, 1, False)
        fold([row], window)
    with pytest.raises(ValueError, match="between 1 and 90"):
        day_window(date(2026, 3, 2), 91)


def test_the_chart_scales_bars_to_the_busiest_day():
    days = [
        TrendDay(day=date(2026, 3, d), turns=t, flagged=f, no_marker=1, orphan_marker=0)
        for d, t, f in ((1, 10, 5), (2, 0, 0), (3, 20, 2))
    ]
    chart = trend_chart(days, width=300, height=100)
    busiest, empty, half = chart.bars[2], chart.bars[1], chart.bars[0]
    assert busiest.turns_y == chart.baseline - busiest.turns_height
    assert half.turns_height == pytest.approx(busiest.turns_height / 2)
    assert half.flagged_height == pytest.approx(busiest.turns_height / 4)
    assert empty.turns_height == 0 and chart.peak == 20
    assert [label.text for label in chart.y_labels] == ["0", "10", "20"]
    assert len(chart.no_marker_points.split()) == 3
    quiet = trend_chart(
        [TrendDay(day=date(2026, 3, 1), turns=0, flagged=0, no_marker=0, orphan_marker=0)]
    )
    assert quiet.bars[0].turns_height == 0 and [lb.text for lb in quiet.y_labels] == ["0"]


@pytest.mark.parametrize(
    ("caller", "status"),
    [
        ("acme-owner", 200),
        ("acme-admin", 200),
        ("acme-operator", 403),
        ("acme-viewer", 403),
        ("globex-owner", 404),
        ("nobody", 404),
    ],
)
def test_the_rollup_page_is_for_owners_and_admins(client, world, caller, status):
    client.force_login(world.users[caller])
    assert client.get("/t/acme/rollup/").status_code == status


def test_the_rollup_page_draws_the_trend_and_links_the_queue(client, world):
    client.force_login(world.users["acme-owner"])
    page = client.get("/t/acme/rollup/?days=7")
    html = page.content.decode()
    assert page.status_code == 200
    assert "<script" not in html.split("</head>")[1]  # the chart needs no script
    assert len(re.findall(r'<g class="day"', html)) == 7
    turns = {int(n) for n in re.findall(r'data-turns="(\d+)"', html)}
    assert max(turns) > 0
    assert 'data-agent="front-desk"' in html and 'data-agent="after-hours"' in html
    assert 'href="/t/acme/queue/"' in html and 'href="/t/acme/queue/?agent=after-hours"' in html
    flagged = _expected("acme", 7)["flagged_ids"][:20]
    assert re.findall(r'data-ref="audit_(\d+)"', html) == [str(i) for i in flagged]
    assert "globex" not in html


def test_the_rollup_page_refuses_bad_days_and_strangers(client, world):
    assert client.get("/t/acme/rollup/")["Location"].startswith("/accounts/login/")
    client.force_login(world.users["acme-owner"])
    for days in ("0", "91", "abc", "1e3"):
        response = client.get(f"/t/acme/rollup/?days={days}")
        assert response.status_code == 400 and b"between 1 and 90" in response.content
    assert client.get("/t/nosuch/rollup/").status_code == 404


def test_a_viewer_refused_the_rollup_gets_a_page_that_says_why(client, world):
    client.force_login(world.users["acme-viewer"])
    page = client.get("/t/acme/rollup/")
    html = page.content.decode()
    assert page.status_code == 403 and "text/html" in page["Content-Type"]
    assert "The rollup is for the tenant&#x27;s owners and admins." in html
    assert 'id="forbidden"' in html and "Ask an owner" in html


def test_each_triage_turn_links_to_its_case(client, world):
    client.force_login(world.users["acme-owner"])
    html = client.get("/t/acme/rollup/?days=7").content.decode()
    flagged = _expected("acme", 7)["flagged_ids"][:20]
    cases = dict(FlagCase.objects.filter(record_id__in=flagged).values_list("record_id", "id"))
    assert len(cases) == len(flagged)
    links = re.findall(r'class="case-link" href="/t/acme/queue/cases/(\d+)/"', html)
    assert links == [str(cases[i]) for i in flagged]
