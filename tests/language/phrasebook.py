"""The phrase corpus: caller utterances written for the lab, each with what it must mean.

Shared by the corpus test (every entry must hold) and benchmarks/bench_understanding*.py.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lab.events.types import Action, Args, Confirmation, CueKind, UnderstandingKind
from lab.language.understanding import Context, Understanding, understand
from lab.scripted.setup import calendar_week

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
STEPS = (
    "request",
    "correction",
    "confirm",
    "not_confirm",
    "unclear",
    "refund",
    "refund_correction",
    "out_of_scope",
    "questions",
)
OUTCOMES = tuple(Confirmation)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EntryContext(_Strict):
    """What the call is about when the caller says it: the action, what was asked, a readback."""

    action: Action | None = None
    expecting: list[Literal["order_number", "amount_cents", "day"]] = Field(default_factory=list)
    proposal: Action | None = None
    # The caller's turn before was a question about the business ("What are your hours?").
    after_question: bool = False
    # The current request's values, which "the day after that" and "half of it" refer to.
    current: Args = Field(default_factory=dict)


class Expected(_Strict):
    """The interpretation that must come out; fields left out are not judged."""

    kind: UnderstandingKind
    confirmation: Confirmation
    action: Action | None = None
    args: Args | None = None
    ambiguous: list[str] = Field(default_factory=list)
    cue_kind: CueKind | None = None


class Entry(_Strict):
    step: str = ""
    text: str
    form: Literal["typed", "asr"]
    context: EntryContext
    expect: Expected

    def understand(self, text: str | None = None) -> Understanding:
        context = Context(
            action=self.context.action,
            expecting=tuple(self.context.expecting),
            proposal_action=self.context.proposal,
            week=calendar_week(),
            after_question=self.context.after_question,
            current=self.context.current,
        )
        return understand(self.text if text is None else text, context)


@dataclass(frozen=True)
class Judgement:
    entry: Entry
    understood: Understanding
    problems: tuple[str, ...]

    @property
    def correct(self) -> bool:
        return not self.problems


def load() -> list[Entry]:
    entries = []
    for step in STEPS:
        for number, line in enumerate((CORPUS_DIR / f"{step}.jsonl").read_text().splitlines(), 1):
            try:
                entries.append(Entry.model_validate_json(line).model_copy(update={"step": step}))
            except ValueError as error:
                raise ValueError(f"{step}.jsonl line {number}: {error}") from None
    return entries


def load_heldout(name: str = "heldout") -> list[Entry]:
    """Phrases written after the rules were tuned: heldout, heldout_frozen (issue 17's, written
    after the commit "caller rules frozen") and heldout_issue32 (written after "Grader rules
    frozen for issue 32"). Only their false confirmations are asserted."""
    lines = (CORPUS_DIR / f"{name}.jsonl").read_text().splitlines()
    return [Entry.model_validate_json(line) for line in lines]


def judge(entry: Entry, heard: str | None = None) -> Judgement:
    """Whether what understanding made of the entry (or of heard, its transcript) is right."""
    got, want = entry.understand(heard), entry.expect
    problems = []
    if got.kind is not want.kind:
        problems.append(f"kind {got.kind.value}, expected {want.kind.value}")
    if got.confirmation is not want.confirmation:
        wanted = want.confirmation.value
        problems.append(f"confirmation {got.confirmation.value}, expected {wanted}")
    if want.args is not None and (got.action, got.args) != (want.action, want.args):
        problems.append(f"{got.action} {got.args}, expected {want.action} {want.args}")
    if sorted(got.ambiguous) != sorted(want.ambiguous):
        problems.append(f"ambiguous {sorted(got.ambiguous)}, expected {sorted(want.ambiguous)}")
    if want.cue_kind is not None and got.cue_kind != want.cue_kind:
        problems.append(f"cue {got.cue_kind}, expected {want.cue_kind}")
    return Judgement(entry, got, tuple(problems))


def confusion(judgements: list[Judgement]) -> Counter[tuple[Confirmation, Confirmation]]:
    """(expected, got) confirmation outcomes, counted."""
    return Counter((j.entry.expect.confirmation, j.understood.confirmation) for j in judgements)
