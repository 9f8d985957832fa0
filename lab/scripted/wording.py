"""What the scripted agent says: readbacks, descriptions of a request, and its fixed lines.

Pure: text from values, nothing else.
"""

from __future__ import annotations

from lab.events.types import Action, Args, ProposalMade

SCOPE = (
    "I can't do that here; I can book appointments, issue refunds and answer questions "
    "about the business."
)
NOT_CAUGHT = "Sorry, I didn't catch that. Could you say it again?"
NOTHING_WAITING = "There's nothing waiting for your confirmation yet."
WHICH_ACTION = "Would you like to book an appointment or ask for a refund?"
NO_FACTS = (
    "I don't have that information here, so I won't guess. "
    "I can book appointments and issue refunds."
)
IDENTITY = (
    "I'm the lab's automated agent. I can book appointments, issue refunds and answer "
    "questions about the business."
)
CAPABILITIES = "I can book appointments, issue refunds and answer questions about the business."
COMMIT_RETRY = "The system didn't answer. Let me try that once more."
COMMIT_UNKNOWN = (
    "I couldn't get an answer from the system, so I can't say yet whether it went through."
)
_TOOL_NAMES = {Action.BOOK: "book appointments", Action.REFUND: "issue refunds"}


def spoken_time(hhmm: str) -> str:
    hour, minute = int(hhmm[:2]), hhmm[3:]
    suffix = "AM" if hour < 12 else "PM"
    return f"{(hour - 1) % 12 + 1}:{minute} {suffix}"


def spoken_amount(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def describe(action: Action, args: Args) -> str:
    """A request in words: "Tuesday morning", "a refund of $25.00 on order 4512"."""
    if action is Action.REFUND:
        parts = []
        if "amount_cents" in args:
            parts.append(f"a refund of {spoken_amount(int(args['amount_cents']))}")
        if "order_number" in args:
            parts.append(f"on order {args['order_number']}")
        return " ".join(parts) or "a refund"
    words = [str(args.get("day", "")).capitalize(), str(args.get("part_of_day", ""))]
    if "time" in args:
        words.append(f"at {spoken_time(str(args['time']))}")
    if "around" in args:
        words.append(f"around {spoken_time(str(args['around']))}")
    if "after" in args and "before" in args:
        after, before = spoken_time(str(args["after"])), spoken_time(str(args["before"]))
        words.append(f"between {after} and {before}")
    elif "after" in args:
        words.append(f"after {spoken_time(str(args['after']))}")
    elif "before" in args:
        words.append(f"before {spoken_time(str(args['before']))}")
    said = " ".join(w for w in words if w)
    if "prefer" in args:
        return f"the {args['prefer']} slot" + (f" {said}" if said else "")
    return said or "an appointment"


def offer(proposal: ProposalMade) -> str:
    """What a proposal offers, as read back: "Thursday at 2:00 PM", "$25.00 on order 4512"."""
    if proposal.action is Action.REFUND:
        amount = spoken_amount(int(proposal.args["amount_cents"]))
        return f"{amount} on order {proposal.args['order_number']}"
    when = spoken_time(str(proposal.args["time"]))
    return f"{str(proposal.args['day']).capitalize()} at {when}"


def readback(proposal: ProposalMade) -> str:
    if proposal.action is Action.REFUND:
        return f"I can refund {offer(proposal)}. Shall I go ahead?"
    return f"I have {offer(proposal)}. Shall I book it?"


def reconfirm(proposal: ProposalMade, *, opening: str = "Just to be sure:") -> str:
    """The readback again, for a reply that may not have been a yes."""
    if proposal.action is Action.REFUND:
        return f"{opening} a refund of {offer(proposal)}, shall I go ahead?"
    return f"{opening} {offer(proposal)}, shall I book it?"


def not_offered(action: Action, offered: frozenset[Action]) -> str:
    """The truth about a tool this call does not have."""
    others = " and ".join(_TOOL_NAMES[other] for other in sorted(offered))
    return f"I can't {_TOOL_NAMES[action]} on this call; here I can only {others}."
