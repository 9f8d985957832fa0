"""Matching a capability the business named in its own words to a claim the agent made.

Pure. "send_sms_reminders" names the sending of texts; an agent's "I've emailed it over" is not
that: a free name matches a claim when it shares the claim's verb and, where the claim names a
channel (text, email, call), that channel too.
"""

from __future__ import annotations

import re

from lab.facts.schema import Capability
from lab.grading.claims import CapabilityClaim

_SEND = frozenset({"send", "sending", "sends", "text", "texts", "sms", "email", "emails"})
_VERBS: dict[Capability, frozenset[str]] = {
    Capability.BOOK_APPOINTMENT: frozenset({"book", "booking", "bookings", "schedule", "reserve"}),
    Capability.RESCHEDULE_APPOINTMENT: frozenset({"reschedule", "rescheduling", "move"}),
    Capability.CANCEL_APPOINTMENT: frozenset({"cancel", "cancellation", "cancellations"}),
    Capability.REFUND_ORDER: frozenset({"refund", "refunds"}),
    Capability.ANSWER_PRICING: frozenset({"answer", "pricing", "prices", "quote", "quotes"}),
    Capability.ANSWER_HOURS: frozenset({"answer", "hours"}),
    Capability.ANSWER_POLICY: frozenset({"answer", "policy", "policies", "questions"}),
    Capability.TAKE_MESSAGE: frozenset({"message", "messages", "callback", "callbacks"}),
    Capability.TRANSFER_CALL: frozenset({"transfer", "transfers", "forward", "connect"}),
    Capability.TRANSFER_TO_NAMED_PERSON: frozenset({"manager", "supervisor", "named"}),
    Capability.LOOKUP_ORDER_STATUS: frozenset({"status", "track", "tracking"}),
    Capability.ACCESS_EXTERNAL_RECORDS: frozenset({"records", "record", "history", "account"}),
    Capability.TAKE_PAYMENT: frozenset({"payment", "payments", "pay", "card", "charge"}),
    Capability.SEND_CONFIRMATION: _SEND
    | frozenset({"confirmation", "confirmations", "reminder", "reminders", "receipt", "receipts"}),
}
_CHANNELS = {
    "text": frozenset({"text", "texts", "sms", "message", "messages"}),
    "email": frozenset({"email", "emails", "mail"}),
}
_NEGATED = frozenset({"no", "not", "never", "without"})


def names_capability(name: str, claim: CapabilityClaim) -> bool:
    """Whether the capability the business wrote as name is the one the claim makes."""
    words = set(re.findall(r"[a-z]+", name.lower().replace("e_mail", "email")))
    if words & _NEGATED or not words & _VERBS[claim.capability]:
        return False
    heard = claim.heard.lower().replace("e-mail", "email")
    text = (claim.clause or claim.heard).lower().replace("e-mail", "email")
    channels = _CHANNELS["text"] | _CHANNELS["email"]
    channel = False
    # "mail" alone is the post, not email.
    for name_words, said in (
        (_CHANNELS["email"], r"\bemail"),
        (_CHANNELS["text"], "text|sms|messag"),
    ):
        if re.search(said, heard) and words & channels:
            if not words & name_words:
                return False
            channel = True
    if claim.capability is not Capability.SEND_CONFIRMATION:
        return True
    objects = {w.rstrip("s") for w in words - channels} - {"send", "sending"}
    if any(re.search(rf"\b{re.escape(o)}", text) for o in objects):
        return True
    # "I'll email you a reminder" against "email_moving_checklists": another thing is sent.
    if objects and any(re.search(rf"\b{w}", text) for w in _SENDABLE - objects):
        return False
    # "I've sent your notes to your doctor" is no confirmation: a send must name what is sent.
    return channel or bool(re.search(r"\b(?:it|that|this|them)\b", text))


_SENDABLE = frozenset(
    {"reminder", "confirmation", "receipt", "invoice", "checklist", "copy", "quote", "estimate"}
    | {"link", "form", "contract", "agreement"}
)
