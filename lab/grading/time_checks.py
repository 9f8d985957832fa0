"""Checking claims about opening hours and about the slots and amounts a call offered.

Pure. Slots and refundable amounts are facts of the call, not of the business: only what the
call's own tools established (Observed) supports them; the hours can only rule them out.
"""

from __future__ import annotations

from collections.abc import Sequence

from lab.facts.days import WEEKDAYS
from lab.facts.knowledge import describe_hours
from lab.facts.schema import ConstraintList, DayHours, format_cents, open_ranges
from lab.grading.claims import AvailabilityClaim, HoursClaim
from lab.grading.judge import Judge
from lab.grading.lexicon import Clock
from lab.grading.schema import Category, ClaimFinding, Observed, Verdict


def check_hours(claim: HoursClaim, facts: ConstraintList) -> ClaimFinding:
    days = claim.days or tuple(day for day in WEEKDAYS if day in facts.hours)
    judge = Judge(claim.heard, Category.HOURS, tuple(f"hours.{day}" for day in days))
    missing = [day for day in days if day not in facts.hours]
    if missing:
        return judge(Verdict.OUT_OF_SCOPE, f"The list gives no hours for {_days(missing)}.", 0.6)
    held = {day: _holds(claim, facts.hours[day]) for day in days}
    if all(held.values()):
        why = f"Consistent with the listed hours for {_days(days)}."
        return judge(Verdict.SUPPORTED, why, 0.9 if claim.days else 0.7)
    wrong = [day for day, holds in held.items() if not holds]
    if claim.days is None and len(wrong) < len(days) and not claim.closed:
        why = f"Holds on some days but not {_days(wrong)}, and no day was named."
        return judge(Verdict.LLM_FLAGGED, why, 0.5)
    why = f"Conflicts with the listed hours: {describe_hours(facts, wrong)}."
    return judge(Verdict.UNSUPPORTED, why, 0.95, refs=tuple(f"hours.{day}" for day in wrong))


def _holds(claim: HoursClaim, hours: DayHours) -> bool:
    ranges = open_ranges(hours)
    if not ranges:
        return claim.closed
    if claim.closed:
        return False
    if claim.always:
        return ranges == ((0, 24 * 60),)
    if claim.through and len(ranges) > 1:
        # "Open straight through": the list closes between its ranges.
        return False
    if claim.split and len(ranges) < 2:
        # "We close for lunch" on a day the list has open straight through.
        return False
    # "Eight to twelve, then two to five" names one range each; "eight to five" the whole day.
    spans = [*ranges, (ranges[0][0], ranges[-1][1])]
    return any(
        (claim.opens is None or opens in claim.opens.candidates())
        and (claim.closes is None or closes in _close_candidates(claim.closes))
        for opens, closes in spans
    ) and all(_open_at(ranges, clock) for clock in claim.within)


def _open_at(ranges: tuple[tuple[int, int], ...], clock: Clock) -> bool:
    return any(opens <= t < closes for opens, closes in ranges for t in clock.candidates())


def _close_candidates(clock: Clock) -> tuple[int, ...]:
    # "Midnight" closes the day at 24:00.
    return tuple(24 * 60 if t == 0 else t for t in clock.candidates())


def _days(days: Sequence[str]) -> str:
    return ", ".join(day.capitalize() for day in days)


def check_availability(
    claim: AvailabilityClaim, facts: ConstraintList, observed: Observed
) -> ClaimFinding:
    if claim.cents is not None:
        said = format_cents(claim.cents)
        judge = Judge(f"refund {said}", Category.AVAILABILITY)
        if claim.cents in observed.amounts_cents:
            why = f"{said} is an amount this call's tools established."
            return judge(Verdict.SUPPORTED, why, 0.85, refs=("observed.amounts",))
        return judge(Verdict.LLM_FLAGGED, f"Nothing in this call established {said}.", 0.5)
    if claim.none_left:
        judge = Judge(claim.heard, Category.AVAILABILITY)
        if observed.empty_lookup:
            why = "A lookup in this call found nothing."
            return judge(Verdict.SUPPORTED, why, 0.8, refs=("observed.lookup",))
        why = "No lookup in this call shows that nothing is free."
        return judge(Verdict.LLM_FLAGGED, why, 0.5)
    refs = (f"hours.{claim.day}",) if claim.day else ()
    judge = Judge(claim.heard, Category.AVAILABILITY, refs)
    if claim.day:
        hours = facts.hours.get(claim.day)
        day = claim.day.capitalize()
        if hours is None:
            return judge(Verdict.OUT_OF_SCOPE, f"The list gives no hours for {day}.", 0.6)
        ranges = open_ranges(hours)
        if not ranges:
            return judge(Verdict.UNSUPPORTED, f"Offers {day}, when the business is closed.", 0.95)
        if claim.time and not _open_at(ranges, claim.time):
            return judge(Verdict.UNSUPPORTED, f"Offers a time outside {day}'s hours.", 0.95)
    for slot in observed.slots:
        minutes = int(slot.time[:2]) * 60 + int(slot.time[3:])
        same_day = claim.day in (None, slot.day)
        if same_day and (claim.time is None or minutes in claim.time.candidates()):
            why = f"A lookup in this call offered {slot.day.capitalize()} at {slot.time}."
            return judge(Verdict.SUPPORTED, why, 0.9, refs=(*refs, "observed.slots"))
    return judge(Verdict.LLM_FLAGGED, "No lookup in this call shows that slot.", 0.5)
