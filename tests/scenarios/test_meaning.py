"""Caller lines' meanings: validated as written, and in every scenario what the lab's own
understanding reads too, so the lab's agent and an outside agent are judged on the same call."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lab.events.actions import LAB_ACTIONS
from lab.events.types import Action
from lab.language.understanding import BOOK_KEYS, REFUND_KEYS
from lab.referee.meant import as_meant
from lab.referee.referee import Referee
from lab.scenarios.catalog import all_contracts
from lab.scenarios.meaning import CallerMeaning
from lab.scripted.setup import calendar_week

ACTIONS = {"calendar": Action.BOOK, "ledger": Action.REFUND}


@pytest.mark.parametrize(
    ("meaning", "error"),
    [
        ({"kind": "request", "args": {"day": "monday"}}, "must name its action"),
        ({"kind": "correction", "action": "book"}, "must say what it changes"),
        ({"kind": "confirmation", "action": "book"}, "about no action"),
        ({"kind": "question", "args": {"day": "monday"}}, "names no args"),
        ({"kind": "request", "action": "book", "changes": {"day": "x"}}, "changes nothing"),
        ({"kind": "request", "action": "book", "args": {"amount_cents": 5}}, "takes no amount"),
        ({"kind": "request", "action": "refund", "args": {"amount_cents": "5"}}, "an integer"),
        ({"kind": "agreement"}, "kind"),
    ],
)
def test_a_meaning_that_does_not_fit_its_kind_is_refused_with_words(meaning, error):
    with pytest.raises(ValidationError, match=error):
        CallerMeaning.model_validate(meaning)


def test_the_values_a_meaning_may_name_are_those_the_understanding_reads():
    keys = {action: shape.request_keys for action, shape in LAB_ACTIONS.items()}
    assert {Action.BOOK: set(BOOK_KEYS), Action.REFUND: set(REFUND_KEYS)} == keys


def test_an_action_beyond_book_and_refund_takes_the_keys_of_the_shape_its_values_use():
    cancel = CallerMeaning.model_validate(
        {"kind": "request", "action": "cancel", "args": {"day": "tuesday", "time": "09:30"}}
    )
    assert cancel.action is Action("cancel")
    with pytest.raises(ValidationError, match="cancel takes no guests"):
        CallerMeaning.model_validate(
            {"kind": "request", "action": "cancel", "args": {"day": "tuesday", "guests": "2"}}
        )


@pytest.mark.parametrize("scenario", sorted(all_contracts()))
def test_every_line_means_what_the_lab_reads_in_its_words(scenario):
    """The annotations change no verdict of the lab's own reading: on each scenario's own words
    the referee records the same understanding with or without them."""
    contract = all_contracts()[scenario]
    referee = Referee(tools=frozenset(ACTIONS[t] for t in contract.tools), week=calendar_week())
    for line in contract.caller:
        assert line.means is not None, line.say
        read = referee.understand(line.say)
        assert as_meant(line.means, read) == read, line.say
        revision = referee.revise(read.event("ev-00001"))
        if revision is not None:
            referee.revision += 1
            referee.action, referee.args = revision.action, revision.args
