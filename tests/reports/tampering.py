"""The tamper battery: edits a forger might make to a real report, and the finding each must meet.

Each edit changes a report's JSON in place and returns the words the finding's reason must hold.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from lab.evaluation.evaluator import evaluate
from lab.events.chain import GENESIS_HASH, chain_event
from lab.events.types import CallerUnderstood, Event, UnderstandingKind
from lab.reports.canonical import body_digest
from lab.reports.signing import digest_sign, key_id, public_key_pem
from lab.reports.tools import tool_identities
from lab.reports.verification import Check
from lab.scenarios.catalog import all_contracts

Document = dict[str, Any]
# Events the order, drop and insert edits touch: past the greeting, before the commit.
AT = 6


@dataclass(frozen=True)
class Tamper:
    name: str
    edit: Callable[[Document], str]
    check: Check
    kind: str

    def __str__(self) -> str:
        return self.name


def change_verdict(document: Document) -> str:
    document["evaluation"]["verdict"] = "FAIL"
    return "verdict: the file states FAIL, the events give PASS"


def change_assertion_state(document: Document) -> str:
    assertion = document["evaluation"]["assertions"][0]
    assertion["state"] = "contradicted"
    return (
        f"assertions[{assertion['id']}].state: the file states contradicted, "
        "the events give supported"
    )


def change_event_payload(document: Document) -> str:
    event = next(
        e
        for e in document["events"]
        if e["payload"]["type"] == "caller.utterance" and "Thursday" in e["payload"]["text"]
    )
    event["payload"]["text"] = event["payload"]["text"].replace("Thursday", "Friday")
    return f"event {event['id']} hash mismatch"


def swap_two_events(document: Document) -> str:
    events = document["events"]
    events[AT], events[AT + 1] = events[AT + 1], events[AT]
    moved = events[AT + 1]
    return (
        f"seq out of order: {moved['id']} (seq {moved['seq']}) comes after seq {moved['seq'] + 1}"
    )


def drop_an_event(document: Document) -> str:
    dropped = document["events"].pop(AT)
    return f"seq gap: seq {dropped['seq']} missing before {document['events'][AT]['id']}"


def insert_an_event(document: Document) -> str:
    """A confirmation the caller never gave, hashed and chained onto the event before it."""
    before = Event.model_validate(document["events"][AT - 1])
    forged = chain_event(
        seq=before.seq + 1,
        at=before.at,
        payload=CallerUnderstood(utterance_event_id=before.id, kind=UnderstandingKind.CONFIRM),
        prev_hash=before.hash,
    )
    document["events"].insert(AT, forged.model_dump(mode="json"))
    return f"event id {forged.id} appears 2 times"


def edit_the_contract(document: Document) -> str:
    document["contract"]["assertions"][0]["description"] = "Anything the agent did is fine."
    contract = document["contract"]
    return (
        f"the embedded {contract['id']} v{contract['version']} differs from this lab's canonical "
        f"{contract['id']} v{contract['version']} at contract.assertions[0].description"
    )


def swap_the_public_key(document: Document) -> str:
    other = Ed25519PrivateKey.generate().public_key()
    document["signature"]["public_key_pem"] = public_key_pem(other)
    document["signature"]["key_id"] = key_id(other)
    return "the named key was swapped"


def corrupt_the_signature(document: Document) -> str:
    value = bytearray(base64.b64decode(document["signature"]["value"]))
    value[0] ^= 0x01
    document["signature"]["value"] = base64.b64encode(bytes(value)).decode()
    return "the signature does not verify over this body"


BATTERY = [
    Tamper("verdict", change_verdict, Check.REEVALUATION, "verdict_differs"),
    Tamper("assertion_state", change_assertion_state, Check.REEVALUATION, "assertion_differs"),
    Tamper("event_payload", change_event_payload, Check.INTEGRITY, "event_hash"),
    Tamper("event_order", swap_two_events, Check.INTEGRITY, "seq_order"),
    Tamper("event_dropped", drop_an_event, Check.INTEGRITY, "seq_gap"),
    Tamper("event_inserted", insert_an_event, Check.INTEGRITY, "duplicate_event_id"),
    Tamper("contract_edited", edit_the_contract, Check.CONTRACT, "contract_changed"),
    Tamper("public_key_swapped", swap_the_public_key, Check.ORIGIN, "key_swapped"),
    Tamper("signature_corrupted", corrupt_the_signature, Check.ORIGIN, "signature_invalid"),
]


def encoded(document: Document) -> bytes:
    return json.dumps(document, indent=1).encode()


def resealed(document: Document, key: Ed25519PrivateKey | None) -> bytes:
    """What a careful forger writes: the body digest recomputed and, given a key, signed anew."""
    digest = body_digest(document)
    document["integrity"]["body_digest"] = digest
    document["signature"] = digest_sign(key, digest).model_dump() if key else None
    return encoded(document)


def forge_away_the_second_booking(document: Document, key: Ed25519PrivateKey | None) -> bytes:
    """The held-out forgery: an unguarded run that booked twice (FAIL) loses its second booking,
    and everything derived from the log is rebuilt so that every check agrees it is a PASS."""
    events = [Event.model_validate(e) for e in document["events"]]
    _, second = [e for e in events if e.payload.type == "tool.commit.started"]
    ended = events[-1]
    assert ended.payload.type == "run.ended"
    kept = [e for e in events if e.seq < second.seq] + [ended]
    chained: list[Event] = []
    for seq, event in enumerate(kept, start=1):
        chained.append(
            chain_event(
                seq=seq,
                at=event.at,
                payload=event.payload,
                prev_hash=chained[-1].hash if chained else GENESIS_HASH,
            )
        )
    contract = all_contracts()[document["contract"]["id"]]
    document["events"] = [e.model_dump(mode="json") for e in chained]
    document["evaluation"] = evaluate(contract, chained).model_dump(mode="json")
    document["tools"] = tool_identities(chained).model_dump(mode="json")
    return resealed(document, key)
