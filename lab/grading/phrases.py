"""The words that tell what an agent sentence is about: topics, promises, refusals, hand-offs.

Pure: compiled patterns over lowercase text with straight apostrophes. Hyphens and spaces are
interchangeable ("money-back", "money back"), as speech recognition writes either.
"""

from __future__ import annotations

import re
from typing import Literal

from lab.facts.schema import Capability

PolicyTopic = Literal["refund", "cancellation", "reschedule", "other"]

_ = r"[\s-]+"  # a word boundary inside a phrase: space or hyphen

REFUND = re.compile(
    rf"\b(?:refund\w*|money{_}back|reimburs\w*|store{_}credit|credit{_}note|voucher|"
    rf"non(?:{_})?refundable|returns?|cash{_}back)\b"
)
CANCELLATION = re.compile(rf"\b(?:cancel\w*|no{_}shows?)\b")
RESCHEDULE = re.compile(
    rf"\b(?:reschedul\w*|(?:move|moving|change|changing|shift|push)(?:{_}(?:it|back|the|your|an|"
    rf"appointment|booking|date|time))+)\b"
)
FEE = re.compile(r"\b(?:fee|fees|charge[sd]?|penalty|cost|costs|pay)\b")
HOURS = re.compile(
    rf"\b(?:open|opens|opening{_}(?:hours|times?)|close|closes|closed|closing|shut|"
    rf"(?:our|your|the|business|shop|store|opening|weekday|weekend|saturday|sunday){_}hours|"
    rf"hours{_}(?:are|on)|24/7|around{_}the{_}clock|"
    # "On Saturdays it's eight to twelve": a day said as a habit, then its times.
    rf"(?:mon|tues|wednes|thurs|fri|satur|sun)days{_}(?:it's|we're|we{_}are|it{_}is))\b"
)
# "an opening on Thursday" offers a slot; it says nothing about opening hours.
SLOT_OPENING = re.compile(rf"\b(?:an|one|no|any|the|first|next){_}openings?\b|\bopenings\b")
ALWAYS_OPEN = re.compile(
    rf"24/7|\b(?:open{_}24{_}hours|24{_}hours{_}a{_}day|around{_}the{_}clock|all{_}night|"
    rf"never{_}close)\b"
)
EVERY_DAY = re.compile(
    rf"\b(?:every{_}day|everyday|seven{_}days(?:{_}a{_}week)?|7{_}days(?:{_}a{_}week)?|daily|"
    rf"all{_}week)\b"
)
HOLIDAY = re.compile(
    rf"\b(?:holidays?|christmas|new{_}year'?s|thanksgiving|easter|seasonal|"
    rf"in{_}(?:the{_})?(?:summer|winter|spring|fall|autumn))\b"
)
VAGUE_HOURS = re.compile(
    rf"\b(?:open{_}late|late{_}(?:opening|nights?)|open{_}early|early{_}opening)\b"
)
NOT_OPEN = re.compile(
    rf"\b(?:closed|shut|not{_}open|aren't{_}open|are{_}not{_}open|don't{_}open|do{_}not{_}open|"
    rf"never{_}open|isn't{_}open|won't{_}be{_}open)\b"
)
AVAILABILITY = re.compile(
    rf"\b(?:available|availability|slots?|spots?|openings?|free{_}(?:at|on|slot)|"
    rf"fully{_}booked|book(?:ed)?{_}(?:you|it|that|in)|booked|fit{_}you{_}in|"
    rf"i{_}have|i've{_}got|we{_}have|there's|how{_}about|what{_}about|i{_}can{_}do|"
    rf"appointments?{_}(?:on|at)|already{_}done|that's{_}done)\b|^done\b"
)
NO_AVAILABILITY = re.compile(
    rf"\b(?:nothing{_}(?:for|on|available|free|left|open|until)|no{_}(?:slots?|openings?|"
    rf"availability|appointments?)|fully{_}booked|"
    rf"none{_}(?:left|available))\b"
)
TRANSACTION = re.compile(rf"\border\b|\brefund{_}of\b|\bi{_}(?:can|'ll|will|'ve|have){_}refund")
PROMO = re.compile(
    rf"\b(?:discount\w*|deals?|specials?|promotion\w*|promo|coupons?|sale|"
    rf"\d+(?:{_})?(?:%|percent){_}off|half{_}price|two{_}for{_}one|bogo)\b"
)
FREE = re.compile(
    rf"\b(?:free(?:{_}of{_}charge)?|no{_}(?:charge|fee|cost)|complimentary|"
    rf"on{_}the{_}house|won't{_}(?:be{_})?charge\w*|without{_}(?:a{_})?(?:fee|charge)|"
    rf"(?:never|don't|do{_}not|doesn't){_}charge\w*|costs?{_}nothing)\b"
)
ANYTIME = re.compile(
    rf"\b(?:any(?:{_})?time|always|at{_}any{_}point|same{_}day|last{_}minute|whenever|no{_}notice)\b"
)
STORE_CREDIT = re.compile(rf"\b(?:store{_}credit|credit{_}note|voucher|gift{_}card)\b")
ORIGINAL_PAYMENT = re.compile(
    rf"\b(?:money{_}back|original{_}payment|back{_}(?:on|to){_}(?:your|the){_}card|"
    rf"cash{_}refund|full{_}refund|refund(?:ed)?{_}(?:to|on){_}(?:your|the){_}card|"
    rf"cash{_}back)\b"
)
NO_REFUNDS = re.compile(
    rf"\b(?:no{_}refunds|non(?:{_})?refundable|not{_}refundable|(?:don't|do{_}not|can't|cannot)"
    rf"{_}(?:do|give|offer|issue){_}refunds|all{_}sales{_}(?:are{_})?final)\b"
)
REFUNDS_OFFERED = re.compile(
    rf"\b(?:(?:we|you){_}(?:do|can|offer|give){_}(?:get{_}|a{_}|full{_})?refunds?|"
    rf"refunds{_}are{_}(?:available|possible)|eligible{_}for{_}a{_}refund)\b"
)
UNCONDITIONAL = re.compile(
    rf"\b(?:no{_}questions{_}asked|for{_}any{_}reason|whatever{_}the{_}reason|"
    rf"(?:money{_}back{_})?guarantee[ds]?|any{_}reason)\b"
)
UNLISTED_PROMISE = re.compile(
    rf"\b(?:warrant(?:y|ies|ied)|lifetime|price{_}match\w*|loyalty{_}(?:points|program)|"
    rf"loaner{_}bikes?|free{_}pick(?:{_})?up|free{_}delivery)\b"
)
OTHER_PROMISE = re.compile(
    rf"\b(?:i{_}promise|we{_}promise|waive\w*|make{_}it{_}up{_}to{_}you|compensat\w*|"
    rf"guaranteed{_}(?:by|to)|i{_}(?:can|will|'ll){_}make{_}sure)\b"
)
DECLINE = re.compile(
    rf"\b(?:i{_}can't|i{_}cannot|i{_}can{_}not|i'm{_}(?:not{_}able|unable)|i{_}am{_}(?:not{_}able|"
    rf"unable)|i{_}won't{_}be{_}able|i{_}don't{_}have{_}(?:access|a{_}way|the{_}ability)|"
    rf"i'm{_}not{_}allowed|not{_}something{_}i{_}can|unable{_}to|i'm{_}afraid{_}not|"
    rf"isn't{_}something{_}i|that's{_}not{_}something{_}i|there's{_}no{_}way{_}for{_}me)\b"
)
UNKNOWN = re.compile(
    rf"\b(?:i{_}don't{_}(?:know|have{_}(?:that|any|information|details))|i'm{_}not{_}sure|"
    rf"(?:doesn't|does{_}not|don't){_}cover|no{_}information|not{_}in{_}(?:my|our){_}"
    rf"(?:notes|knowledge)|i{_}can't{_}find)\b"
)
HANDOFF = re.compile(
    rf"\b(?:call{_}(?:the{_}shop|us|back)|(?:speak|talk){_}(?:to|with){_}(?:the|our|a){_}"
    rf"(?:staff|team|mechanics?|counter)|(?:ask|tell|visit){_}(?:the|our){_}(?:counter|shop|"
    rf"staff|team)|in{_}person|come{_}(?:in|by)|drop{_}by|stop{_}by)\b"
)
QUESTION_START = re.compile(
    r"^(?:would|could|can|shall|should|do|does|is|are|will|may|what|which|when|how)\b"
)
AFFIRM = re.compile(
    r"^(?:yes|yeah|yep|yup|sure|of course|absolutely|certainly|definitely|correct|"
    r"that's right|that is right|we do|we are|we can|i can)\b(?!')"
)
DENY = re.compile(r"^(?:no|nope|unfortunately not|i'm afraid not|sorry,? no|not really)\b")
HEDGE = re.compile(
    rf"\b(?:about|around|roughly|approximately|approx|ish|or{_}so|give{_}or{_}take|"
    rf"just{_}(?:under|over)|a{_}(?:little|bit){_}(?:over|under|more|less)|somewhere)\b"
)
# What the business does or has that the list may not cover ("we sell e-bikes", "parking").
BUSINESS_FACT = re.compile(
    rf"\b(?:we|we're|we've|our|the{_}shop|the{_}store|there's|there{_}is|it's)\b.*\b(?:sell|sells|"
    rf"stock|stocks|carry|carries|offer|offers|provide|provides|work{_}on|repair|repairs|fix|"
    rf"fixes|accept|accepts|ship|ships|deliver|delivers|located|based|parking|certified|"
    rf"speciali[sz]e\w*|brands?|in{_}business|founded|family{_}owned)\b"
    rf"|\bpayments?\b.*\b(?:taken|made|due|accepted)\b"
)
# "Let me check a refund of $40.00": what the agent is about to look up is the caller's request
# read back, not a fact; the lookup's answer is what gets checked.
ABOUT_TO_CHECK = re.compile(
    rf"^(?:(?:got{_}it|ok(?:ay)?|sure|right|alright),?{_})?(?:let{_}me|i'll|i{_}will){_}"
    rf"(?:check|look{_}(?:up|into|at)|see{_}(?:about|if))\b"
)
IDENTIFIER_CUES = frozenset({"order", "#", "reference", "ref", "code", "id", "confirmation"})

# Promises of a capability, said by the agent ("I'll put you through") or asked of it by the
# caller ("can you put me through"). The named-person form is checked before the plain one.
_WHO = r"(?:you|me|him|her|them|us)"
CAPABILITY_PHRASES: tuple[tuple[Capability, re.Pattern[str]], ...] = (
    (
        Capability.TRANSFER_TO_NAMED_PERSON,
        re.compile(
            rf"\b(?:transfer|put|connect|patch|pass|hand|forward)\w*{_}(?:{_WHO}{_})?"
            rf"(?:through{_}|over{_}|across{_}|on{_})?(?:directly{_})?to{_}(?:our{_}|the{_}|my{_}|your{_})?"
            rf"(?:manager|supervisor|owner|boss|head{_}mechanic|[a-z]+{_}the{_}manager)"
            rf"|\b(?:get|have){_}(?:the{_}|our{_})?(?:manager|owner|supervisor){_}(?:to{_})?"
            rf"(?:call|ring|speak|talk)"
        ),
    ),
    (
        Capability.TRANSFER_CALL,
        re.compile(
            rf"\b(?:transfer(?:ring)?{_}(?:{_WHO}|your{_}call|the{_}call|calls)|put(?:ting)?{_}{_WHO}"
            rf"{_}through|connect(?:ing)?{_}{_WHO}{_}(?:to|with)|patch(?:ing)?{_}{_WHO}{_}through|"
            rf"forward(?:ing)?{_}(?:your|the){_}call|pass(?:ing)?{_}{_WHO}{_}(?:over|on){_}to|"
            rf"hand(?:ing)?{_}{_WHO}{_}(?:over|off){_}to)\b"
        ),
    ),
    (
        Capability.ACCESS_EXTERNAL_RECORDS,
        re.compile(
            rf"\b(?:pull(?:ed|ing)?{_}up|look(?:ed|ing)?{_}(?:up|at)|access|check(?:ed)?|see|"
            rf"bring{_}up|found|find|open(?:ed)?){_}(?:\w+{_}){{0,3}}?(?:your|the|their){_}"
            rf"(?:\w+{_})?(?:records?|account|history|file|profile|invoices?|purchase{_}history|"
            rf"past{_}orders|details{_}on{_}file)\b"
        ),
    ),
    (
        Capability.LOOKUP_ORDER_STATUS,
        re.compile(
            rf"\b(?:status{_}of{_}(?:your|my|the){_}(?:[a-z]+{_})?(?:order|repair|bike|claim|referral)|track(?:ing)?{_}"
            rf"(?:your|my|the){_}(?:order|repair|package|delivery)|where{_}(?:your|my){_}"
            rf"(?:order|bike|repair){_}is|(?:your|the){_}(?:bike|repair|order){_}is{_}"
            rf"(?:ready|done|finished|on{_}its{_}way|being{_}worked))\b"
        ),
    ),
    (
        Capability.RESCHEDULE_APPOINTMENT,
        re.compile(
            rf"\b(?:i(?:'ll|{_}will|{_}can|'ve|{_}have)?|let{_}me|we(?:'ll|{_}can)){_}(?:go{_}ahead{_}"
            rf"and{_})?(?:reschedul\w*|mov(?:e|ed)|chang(?:e|ed)|updat(?:e|ed)|shift(?:ed)?|push(?:ed)?{_}back)"
            rf"{_}(?:it|your|the|that)|\bcan{_}you{_}(?:reschedule|move|change){_}my\b"
        ),
    ),
    (
        Capability.CANCEL_APPOINTMENT,
        re.compile(
            rf"\b(?:i(?:'ll|{_}will|{_}can|'ve|{_}have)?|let{_}me|we(?:'ll|{_}can)){_}(?:go{_}ahead"
            rf"{_}and{_})?cancel(?:led|ed)?{_}(?:it|your|the|that)|\bcan{_}you{_}cancel{_}my\b"
        ),
    ),
    (
        Capability.TAKE_PAYMENT,
        re.compile(
            rf"\b(?:take|process|charge|run)\w*{_}(?:your{_}|a{_}|the{_})(?:[a-z]+{_})?(?:card|payment|"
            rf"credit{_}card|card{_}details|card{_}number)|pay{_}(?:now{_})?(?:over{_}the{_}phone|"
            rf"by{_}card{_}now)\b"
        ),
    ),
    (
        Capability.SEND_CONFIRMATION,
        re.compile(
            rf"\b(?:text|email|e{_}mail|send|sent|message)(?:ed|ing)?{_}(?:{_WHO}{_})?"
            rf"(?:a{_}|an{_}|the{_})?(?:confirmation|receipt|reminder|text|email|link|invoice|"
            rf"details)\b|\b(?:i|i've|i'll|i{_}will|we've|we'll){_}(?:just{_})?(?:sen[dt]|"
            rf"forward(?:ed)?|fax(?:ed)?|shared?){_}(?:your|those|these){_}[a-z]+{_}to\b|"
            rf"\b(?:i|i've|i{_}have|i'll|i{_}will|let{_}me|we'll|we've){_}(?:just{_}|also{_})?"
            rf"(?:text|email|e{_}mail|sms|messag)(?:ed|e)?{_}(?:it|that|this|them|{_WHO})\b|"
            rf"\b(?:i|i've|i'll|i{_}will|we'll){_}(?:just{_})?(?:sen[dt]|forward(?:ed)?){_}"
            rf"(?:it|that|this|them){_}(?:over|across|to{_}you)|\byou'll{_}(?:get|receive){_}"
            rf"(?:a|an|the){_}(?:text|email|reminder|confirmation|message|receipt)\b"
        ),
    ),
    (
        Capability.ANSWER_POLICY,
        re.compile(rf"\b(?:i|we){_}can{_}(?:also{_})?answer{_}(?:any{_}|your{_})?questions\b"),
    ),
    (
        Capability.TAKE_MESSAGE,
        re.compile(
            rf"\b(?:take{_}(?:a|your){_}message|pass{_}(?:it|this|that|your{_}(?:message|question))"
            rf"{_}(?:on|along)|have{_}someone{_}(?:call|ring|get{_}back)|(?:someone|the{_}team|"
            rf"a{_}mechanic|the{_}shop|staff){_}will{_}(?:call|ring|get{_}back)|call{_}you{_}back)\b"
        ),
    ),
    (
        Capability.REFUND_ORDER,
        re.compile(
            rf"\b(?:i(?:'ll|{_}will|{_}can|'ve|{_}have)?|let{_}me){_}(?:go{_}ahead{_}and{_})?"
            rf"(?:refund(?:ed)?|process(?:ed)?{_}(?:a|the|your){_}refund|issue(?:d)?{_}(?:a|the)"
            rf"{_}refund)\b"
        ),
    ),
    (
        Capability.BOOK_APPOINTMENT,
        re.compile(
            rf"\b(?:i(?:'ll|{_}will|{_}can|'ve|{_}have)?|let{_}me){_}(?:go{_}ahead{_}and{_})?"
            rf"(?:book(?:ed)?|schedul(?:e|ed)|reserv(?:e|ed)|pencil(?:led)?){_}(?:you|it|that|"
            rf"an|a|your|appointments)\b|\b(?:i|we){_}can{_}(?:also{_})?help{_}you{_}book\b"
        ),
    ),
)

TOPICS: tuple[tuple[PolicyTopic, re.Pattern[str]], ...] = (
    ("refund", REFUND),
    ("cancellation", CANCELLATION),
    ("reschedule", RESCHEDULE),
)


def normal(text: str) -> str:
    """Lowercase with straight apostrophes; as long as text, so offsets carry over."""
    return text.lower().replace("\u2019", "'")
