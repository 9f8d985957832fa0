"""The knowledge base: short chunks of policy text, price notes and FAQ answers with stable ids.

Pure: a function of the constraint list alone, so a list version names its knowledge base too.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from lab.events.chain import digest
from lab.facts.days import WEEKDAYS, Weekday
from lab.facts.schema import (
    Capability,
    ChangePolicy,
    ConstraintList,
    DayHours,
    format_cents,
    format_clock,
    open_ranges,
)

KB_BUILDER = "kb-1"
CAPABILITY_WORDS: dict[Capability, str] = {
    Capability.BOOK_APPOINTMENT: "book appointments",
    Capability.RESCHEDULE_APPOINTMENT: "move (reschedule) existing appointments",
    Capability.CANCEL_APPOINTMENT: "cancel existing appointments",
    Capability.REFUND_ORDER: "refund orders",
    Capability.ANSWER_PRICING: "answer questions about prices",
    Capability.ANSWER_HOURS: "answer questions about opening hours",
    Capability.ANSWER_POLICY: "explain the refund, cancellation and rescheduling policies",
    Capability.TAKE_MESSAGE: "take a message for the shop team to call you back",
    Capability.TRANSFER_CALL: "transfer or put calls through to anyone",
    Capability.TRANSFER_TO_NAMED_PERSON: "connect you to a named person or the manager",
    Capability.LOOKUP_ORDER_STATUS: "check the status of an order or repair",
    Capability.ACCESS_EXTERNAL_RECORDS: "pull up records, accounts or history from other systems",
    Capability.TAKE_PAYMENT: "take card payments over the phone",
    Capability.SEND_CONFIRMATION: "send texts or emails",
}


def capability_words(name: str) -> str:
    """What a capability lets the agent do, in words: its own for a name the business wrote."""
    known = {c.value: words for c, words in CAPABILITY_WORDS.items()}
    return known.get(name) or name.replace("_", " ").replace("-", " ").strip()


# Words callers use that the chunk text may not, so that lexical retrieval still finds it.
_TERMS = {
    "price": "price cost costs how much charge fee",
    "hours": "open opening hours close closing closed today time when",
    "refund": "refund refunds money back return returns",
    "cancellation": "cancel cancelling cancellation fee",
    "reschedule": "reschedule move change appointment",
    "can": "can help do",
    "cannot": "transfer put through connect manager person human speak talk records status",
    "promotion": "discount deal offer promotion special",
}


class Chunk(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: str
    text: str
    # Extra search words, indexed beside the text but never shown or cited.
    terms: str = ""
    constraint_refs: tuple[str, ...] = ()


class KnowledgeBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant: str
    version: str
    constraint_list_version: str
    chunks: tuple[Chunk, ...] = Field(min_length=1)

    def digest(self) -> str:
        return digest(self.model_dump(mode="json"))


def build_knowledge_base(constraints: ConstraintList) -> KnowledgeBase:
    """Every chunk the list gives rise to, in a fixed order."""
    chunks = [*_price_chunks(constraints), _hours_chunk(constraints), *_policy_chunks(constraints)]
    chunks += _capability_chunks(constraints)
    chunks += [
        Chunk(
            id=f"kb.promo.{p.id}",
            kind="promotion",
            text=f"Current promotion: {p.description}",
            terms=_TERMS["promotion"],
            constraint_refs=(p.id,),
        )
        for p in constraints.promotions
    ]
    chunks += [
        Chunk(id=f"kb.faq.{f.id}", kind="faq", text=f"{f.question} {f.answer}", constraint_refs=())
        for f in constraints.faq
    ]
    return KnowledgeBase(
        tenant=constraints.tenant,
        version=f"{constraints.version}/{KB_BUILDER}",
        constraint_list_version=constraints.version,
        chunks=tuple(chunks),
    )


def _price_chunks(constraints: ConstraintList) -> list[Chunk]:
    chunks = []
    for service in constraints.services:
        also = f" (also called {', '.join(service.aliases)})" if service.aliases else ""
        chunks.append(
            Chunk(
                id=f"kb.price.{service.id}",
                kind="price",
                text=f"A {service.name}{also} costs {format_cents(service.price_cents)}.",
                terms=_TERMS["price"],
                constraint_refs=(service.id,),
            )
        )
    listing = "; ".join(f"{s.name} {format_cents(s.price_cents)}" for s in constraints.services)
    chunks.append(
        Chunk(
            id="kb.prices",
            kind="price",
            text=f"{constraints.business} price list: {listing}.",
            terms=_TERMS["price"],
            constraint_refs=tuple(s.id for s in constraints.services),
        )
    )
    return chunks


def _hours_chunk(constraints: ConstraintList) -> Chunk:
    return Chunk(
        id="kb.hours",
        kind="hours",
        text=f"Opening hours of {constraints.business}: {describe_hours(constraints, WEEKDAYS)}.",
        terms=_TERMS["hours"],
        constraint_refs=tuple(f"hours.{day}" for day in WEEKDAYS if day in constraints.hours),
    )


def describe_hours(constraints: ConstraintList, days: Sequence[Weekday]) -> str:
    """The listed hours of days in words, consecutive days with equal hours said once."""
    groups: list[tuple[list[Weekday], DayHours | None]] = []
    for day in days:
        hours = constraints.hours.get(day)
        follows = groups and WEEKDAYS.index(day) == WEEKDAYS.index(groups[-1][0][-1]) + 1
        if follows and groups[-1][1] == hours:
            groups[-1][0].append(day)
        else:
            groups.append(([day], hours))
    return "; ".join(f"{_day_span(group)} {_say_hours(hours)}" for group, hours in groups)


def _day_span(days: list[Weekday]) -> str:
    first, last = days[0].capitalize(), days[-1].capitalize()
    return first if len(days) == 1 else f"{first} to {last}"


def _say_hours(hours: DayHours | None) -> str:
    if hours is None:
        return "(hours not listed)"
    ranges = open_ranges(hours)
    if not ranges:
        return "closed"
    return " and ".join(f"{format_clock(o)} to {format_clock(c)}" for o, c in ranges)


def _policy_chunks(constraints: ConstraintList) -> list[Chunk]:
    policies = constraints.policies
    named: list[tuple[str, str, str]] = []
    if policies.refund:
        named.append(("refund", "Refund policy", policies.refund.text))
    for name, title, policy in (
        ("cancellation", "Cancellation policy", policies.cancellation),
        ("reschedule", "Rescheduling policy", policies.reschedule),
    ):
        if isinstance(policy, ChangePolicy):
            named.append((name, title, policy.text))
    chunks = [
        Chunk(
            id=f"kb.policy.{name}",
            kind="policy",
            text=f"{title}: {text}",
            terms=_TERMS[name],
            constraint_refs=(f"policies.{name}",),
        )
        for name, title, text in named
    ]
    chunks += [
        Chunk(
            id=f"kb.policy.{name}",
            kind="policy",
            text=f"{name.replace('_', ' ').capitalize()} policy: {text}",
            constraint_refs=(f"policies.{name}",),
        )
        for name, text in sorted(policies.other.items())
    ]
    return chunks


def _capability_chunks(constraints: ConstraintList) -> list[Chunk]:
    chunks = []
    for side, listed in (
        ("can", constraints.capabilities.can),
        ("cannot", constraints.capabilities.cannot),
    ):
        if not listed:
            continue
        words = "; ".join(capability_words(c) for c in listed)
        chunks.append(
            Chunk(
                id=f"kb.capabilities.{side}",
                kind="capability",
                text=f"On the phone the agent {side}: {words}.",
                terms=_TERMS[side],
                constraint_refs=tuple(f"capabilities.{c}" for c in listed),
            )
        )
    return chunks
