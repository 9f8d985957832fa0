"""Transcripts of calls the lab did not make, built from the fixture's raw JSON (not from the lab's
knowledge base or the grader's corpus), with wrong prices and hours injected on purpose.

Each agent turn carries the verdict and grounding it must get, known from how it was built.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "tenant-demo.v1.json"
# The constraint list printed in the per-turn grader seed, verbatim.
SEED_LIST = {
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
_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


@dataclass(frozen=True)
class Expected:
    call_id: str
    turn_id: str
    verdict: str
    grounding: str


def spoken_dollars(dollars: int) -> str:
    """Whole dollars under a thousand in words: 125 is "one hundred twenty-five dollars"."""
    hundreds, rest = divmod(dollars, 100)
    words = [f"{_ONES[hundreds]} hundred"] if hundreds else []
    if rest >= 20:
        tens, ones = divmod(rest, 10)
        words.append(_TENS[tens] + (f"-{_ONES[ones]}" if ones else ""))
    elif rest or not words:
        words.append(_ONES[rest])
    return " ".join(words) + " dollars"


def _clock(hhmm: str) -> str:
    hour, minute = (int(part) for part in hhmm.split(":"))
    suffix = "AM" if hour < 12 else "PM"
    hour = (hour - 1) % 12 + 1
    return f"{hour}:{minute:02d} {suffix}" if minute else f"{hour} {suffix}"


def _turn(call: str, turn: int, speaker: str, text: str, retrieval: list | None = None) -> dict:
    line = {"call_id": call, "turn_id": f"{call}-t{turn}", "speaker": speaker, "text": text}
    if retrieval is not None:
        line["retrieval"] = retrieval
    return line


def demo_calls() -> tuple[list[dict], list[Expected]]:
    """One call per service and per open day: right or wrong figures, each grounding verdict."""
    facts = json.loads(FIXTURE.read_text())
    lines: list[dict] = []
    expected: list[Expected] = []
    groundings = ["ok", "no_marker", "orphan_marker", "empty_retrieval"]
    for index, service in enumerate(facts["services"]):
        call = f"price{index}"
        wrong = index % 2 == 1
        cents = service["price_cents"] + (1000 if wrong else 0)
        said = (
            spoken_dollars(cents // 100)
            if cents % 100 == 0 and index % 3 == 0
            else f"${cents // 100}.{cents % 100:02d}"
        )
        chunk = {
            "id": f"doc-{service['id']}",
            "text": f"{service['name']}: {service['price_cents'] / 100:.2f} USD",
            "score": 11.5 - index,
        }
        other = {"id": "doc-hours", "text": "Hours are posted on the door.", "score": 0.4}
        grounding = groundings[index % 4]
        marker, retrieval = {
            "ok": (" [KB-1]", [chunk, other]),
            "no_marker": ("", [chunk, other]),
            "orphan_marker": (" [KB-5]", [chunk, other]),
            "empty_retrieval": ("", None),
        }[grounding]
        lines.append(_turn(call, 1, "caller", f"How much is a {service['aliases'][0]}?"))
        lines.append(_turn(call, 2, "agent", f"A {service['name']} is {said}{marker}.", retrieval))
        expected.append(
            Expected(call, f"{call}-t2", "unsupported" if wrong else "supported", grounding)
        )
    for index, (day, hours) in enumerate(facts["hours"].items()):
        if hours == "closed":
            continue
        call = f"hours{index}"
        wrong = index % 3 == 2
        closes = "19:00" if wrong else hours["closes"]
        lines.append(_turn(call, 1, "caller", f"Are you open on {day.capitalize()}?"))
        text = (
            f"On {day.capitalize()} we are open from {_clock(hours['opens'])} to {_clock(closes)}."
        )
        lines.append(_turn(call, 2, "agent", text))
        expected.append(
            Expected(call, f"{call}-t2", "unsupported" if wrong else "supported", "empty_retrieval")
        )
    return lines, expected


def seed_call() -> tuple[list[dict], list[Expected]]:
    """The seed's worked example and two honest answers, against the seed's own list."""
    lines = [
        _turn("seed", 1, "caller", "How much for a basic detail and can I get a refund?"),
        _turn(
            "seed",
            2,
            "agent",
            "A basic detail runs about $129, and yeah, we offer a full 30-day money-back "
            "guarantee.",
        ),
        _turn("seed", 3, "caller", "And the premium one?"),
        _turn(
            "seed",
            4,
            "agent",
            "A premium detail is two hundred forty-nine dollars [KB-1].",
            [{"id": "prices", "text": "premium detail 249", "score": 2.0}],
        ),
        _turn("seed", 5, "caller", "Thanks, bye."),
        _turn("seed", 6, "agent", "Thanks for calling, have a good day."),
    ]
    expected = [
        Expected("seed", "seed-t2", "unsupported", "empty_retrieval"),
        Expected("seed", "seed-t4", "supported", "ok"),
        Expected("seed", "seed-t6", "supported", "empty_retrieval"),
    ]
    return lines, expected


def jsonl(lines: list[dict]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()
