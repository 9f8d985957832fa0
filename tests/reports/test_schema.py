from __future__ import annotations

import json

import pytest
from django.conf import settings

from lab.reports.schema import report_json_schema

SCHEMA_FILE = settings.BASE_DIR / "docs" / "report-schema.json"


def test_the_committed_schema_is_the_one_the_models_generate():
    committed = json.loads(SCHEMA_FILE.read_text())
    assert committed == report_json_schema(), (
        "docs/report-schema.json is stale: "
        "`.venv/bin/python -m lab.reports.schema > docs/report-schema.json`"
    )


@pytest.mark.django_db
def test_the_lab_serves_the_same_schema_at_a_stable_url(client):
    response = client.get("/reports/schema.json")
    assert response.status_code == 200
    assert response.json() == json.loads(SCHEMA_FILE.read_text())


def test_the_schema_names_every_top_level_member_a_report_must_carry():
    schema = report_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["required"]) == {
        "schema_version",
        "run_id",
        "generated_at",
        "runtime",
        "contract",
        "contract_hash",
        "evaluation",
        "events",
        "tools",
        "integrity",
    }
    assert schema["properties"]["schema_version"]["const"] == 1
