"""Who the scripted caller is: what it answers when the agent asks what no scripted line says.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from lab.events.types import PersonaField


class Persona(BaseModel):
    """The caller's particulars, each optional; a field left unset is not answered."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, min_length=1, max_length=100)
    phone: str | None = Field(default=None, min_length=1, max_length=40)
    email: str | None = Field(default=None, min_length=3, max_length=100)
    date_of_birth: str | None = Field(default=None, min_length=1, max_length=40)
    reason: str | None = Field(default=None, min_length=1, max_length=200)

    # Unset fields are left out of the canonical form, so a field added later keeps old hashes.
    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if value is not None}

    @model_validator(mode="after")
    def _says_something(self) -> Self:
        names = type(self).model_fields
        if all(getattr(self, name) is None for name in names):
            raise ValueError("a persona names at least one of " + ", ".join(names))
        return self

    def answer(self, asked: tuple[PersonaField, ...]) -> str | None:
        """The caller's words for what was asked, in the order asked; None if it knows none."""
        said = [_WORDING[field].format(value) for field in asked if (value := getattr(self, field))]
        return " ".join(said) or None


_WORDING: dict[PersonaField, str] = {
    "name": "My name is {}.",
    "phone": "My phone number is {}.",
    "email": "My email is {}.",
    "date_of_birth": "My date of birth is {}.",
    "reason": "It's for {}.",
}

# Who the caller is in a scenario that names no persona: an agent that asks still gets an answer.
DEFAULT_PERSONA = Persona(
    name="Dana Reyes",
    phone="555 0142",
    email="dana.reyes@example.com",
    date_of_birth="March 3rd, 1985",
    reason="a routine check-up",
)
