"""The alert webhook's body: field for field the payload of the per-turn grader seed.

Pure: pydantic models and the one rule that picks the recommended action.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from lab.grading.schema import Category, Severity, Verdict

EVENT: Final = "hallucination_grader.flag"
REVIEW = "review_turn_in_operator_console"
# What the on-call does first, by what the agent got wrong; a starting opinion, not an order.
_ACTIONS = {
    Category.PRICE: "refund_or_callback_caller_within_2h",
    Category.POLICY: "refund_or_callback_caller_within_2h",
    Category.HOURS: "callback_caller_with_correct_hours",
    Category.AVAILABILITY: "callback_caller_to_confirm_availability",
    Category.CAPABILITY: "callback_caller_within_2h",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AlertLinks(_Model):
    """Absolute URLs on this lab; audio is None, as the lab keeps no call audio."""

    operator_console: str
    transcript: str
    audio: str | None


class AlertPayload(_Model):
    event: Literal["hallucination_grader.flag"] = EVENT
    severity: Severity
    tenant_id: str
    call_id: str
    turn_id: str
    verdict: Verdict
    # None when the turn was flagged for its citations rather than for a claim.
    category: Category | None
    claim: str | None
    agent_utterance: str
    caller_utterance: str | None
    constraint_ref: tuple[str, ...]
    rationale: str
    confidence: float = Field(ge=0, le=1)
    grader_model: str
    constraint_list_version: str
    audit_row_ref: str = Field(pattern=r"^audit_\d+$")
    links: AlertLinks
    recommended_action: str

    def body(self) -> bytes:
        """The exact bytes that are signed and sent (fields in the seed's order)."""
        return self.model_dump_json().encode()


def recommended_action(verdict: Verdict, category: Category | None) -> str:
    """Call the caller back for a wrong claim of a known kind; otherwise look at the turn."""
    if verdict is Verdict.UNSUPPORTED and category is not None:
        return _ACTIONS[category]
    return REVIEW


def alert_due(severity: Severity, *, alert_on_warn: bool) -> bool:
    """Critical flags always alert; warn ones only where the tenant asked for them."""
    return severity is Severity.CRITICAL or (alert_on_warn and severity is Severity.WARN)
