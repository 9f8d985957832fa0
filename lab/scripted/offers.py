"""What the scripted agent offers from a lookup: the slot that fits, the refund the order
allows, or (a naive agent, the lookup unanswered) what it makes up.

Pure: options and the caller's request in, an offer (or why there is none) out.
"""

from __future__ import annotations

from lab.events.types import Action, Args
from lab.scripted.wording import spoken_amount


def invented_slot(args: Args) -> Args:
    """What a naive agent makes up when the calendar did not answer."""
    day = str(args.get("day", "monday"))
    time = "09:00" if args.get("part_of_day") == "morning" else "14:00"
    return {"slot_id": f"{day[:3]}-{time.replace(':', '')}", "day": day, "time": time}


def invented(action: Action, args: Args) -> Args:
    """What a naive agent offers when the lookup did not answer: a slot, or the refund asked."""
    if action is Action.BOOK:
        return invented_slot(args)
    return {key: args[key] for key in ("order_number", "amount_cents") if key in args}


def choose(options: list[Args], args: Args) -> Args | None:
    """The slot that fits what the caller said best: inside any bounds, nearest any "around"."""
    after, before = str(args.get("after", "00:00")), str(args.get("before", "24:00"))
    fits = [option for option in options if after <= str(option.get("time", "")) < before]
    if "around" in args:
        around = _minutes(str(args["around"]))
        fits.sort(key=lambda option: abs(_minutes(str(option["time"])) - around))
    elif args.get("prefer") == "latest":
        fits.sort(key=lambda option: str(option["time"]), reverse=True)
    elif args.get("prefer") == "earliest":
        fits.sort(key=lambda option: str(option["time"]))
    return fits[0] if fits else None


def _minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def refund_offer(options: list[Args], args: Args) -> tuple[Args | None, str | None]:
    """The refund the looked-up order allows, or None and what the agent says instead."""
    order = next((o for o in options if isinstance(o.get("max_amount_cents"), int)), None)
    if order is None:
        return None, None
    ceiling = int(order["max_amount_cents"])
    if int(args["amount_cents"]) > ceiling:
        return None, f"I can refund at most {spoken_amount(ceiling)} on that order."
    return {"order_number": order["order_number"], "amount_cents": args["amount_cents"]}, None
