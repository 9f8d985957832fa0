"""What the scripted agent decides to do next: the steps its dialogue policy returns.

Pure data; the run session carries each step out (speaks, revises, looks up, proposes, commits).
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.agent.answers import Retrieve
from lab.events.types import Action, Args, ProposalMade, UtterancePurpose


@dataclass(frozen=True)
class Say:
    text: str
    purpose: UtterancePurpose
    proposal_id: str | None = None
    retrieval_event_id: str | None = None


@dataclass(frozen=True)
class Revise:
    action: Action
    args: Args
    heard: dict[str, str]
    understood_event_id: str


@dataclass(frozen=True)
class Lookup:
    revision: int
    action: Action
    query: Args


@dataclass(frozen=True)
class Propose:
    revision: int
    action: Action
    args: Args
    grounded_on: str | None


@dataclass(frozen=True)
class Commit:
    proposal: ProposalMade | None
    confirmation_event_id: str


Step = Say | Revise | Lookup | Propose | Commit | Retrieve
