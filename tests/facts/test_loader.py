from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.facts.errors import ConstraintListError
from lab.facts.loader import load_constraints, load_tenant, parse_constraints
from lab.facts.schema import Capability, OpenHours, open_ranges

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "tenant-demo.v1.json"
# The constraint list printed in the per-turn grader seed, verbatim.
SEED = {
    "price_list": [
        {"id": "px_basic", "service": "basic detail", "price_usd": 149},
        {"id": "px_premium", "service": "premium detail", "price_usd": 249},
    ],
    "hours": {"mon_fri": "08:00-18:00", "sat": "09:00-15:00", "sun": "closed"},
    "policies": {
        "refund": "no_cash_refunds_store_credit_only",
        "reschedule": "free_up_to_24h_before",
    },
    "capabilities": ["book_appointment", "reschedule", "answer_pricing"],
}


def demo() -> dict:
    return json.loads(DEMO.read_text())


def refused(data: dict) -> ConstraintListError:
    with pytest.raises(ConstraintListError) as caught:
        parse_constraints(data)
    return caught.value


def test_the_demo_tenant_loads_as_its_named_version():
    facts = load_tenant("demo")
    assert (facts.tenant, facts.version) == ("demo", "demo_v1")
    assert facts.service("px_full_service").price_cents == 12950
    assert facts.hours["sunday"] == "closed"
    assert facts.policies.refund is not None and facts.policies.refund.window_days == 14


def test_the_demo_prices_match_what_the_ledger_orders_were_paid():
    ledger = json.loads((DEMO.parent / "ledger.json").read_text())
    prices = {service.price_cents for service in load_tenant("demo").services}
    assert {order["paid_cents"] for order in ledger["orders"]} <= prices


def test_every_calendar_slot_lies_inside_the_demo_opening_hours():
    calendar = json.loads((DEMO.parent / "calendar.json").read_text())
    hours = load_tenant("demo").hours
    for slot in calendar["slots"]:
        day = hours[slot["day"]]
        assert isinstance(day, OpenHours)
        assert day.opens <= slot["time"] < day.closes


def test_the_digest_is_stable_and_changes_with_any_fact():
    first, again = load_tenant("demo"), load_constraints(DEMO)
    assert first.digest() == again.digest()
    changed = demo()
    changed["services"][0]["price_cents"] += 1
    assert parse_constraints(changed).digest() != first.digest()


def test_a_bad_price_is_refused_with_its_path():
    data = demo()
    data["services"][1]["price_cents"] = -5
    error = refused(data)
    assert error.path == "services[1].price_cents"
    assert "greater than or equal to 0" in error.message


def test_hours_that_close_before_they_open_are_refused_with_the_day():
    data = demo()
    data["hours"]["saturday"] = {"opens": "14:00", "closes": "10:00"}
    error = refused(data)
    assert error.path.startswith("hours.saturday")
    assert "closes at 10:00" in error.message


def test_a_capability_the_business_names_in_its_own_words_is_accepted():
    data = demo()
    data["capabilities"]["cannot"].append("send_sms_reminders")
    assert parse_constraints(data).capabilities.cannot[-1] == "send_sms_reminders"
    data["capabilities"]["cannot"].append("")
    assert refused(data).path == "capabilities.cannot[9]"


def test_a_promotion_for_an_unknown_service_is_refused():
    data = demo()
    data["promotions"][0]["services"] = ["px_nothing"]
    assert "unknown services ['px_nothing']" in refused(data).message


def test_a_typo_in_a_field_name_is_refused_rather_than_ignored():
    data = demo()
    data["policies"]["refund"]["window_day"] = 30
    assert refused(data).path == "policies.refund.window_day"


def test_a_file_that_is_not_json_names_the_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "tenant": "demo",\n  oops\n}')
    with pytest.raises(ConstraintListError) as caught:
        load_constraints(path)
    assert caught.value.path == "line 3 column 3"


def test_a_file_edited_in_place_under_another_version_is_refused(tmp_path):
    data = demo()
    data["version"] = "demo_v2"
    (tmp_path / "tenant-demo.v1.json").write_text(json.dumps(data))
    with pytest.raises(ConstraintListError, match="holds 'demo_v2'"):
        load_tenant("demo", directory=tmp_path)


def test_the_newest_version_is_loaded_unless_one_is_named(tmp_path):
    (tmp_path / "tenant-demo.v1.json").write_text(DEMO.read_text())
    newer = demo() | {"version": "demo_v2"}
    (tmp_path / "tenant-demo.v2.json").write_text(json.dumps(newer))
    assert load_tenant("demo", directory=tmp_path).version == "demo_v2"
    assert load_tenant("demo", 1, directory=tmp_path).version == "demo_v1"
    with pytest.raises(ConstraintListError, match=r"versions \[1, 2\]"):
        load_tenant("demo", 3, directory=tmp_path)


def test_the_seed_shape_is_accepted_and_converted():
    facts = parse_constraints(SEED)
    assert [(s.id, s.name, s.price_cents) for s in facts.services] == [
        ("px_basic", "basic detail", 14900),
        ("px_premium", "premium detail", 24900),
    ]
    weekday = OpenHours(opens="08:00", closes="18:00")
    assert all(facts.hours[day] == weekday for day in ("monday", "wednesday", "friday"))
    assert facts.hours["saturday"] == OpenHours(opens="09:00", closes="15:00")
    assert facts.hours["sunday"] == "closed"
    refund = facts.policies.refund
    assert refund is not None and (refund.method, refund.allowed) == ("store_credit", True)
    reschedule = facts.policies.reschedule
    assert reschedule is not None and reschedule.free_until_hours_before == 24
    assert facts.capabilities.can == (
        Capability.BOOK_APPOINTMENT,
        Capability.RESCHEDULE_APPOINTMENT,
        Capability.ANSWER_PRICING,
    )


def test_a_seed_list_is_versioned_by_its_content():
    first = parse_constraints(SEED)
    assert first.version.startswith("seed_") and first.tenant == "external"
    assert parse_constraints(json.loads(json.dumps(SEED))).version == first.version
    dearer = json.loads(json.dumps(SEED))
    dearer["price_list"][0]["price_usd"] = 150
    assert parse_constraints(dearer).version != first.version


def test_seed_prices_in_dollars_and_cents_convert_exactly():
    data = json.loads(json.dumps(SEED))
    data["price_list"][0]["price_usd"] = 129.95
    assert parse_constraints(data).services[0].price_cents == 12995


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["hours"].update({"mon_fri": "8am-6pm"}), "hours.mon_fri"),
        (lambda d: d["hours"].update({"someday": "08:00-10:00"}), "hours.someday"),
        (lambda d: d["hours"].update({"sat": "15:00-09:00"}), "hours.sat"),
        (lambda d: d["hours"].update({"weekdays": "09:00-17:00"}), "hours.weekdays"),
        (lambda d: d["hours"].update({"sat": "09:00-12:00, 11:00-15:00"}), "hours.sat"),
        (lambda d: d["hours"].update({"sat": "09:00-12:00, lunch"}), "hours.sat"),
        (lambda d: d["price_list"][1].update({"price_usd": "1.250,00"}), "price_list[1].price_usd"),
        (lambda d: d["capabilities"].append(""), "capabilities[3]"),
        (lambda d: d["capabilities"].append(7), "capabilities[3]"),
        (lambda d: d.update({"promotions": [{"percent": 10}]}), "promotions[0].percent"),
        (lambda d: d.update({"promotions": [12]}), "promotions[0]"),
        (
            lambda d: d.update({"promotions": [{"percent_off": 10, "service": "x"}]}),
            "promotions[0].service",
        ),
        (lambda d: d["policies"].update({"deposit": ""}), "policies.deposit"),
        (lambda d: d["price_list"][1].update({"price_usd": "lots"}), "price_list[1].price_usd"),
        (lambda d: d["price_list"][1].update({"price_usd": 1.005}), "price_list[1].price_usd"),
        (lambda d: d.update({"price_list": []}), "price_list"),
        (lambda d: d.update({"extra": 1}), "extra"),
    ],
)
def test_a_bad_seed_list_is_refused_with_the_path_of_the_error(change, path):
    data = json.loads(json.dumps(SEED))
    change(data)
    assert refused(data).path == path


def test_seed_promotions_may_be_plain_text_or_objects():
    data = dict(
        SEED,
        promotions=[
            "10% off for first-time customers",
            {"description": "Premium detail for $199", "price_usd": 199, "service": "px_premium"},
        ],
    )
    first, second = parse_constraints(data).promotions
    assert (first.id, first.percent_off) == ("promo_1", 10)
    assert (second.price_cents, second.services) == (19900, ("px_premium",))


def test_the_detailing_fixture_loads_in_full():
    facts = load_constraints(DEMO.parent / "seed-detailing.json")
    assert "send_sms_reminders" in facts.capabilities.can
    assert set(facts.policies.other) == {"payment", "deposit", "late_fee", "warranty", "water"}
    spring = facts.promotions[1]
    assert (spring.amount_off_cents, spring.services, spring.valid_until) == (
        2000,
        ("px_basic",),
        "2026-05-31",
    )


def test_the_readme_example_is_the_movers_fixture_with_what_businesses_write():
    readme = (DEMO.parents[1] / "README.md").read_text()
    block = readme.split("### The constraint-list shape")[1].split("```json")[1].split("```")[0]
    fixture = DEMO.parent / "seed-movers.json"
    assert json.loads(block) == json.loads(fixture.read_text())
    facts = load_constraints(fixture)
    assert open_ranges(facts.hours["saturday"]) == ((540, 720), (780, 960))
    assert open_ranges(facts.hours["wednesday"]) == ((480, 1200),)
    assert facts.services[0].aliases == ("small move", "one-room move")
    assert facts.services[0].price_cents == 125000
    assert facts.policies.cancellation is not None
    assert facts.policies.cancellation.late_fee_cents == 15000
    military = facts.promotions[1]
    assert (military.eligibility, military.services) == (
        "active duty military and veterans",
        ("px_studio", "px_twobed"),
    )


def test_promotion_objects_take_the_names_businesses_write_and_errors_show_an_example():
    data = dict(
        SEED,
        promotions=[{"name": "Spring", "discount_usd": 20, "service": "basic detail"}],
        policies={"Late fee": {"text": "$25 after 15 minutes"}},
    )
    facts = parse_constraints(data)
    promotion = facts.promotions[0]
    assert (promotion.amount_off_cents, promotion.services) == (2000, ("px_basic",))
    assert facts.policies.other == {"late_fee": "$25 after 15 minutes"}
    error = refused(dict(SEED, promotions=[{"percent_off": "ten"}]))
    assert error.path == "promotions[0].percent_off" and "e.g." in error.message
    error = refused(dict(SEED, price_list=[{"id": "px", "service": "wash"}]))
    assert error.path == "price_list[0].price_usd" and '"price_usd": 149' in error.message


def test_a_split_day_is_read_as_written_or_as_a_list_of_ranges():
    for written in ("08:00-12:00, 14:00-17:00", ["08:00-12:00", "14:00-17:00"]):
        data = json.loads(json.dumps(SEED))
        data["hours"]["sat"] = written
        saturday = parse_constraints(data).hours["saturday"]
        assert open_ranges(saturday) == ((480, 720), (840, 1020))


def test_a_single_day_after_a_range_is_that_days_exception():
    data = json.loads(json.dumps(SEED))
    data["hours"] = {"thu": "08:00-20:00", "mon_fri": "08:00-18:00", "sun": "closed"}
    hours = parse_constraints(data).hours
    assert open_ranges(hours["thursday"]) == ((480, 1200),)
    assert open_ranges(hours["friday"]) == ((480, 1080),)


def test_a_split_day_out_of_order_is_refused_naming_both_ranges():
    data = json.loads(json.dumps(SEED))
    data["hours"]["sat"] = "09:00-12:00, 11:00-15:00"
    assert "09:00-12:00 then 11:00-15:00" in refused(data).message


def test_prices_written_with_thousands_separators_and_services_with_aliases_load():
    data = json.loads(json.dumps(SEED))
    data["price_list"][1] = {
        "id": "px_premium",
        "service": "premium detail",
        "price_usd": "$1,250.00",
        "aliases": ["full detail", "the works"],
    }
    premium = parse_constraints(data).services[1]
    assert (premium.price_cents, premium.aliases) == (125000, ("full detail", "the works"))


def test_a_policy_object_is_read_field_by_field():
    data = json.loads(json.dumps(SEED))
    data["policies"] = {
        "cancellation": {"free_until_hours_before": 24, "late_fee_usd": 50},
        "after_hours": {"surcharge_usd": 95, "applies": "after 17:30 and on weekends"},
        "warranty": {"labor_years": 1, "parts_years": 5},
    }
    policies = parse_constraints(data).policies
    assert policies.cancellation is not None
    assert policies.cancellation.free_until_hours_before == 24
    assert policies.cancellation.late_fee_cents == 5000
    assert policies.other["after_hours"] == "surcharge: $95; applies: after 17:30 and on weekends"
    assert policies.other["warranty"] == "labor: 1 year; parts: 5 years"
