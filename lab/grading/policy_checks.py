"""Checking policy claims against the typed refund, cancellation and rescheduling policies.

Pure. A field the list leaves empty cannot back a claim: the claim is flagged for a human.
"""

from __future__ import annotations

from lab.facts.schema import ChangePolicy, ConstraintList, RefundPolicy, format_cents
from lab.grading.claims import PolicyClaim
from lab.grading.judge import Judge
from lab.grading.schema import Category, ClaimFinding, Verdict

_Answer = tuple[bool, str] | None


def check_policy(claim: PolicyClaim, facts: ConstraintList) -> ClaimFinding:
    judge = Judge(claim.heard, Category.POLICY, (f"policies.{claim.topic}",))
    policies = facts.policies
    if claim.topic == "other":
        if any(name in claim.heard for name in policies.other):
            return judge(Verdict.LLM_FLAGGED, "The list states that policy only as text.", 0.5)
        why = f'The list has no policy offering "{claim.heard}".'
        return judge(Verdict.UNSUPPORTED, why, 0.85, refs=("policies",))
    policy = {
        "refund": policies.refund,
        "cancellation": policies.cancellation,
        "reschedule": policies.reschedule,
    }[claim.topic]
    if policy is None:
        return judge(Verdict.OUT_OF_SCOPE, f"The list has no {claim.topic} policy.", 0.6)
    answer = _refund(claim, policy) if isinstance(policy, RefundPolicy) else _change(claim, policy)
    if answer is None:
        why = f"The {claim.topic} policy says this only in its text: {policy.text}"
        return judge(Verdict.LLM_FLAGGED, why, 0.5)
    held, why = answer
    if held:
        return judge(Verdict.SUPPORTED, f"Matches the {claim.topic} policy: {why}.", 0.9)
    return judge(Verdict.UNSUPPORTED, f"Conflicts with the {claim.topic} policy: {why}.", 0.95)


def _refund(claim: PolicyClaim, policy: RefundPolicy) -> _Answer:
    """Whether the refund policy's typed fields back the claim; None when they do not say."""
    match claim.feature:
        case "allowed" | "refused" if policy.allowed is not None:
            offered = "refunds are offered" if policy.allowed else "refunds are not offered"
            return policy.allowed == (claim.feature == "allowed"), offered
        case "window" if policy.window_days is not None and claim.hours is not None:
            said = claim.hours / 24  # "two weeks" and "14 days" are one window
            return said == policy.window_days, (
                f"the list says {policy.window_days} days, the agent said {said:g}"
            )
        case "store_credit" | "original_payment" if policy.method is not None:
            return (
                policy.method == claim.feature,
                f"refunds go to {policy.method.replace('_', ' ')}",
            )
        case "unconditional" if policy.conditions is not None:
            return False, f"refunds depend on {policy.conditions}"
    return None


def _change(claim: PolicyClaim, policy: ChangePolicy) -> _Answer:
    """Whether a cancellation or rescheduling policy backs the claim; None when it does not say."""
    free, fee = policy.free_until_hours_before, policy.late_fee_cents
    match claim.feature:
        case "window" if free is not None and claim.hours is not None:
            return (
                claim.hours == free,
                f"the list says {free} hours, the agent said {claim.hours:g}",
            )
        case "free" if free is not None:
            return True, f"free up to {free} hours before"
        case "free_anytime" if free is not None:
            return not (free or fee), f"free only up to {free} hours before"
        case "fee" if fee is not None and claim.cents is not None:
            return fee == claim.cents, f"the late fee is {format_cents(fee)}"
    return None
