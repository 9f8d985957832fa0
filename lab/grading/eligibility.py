"""Who a promotion is for, as people say it: first-time customers, returning ones, seniors...

Pure data and one reader. A claim that names a group a promotion is not for ("returning
customers get fifteen percent off too" against a first-time offer) contradicts it.
"""

from __future__ import annotations

import re

_ = r"[\s-]+"
# Each group by the words that name it; "everyone" claims a promotion has no eligibility at all.
GROUPS: dict[str, re.Pattern[str]] = {
    "new": re.compile(
        rf"\b(?:first{_}time|first{_}(?:visit|order|booking|appointment|job|call|service|move)"
        rf"|new{_}(?:customer|client|patient|member|homeowner)s?|newcomers?)\b"
    ),
    "returning": re.compile(
        rf"\b(?:returning|existing|repeat|loyal|come{_}back|(?:regular|current|past|previous)"
        rf"{_}(?:customer|client|patient)s?)\b"
    ),
    "senior": re.compile(rf"\b(?:seniors?|senior{_}citizens?|retirees?|pensioners?)\b"),
    "student": re.compile(r"\bstudents?\b"),
    "military": re.compile(rf"\b(?:military|veterans?|vets|active{_}duty|service{_}members?)\b"),
    "responder": re.compile(rf"\b(?:first{_}responders?|firefighters?|nurses?|teachers?)\b"),
    "referral": re.compile(r"\b(?:refer|referral|referrals|referred|referring)\b"),
    "everyone": re.compile(
        rf"\b(?:everyone|everybody|anyone|anybody|all{_}(?:customers|clients)|any{_}customer)\b"
    ),
}


def groups(text: str) -> frozenset[str]:
    """The groups of people text names."""
    lower = text.lower()
    return frozenset(name for name, pattern in GROUPS.items() if pattern.search(lower))


def mismatch(claimed: frozenset[str], eligible: frozenset[str]) -> str | None:
    """Why a claim's groups do not fit a promotion's, or None when they fit.

    A promotion for no named group is for everyone; a claim naming no group claims nothing
    about eligibility.
    """
    if not eligible or not claimed:
        return None
    if "everyone" in claimed:
        return f"it is only for {', '.join(sorted(eligible))} customers"
    wrong = claimed - eligible - {"everyone"}
    if wrong:
        return f"it is for {', '.join(sorted(eligible))}, not {', '.join(sorted(wrong))} customers"
    return None
