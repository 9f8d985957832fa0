"""A scenario's persona: what the scripted caller answers when asked; unset, out of the hash."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lab.scenarios.catalog import all_contracts, contract_get
from lab.scenarios.contracts import Contract
from lab.scenarios.persona import Persona


def test_a_contract_without_a_persona_keeps_its_canonical_form_and_hash() -> None:
    for contract in all_contracts().values():
        assert "persona" not in contract.model_dump(mode="json")
    correction = contract_get("correction")
    with_persona = correction.model_copy(update={"persona": Persona(name="Sam Okafor")})
    assert with_persona.contract_hash != correction.contract_hash
    assert with_persona.model_dump(mode="json")["persona"] == {"name": "Sam Okafor"}


def test_a_scenario_file_may_name_its_caller() -> None:
    data = contract_get("correction").model_dump(mode="json")
    data["persona"] = {"name": "Sam Okafor", "date_of_birth": "1 May 1990", "reason": "a filling"}
    contract = Contract.model_validate(data)
    assert contract.persona is not None and contract.persona.reason == "a filling"


@pytest.mark.parametrize("persona", [{}, {"name": ""}, {"nickname": "Sam"}])
def test_a_persona_that_says_nothing_or_something_unknown_is_refused(persona: dict) -> None:
    with pytest.raises(ValidationError):
        Persona.model_validate(persona)


def test_it_answers_what_was_asked_in_the_order_asked_and_only_what_it_knows() -> None:
    persona = Persona(name="Sam Okafor", phone="555 0199")
    assert persona.answer(("phone", "name")) == (
        "My phone number is 555 0199. My name is Sam Okafor."
    )
    assert persona.answer(("email", "name")) == "My name is Sam Okafor."
    assert persona.answer(("email",)) is None
