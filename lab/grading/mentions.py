"""What a clause names from the list: its services (by name, alias or a telling word of the
name) and its promotions (by keyword, distinctive word, title or eligibility).

Pure; cached per list, since every clause of every turn asks.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lab.facts.schema import Promotion, Service


@lru_cache(maxsize=64)
def service_patterns(services: tuple[Service, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    patterns = []
    for service in services:
        for name in sorted({service.name, *names(service, services)}, key=len, reverse=True):
            words = r"[\s-]+".join(re.escape(word) for word in re.split(r"[\s-]+", name.lower()))
            patterns.append((service.id, re.compile(rf"\b{words}(?:s|es)?\b")))
    return tuple(patterns)


def names(service: Service, services: tuple[Service, ...]) -> tuple[str, ...]:
    """A service's aliases; for a list that gives none, each word of its name no other has.

    Callers shorten names ("the massage" for "sports massage"); a word that tells the service
    apart is read as naming it, a word shared or generic ("session", "detail") is not.
    """
    words = service.name.lower().split()
    # "packing service" is also "packing": the name without a trailing generic noun.
    head = words[:-1] if len(words) > 1 and words[-1] in _TRAILING else []
    short = (" ".join(head),) if head and " ".join(head) not in _GENERIC_NAME else ()
    if service.aliases:
        return (*service.aliases, *short)
    others = {w for s in services if s is not service for w in s.name.lower().split()}
    telling = tuple(w for w in words if len(w) > 4 and w not in others and w not in _GENERIC_NAME)
    return (*telling, *short)


_TRAILING = frozenset({"service", "services", "session", "visit", "kit", "unit", "move", "moving"})
_GENERIC_NAME = frozenset(
    {"session", "service", "services", "appointment", "visit", "basic", "premium", "standard"}
    | {"initial", "first", "full", "quick", "small", "large", "medium", "regular", "special"}
)


@lru_cache(maxsize=64)
def service_words(services: tuple[Service, ...]) -> frozenset[str]:
    """Every word of the services' names, singular ("move" of "studio move")."""
    return frozenset(
        w.rstrip("s") for s in services for w in re.findall(r"[a-z]+", s.name.lower()) if len(w) > 2
    )


def spans(lower: str, services: tuple[Service, ...]) -> list[tuple[int, int]]:
    """Where lower names a service, as character spans."""
    return [
        match.span()
        for _, pattern in service_patterns(services)
        for match in pattern.finditer(lower)
    ]


def mentions(lower: str, services: tuple[Service, ...]) -> list[tuple[str, int]]:
    """Services named in lower, by position; the longest name wins where names overlap."""
    taken: list[tuple[int, int, str]] = []
    for service_id, pattern in service_patterns(services):
        for match in pattern.finditer(lower):
            if all(match.end() <= start or match.start() >= end for start, end, _ in taken):
                taken.append((match.start(), match.end(), service_id))
    return [(service_id, start) for start, _, service_id in sorted(taken)]


@lru_cache(maxsize=64)
def promo_words(
    promotions: tuple[Promotion, ...], services: tuple[Service, ...]
) -> tuple[str, ...]:
    """What names a listed promotion: its keywords, else its distinctive words (not a service's)
    and the phrases of its title and eligibility ("spring", "new patients", "refer a friend")."""
    own = {w for service in services for w in re.findall(r"[a-z]+", service.name.lower())}
    words: list[str] = []
    for promotion in promotions:
        if promotion.keywords:
            words += [k.lower() for k in promotion.keywords]
            continue
        text = f"{promotion.description} {promotion.id}".lower().replace("_", " ")
        found = re.findall(r"[a-z]+", text)
        words += [w for w in found if len(w) > 5 and w not in _GENERIC and w not in own]
        title = promotion.description.split(":")[0].lower()
        words += [title] if len(title.split()) <= 4 else []
        if promotion.eligibility:
            words.append(" ".join(promotion.eligibility.lower().split()[:2]).rstrip("s"))
    return tuple(dict.fromkeys(words))


_GENERIC = frozenset({"promo", "promotion", "customers", "service", "services", "discount"})


def kin(lower: str, services: tuple[Service, ...]) -> tuple[str, ...]:
    """Services whose name shares a telling word with lower ("quick detail": every detail)."""
    said = {w.rstrip("s") for w in re.findall(r"[a-z]{4,}", lower)}
    return tuple(
        s.id
        for s in services
        if said & {w.rstrip("s") for w in re.findall(r"[a-z]{4,}", s.name.lower())} - _KIN_STOP
    )


_KIN_STOP = _GENERIC_NAME | {"with", "and", "the", "your", "that", "this"}


def counted(text: str, services: tuple[Service, ...]) -> str | None:
    """The service text starts with, if any: what a number before it counts ("two drain...")."""
    head = text.lstrip(" -").lower()
    for service_id, pattern in service_patterns(services):
        if pattern.match(head):
            return service_id
    return None
