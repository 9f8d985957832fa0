"""What the agent cannot do, questions about the business, and plain noise.

Pure. Anything that says something but asks for neither a booking nor a refund is out of
scope and gets an honest refusal; only noise, greetings and fragments are "didn't catch that".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lab.events.types import Confirmation, CueKind, UnderstandingKind
from lab.language.phrases import Phrases

UNSUPPORTED = re.compile(
    r"\b(?:"
    r"cancel (?:my |our |the |an? )?(?:\w+ )?"
    r"(?:subscription|membership|account|plan|order|contract)"
    r"|(?:cancel|move|change|modify|update|shift|push back) (?:my|our|(?:the |an |my )?existing)"
    r" (?:\w+ )?(?:appointment|booking|reservation)"
    r"|reschedul\w*|postpone\w*"
    r"|(?:transfer|connect) me|put me (?:through|on to|onto)|(?:speak|talk|speaking|talking)"
    r" (?:to|with)"
    r"|real person|human being|a human|manager|supervisor|representative|operator"
    r"|customer service"
    r"|weather|forecast|temperature|(?:going to|gonna|will it) (?:rain|snow)"
    r"|newsletter|mailing list|gift cards?"
    r"|(?:change|update|reset|edit|fix|new|forgot) (?:my |the |our )?(?:\w+ )?"
    r"(?:address|password|email|phone number|username|payment method|card details)"
    r"|where(?:'s| is) my order|track\w* (?:my |the )?order|order status|status of my order"
    r"|(?:place|make) an? (?:new )?order|order (?:some|me)|(?:want|like|need) to order"
    r")\b"
)
_IDENTITY = re.compile(
    r"\b(?:who (?:is this|are you|am i (?:talking|speaking) (?:to|with))"
    r"|are you (?:a |an )?(?:robot|bot|machine|computer|human|real|person|ai|person)"
    r"|(?:am i|are we) (?:talking|speaking) (?:to|with) (?:a |an )?(?:robot|bot|machine"
    r"|computer|real person|person|human|ai)"
    r"|is this (?:a )?(?:robot|bot|machine|recording|real person|human))\b"
)
_CAPABILITIES = re.compile(
    r"\b(?:what (?:else )?(?:can|do) you (?:do|help with|offer)|how can you help"
    r"|what are my options|what is this (?:line|number|service|for)|what can i do here"
    r"|what do you handle|what are you for)\b|^(?:help|i need help|can you help(?: me)?)$"
)
_BUSINESS_FACT = re.compile(
    r"\b(?:open|opening|close|closing|hours|price|prices|cost|costs|how much|charge|fee|fees"
    r"|rates?|where are you|address|located|location|parking|directions|services"
    r"|do you (?:do|offer)|policy|policies"
    r"|pay (?:by|with|in)|payment|cash|credit cards?|walk ?ins?|discounts?|promotions?|deals?"
    r"|website|phone number|email address)\b"
)
_ABOUT_THE_BUSINESS = re.compile(
    r"\b(?:are you open|(?:do|will) you (?:open|close)|open(?:ing)? (?:hours|times)"
    r"|what time do you (?:open|close)|closing time|hours|prices?|costs?"
    r"|how much (?:is|does|do|are)|policy|policies"
    # A question about what would happen ("if I cancel") asks for the policy, not for the act.
    r"|if (?:i|we) (?:cancel|reschedule|change|move|miss|skip|don't (?:show|come|turn up))"
    r"|if (?:i'm|i am|we're|we are|i'm running|i run) late)\b"
)
# An elliptical question that leans on the one before it: "And on Saturday?", "What about Sundays?"
_FOLLOW_UP = re.compile(
    r"^(?:(?:so|oh|ok|okay|and|also|plus) )*(?:and|also|plus|what about|how about|same for"
    r"|is that|is it|does that|what if it's|and what about|and how about)\b"
)
_OWN_TOPIC = re.compile(
    r"\b(?:book|booking|appointment|slot|refund|order|money back|cancel|reschedul\w*"
    r"|available|availability|free|come in)\b"
)
# A question said as a request: "Can you tell me your prices?"
_TELL_ME = re.compile(
    r"\b(?:(?:can|could|would|will) you (?:tell|give|send|let) me|tell me|i'd like to know"
    r"|i would like to know|i want to know|do you know|i was wondering)\b"
)
_QUESTION = re.compile(
    r"^(?:so |and |but |um |uh |oh |ok |okay |also |yes |yeah |sorry |and )*"
    r"(?:what|when|where|who|why|how|which"
    r"|do you|does|are you|is (?:it|there|this)|can i|could i|will|would it)\b"
)
_ASKING = re.compile(
    r"^(?:(?:please|so|um|uh|hi|hello|hey|and) )*(?:can|could|would|will) you\b"
    r"|\b(?:i want|i need|i'd like|i would like|i wanna|i'm looking for|i am looking for|help me"
    r"|how do i|how can i|can i|could i|may i|tell me|give me|i have a question|is it possible"
    r"|i'm calling (?:about|to|because)|i am calling)\b"
)
_GREETING = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|how are you(?: doing)?"
    r"|how's it going|thanks|thank you|bye|goodbye|cheers)\b ?)+$"
)
# Words that carry no request of their own; two words beyond these make a sentence.
_FILLER = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "so",
        "um",
        "uh",
        "er",
        "ah",
        "oh",
        "hmm",
        "mm",
        "yes",
        "no",
        "ok",
        "okay",
        "i",
        "me",
        "my",
        "you",
        "your",
        "it",
        "is",
        "was",
        "be",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "that",
        "this",
        "there",
        "here",
        "hi",
        "hello",
        "hey",
        "well",
        "just",
        "like",
        "um",
        "really",
        "very",
        "what",
        "huh",
        "yeah",
        "sorry",
        "please",
        "thanks",
        "thank",
        "right",
        "now",
        "then",
        "its",
        "it's",
        "i'm",
        "im",
    ]
)


@dataclass(frozen=True)
class Scope:
    kind: UnderstandingKind
    cue_kind: CueKind
    cue: str | None


def classify_identity(phrases: Phrases) -> Scope | None:
    """ "Who am I speaking to?", "Are you a robot?": asked before anything else is read."""
    if cue := phrases.first(_IDENTITY):
        return Scope(UnderstandingKind.QUESTION, "identity", cue)
    return None


def classify_business_question(phrases: Phrases) -> Scope | None:
    """A question about hours, prices or policies, read before any day or time it names."""
    asked = phrases.first(_QUESTION) or phrases.first(_TELL_ME)
    if asked and (cue := phrases.first(_ABOUT_THE_BUSINESS)):
        return Scope(UnderstandingKind.QUESTION, "business_fact", cue)
    return None


def classify_follow_up(phrases: Phrases, *, after_question: bool) -> Scope | None:
    """Right after a question about the business, "And on Saturday?" asks the same again.

    Only an elliptical turn that names no booking or refund of its own inherits the topic.
    """
    if after_question and follows_up(phrases):
        return Scope(UnderstandingKind.QUESTION, "business_fact", phrases.first(_FOLLOW_UP))
    return None


def follows_up(phrases: Phrases) -> bool:
    """Whether a turn is worded as a follow-up ("And on Saturday?"), whatever came before."""
    return phrases.first(_FOLLOW_UP) is not None and phrases.first(_OWN_TOPIC) is None


def is_general_price_question(phrases: Phrases) -> bool:
    """ "What are your prices?": a price asked about with nothing named to price."""
    words = {token.text for token in phrases.spoken.tokens}
    return bool(words & _PRICE_WORDS) and words <= _PRICE_WORDS | _GENERAL_WORDS


_PRICE_WORDS = frozenset({"price", "prices", "pricing", "cost", "costs", "charge", "rates", "much"})
_GENERAL_WORDS = _FILLER | {
    *("are", "do", "does", "how", "list", "things", "stuff", "everything", "services"),
    *("can", "could", "get", "have", "tell", "know", "send", "give", "usual", "typical", "all"),
    *("we", "us", "our", "yours", "general", "roughly", "about", "like", "kind", "sort", "whats"),
    *("what's", "which", "any", "some", "the", "id", "i'd", "want", "need", "look", "looking"),
}


def classify_question(phrases: Phrases) -> Scope | None:
    """A question about what the agent does or about the business, if the utterance is one."""
    if cue := phrases.first(_CAPABILITIES):
        return Scope(UnderstandingKind.QUESTION, "capabilities", cue)
    if phrases.first(_QUESTION) and (cue := phrases.first(_BUSINESS_FACT)):
        return Scope(UnderstandingKind.QUESTION, "business_fact", cue)
    return None


def classify_scope(phrases: Phrases, *, asks: bool) -> Scope:
    """Out of scope or noise, for an utterance that is no request, question or reply."""
    line = phrases.line
    if cue := phrases.first(UNSUPPORTED):
        return Scope(UnderstandingKind.UNSUPPORTED, "out_of_scope", cue)
    if _GREETING.match(line) or not line:
        return Scope(UnderstandingKind.UNCLEAR, "noise", phrases.first(_GREETING))
    if asks or phrases.find(_QUESTION) or phrases.find(_ASKING):
        return Scope(UnderstandingKind.UNSUPPORTED, "out_of_scope", phrases.spoken.text.strip())
    words = [t.text for t in phrases.spoken.tokens if t.text.isalpha() and t.text not in _FILLER]
    if len(words) >= 2:
        return Scope(UnderstandingKind.UNSUPPORTED, "out_of_scope", phrases.spoken.text.strip())
    return Scope(UnderstandingKind.UNCLEAR, "noise", phrases.spoken.text.strip() or None)


def confirmation_of(kind: UnderstandingKind) -> Confirmation:
    """A turn that is not a reply leaves any pending proposal unconfirmed, unless it is noise."""
    return Confirmation.UNCLEAR if kind is UnderstandingKind.UNCLEAR else Confirmation.NOT_CONFIRM
