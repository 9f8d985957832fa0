from __future__ import annotations

from lab.facts.knowledge import build_knowledge_base
from lab.facts.loader import load_tenant, parse_constraints
from tests.facts.test_loader import SEED, demo


def test_every_fact_gets_a_chunk_with_a_stable_id():
    knowledge = build_knowledge_base(load_tenant("demo"))
    ids = [chunk.id for chunk in knowledge.chunks]
    assert len(ids) == len(set(ids))
    assert {
        "kb.price.px_basic_tune",
        "kb.hours",
        "kb.policy.refund",
        "kb.policy.cancellation",
    } <= set(ids)
    assert {"kb.capabilities.can", "kb.capabilities.cannot", "kb.promo.promo_student"} <= set(ids)
    assert "kb.faq.faq_bike_sales" in ids
    assert (knowledge.tenant, knowledge.version) == ("demo", "demo_v1/kb-1")


def test_chunks_state_the_listed_facts():
    chunks = {c.id: c for c in build_knowledge_base(load_tenant("demo")).chunks}
    assert "$129.50" in chunks["kb.price.px_full_service"].text
    assert chunks["kb.price.px_full_service"].constraint_refs == ("px_full_service",)
    hours = chunks["kb.hours"].text
    assert "Monday to Friday 8:30 AM to 5:30 PM" in hours
    assert "Saturday 10:00 AM to 2:00 PM" in hours and "Sunday closed" in hours
    assert "14 days" in chunks["kb.policy.refund"].text
    assert "named person" in chunks["kb.capabilities.cannot"].text


def test_the_knowledge_base_is_a_function_of_the_list():
    facts = load_tenant("demo")
    assert build_knowledge_base(facts) == build_knowledge_base(load_tenant("demo"))
    changed = demo()
    changed["services"][0]["price_cents"] = 2600
    other = build_knowledge_base(parse_constraints(changed))
    assert other.digest() != build_knowledge_base(facts).digest()
    assert [c.id for c in other.chunks] == [c.id for c in build_knowledge_base(facts).chunks]


def test_a_seed_list_gets_a_knowledge_base_with_unlisted_days_said_so():
    data = dict(SEED, hours={"mon_fri": "08:00-18:00"})
    chunks = {c.id: c for c in build_knowledge_base(parse_constraints(data)).chunks}
    assert "Saturday to Sunday (hours not listed)" in chunks["kb.hours"].text
    assert "store credit" in chunks["kb.policy.refund"].text
