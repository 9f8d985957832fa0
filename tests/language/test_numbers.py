from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.language.amounts import parse_amount_cents, read_amount
from lab.language.numbers import (
    HOMOPHONES,
    int_to_words,
    parse_digit_string,
    read_digit_string,
    tokenize,
    words_to_int,
)

DIGIT_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
SOUNDALIKES = {digit: word for word, digit in HOMOPHONES.items()}


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("zero", 0),
        ("seven", 7),
        ("twelve", 12),
        ("forty", 40),
        ("twenty five", 25),
        ("twenty-five", 25),
        ("Forty-Five", 45),
        ("a hundred", 100),
        ("one hundred and five", 105),
        ("one hundred five", 105),
        ("twelve hundred", 1200),
        ("forty five hundred", 4500),
        ("four thousand five hundred twelve", 4512),
        ("a thousand and one", 1001),
        ("two hundred thousand", 200_000),
        ("one million two hundred thousand and five", 1_200_005),
        ("4512", 4512),
        ("4,512", 4512),
    ],
)
def test_it_reads_a_number_said_in_words_or_written(text: str, number: int) -> None:
    assert words_to_int(text) == number


@pytest.mark.parametrize(
    "text",
    ["", "five one", "twenty thirty", "hundred", "one hundred and", "and five", "a", "25.50", "x"],
)
def test_it_reads_no_number_from_words_that_do_not_form_one(text: str) -> None:
    assert words_to_int(text) is None


@pytest.mark.parametrize(
    ("number", "words"),
    [
        (0, "zero"),
        (13, "thirteen"),
        (45, "forty-five"),
        (105, "one hundred five"),
        (4512, "four thousand five hundred twelve"),
        (2_000_040, "two million forty"),
    ],
)
def test_it_says_a_number_in_words(number: int, words: str) -> None:
    assert int_to_words(number) == words


def test_it_refuses_to_say_a_negative_number() -> None:
    with pytest.raises(ValueError, match="negative"):
        int_to_words(-1)


@given(st.integers(min_value=0, max_value=999_999_999))
def test_any_number_said_in_words_reads_back_as_itself(number: int) -> None:
    words = int_to_words(number)
    assert words_to_int(words) == number
    assert words_to_int(words.replace("-", " ")) == number


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        ("4512", "4512"),
        ("4,512", "4512"),
        ("#4512", "4512"),
        ("four five one two", "4512"),
        ("Four, five, one, two", "4512"),
        ("4-5-1-2", "4512"),
        ("forty five twelve", "4512"),
        ("forty-five twelve", "4512"),
        ("four thousand five hundred twelve", "4512"),
        ("forty five hundred", "4500"),
        ("four oh five", "405"),
        ("zero zero seven", "007"),
        ("45 12", "4512"),
        ("for 5.1 to", "4512"),
        ("for five won too", "4512"),
        ("four ate", "48"),
        ("for 512", "4512"),
    ],
)
def test_it_reads_a_digit_string_however_it_was_spelled(text: str, digits: str) -> None:
    assert parse_digit_string(text) == digits


@pytest.mark.parametrize("text", ["", "for", "to too", "oh", "Tuesday", "4512 too", "9:30"])
def test_it_reads_no_digit_string_from_soundalikes_alone_or_other_words(text: str) -> None:
    assert parse_digit_string(text) is None


@pytest.mark.parametrize(
    ("text", "stop", "digits", "heard"),
    [
        # "forty dollars" (from token 5 on) is already read as an amount.
        ("four five one two for forty dollars", 5, "4512", "four five one two"),
        ("4512 too, please", None, "4512", "4512"),
        ("for 512 to Tuesday", None, "4512", "for 512"),
        ("for 5.1 to.", None, "4512", "for 5.1 to"),
        ("four five one two to", None, "45122", "four five one two to"),
    ],
)
def test_a_soundalike_is_a_digit_only_where_the_spelled_number_ends(
    text: str, stop: int | None, digits: str, heard: str
) -> None:
    reading = read_digit_string(tokenize(text), 0, stop)
    assert reading is not None
    assert (reading.value, reading.heard) == (digits, heard)


@given(st.text(alphabet="0123456789", min_size=1, max_size=12))
def test_any_digit_string_spelled_digit_by_digit_reads_back(digits: str) -> None:
    assert parse_digit_string(" ".join(DIGIT_WORDS[int(digit)] for digit in digits)) == digits


@given(st.data())
def test_any_digit_string_with_soundalikes_for_some_digits_reads_back(data: st.DataObject) -> None:
    digits = data.draw(st.text(alphabet="0123456789", min_size=2, max_size=10))
    anchor = data.draw(st.integers(min_value=0, max_value=len(digits) - 1))
    words = [
        SOUNDALIKES[digit]
        if index != anchor and digit in SOUNDALIKES and data.draw(st.booleans())
        else DIGIT_WORDS[int(digit)]
        for index, digit in enumerate(digits)
    ]
    assert parse_digit_string(" ".join(words)) == digits


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("$40", 4000),
        ("$ 40", 4000),
        ("40 dollars", 4000),
        ("forty dollars", 4000),
        ("Forty Dollars", 4000),
        ("$25.50", 2550),
        ("$25.5", 2550),
        ("twenty five dollars", 2500),
        ("twenty-five dollars and fifty cents", 2550),
        ("twenty five dollars fifty cents", 2550),
        ("$40 and 5 cents", 4005),
        ("40 bucks", 4000),
        ("a hundred dollars", 10000),
        ("$1,200.00", 120000),
        ("fifty cents", 50),
        ("25.00", 2500),
        ("one dollar", 100),
    ],
)
def test_it_reads_an_amount_in_cents(text: str, cents: int) -> None:
    assert parse_amount_cents(text) == cents


@pytest.mark.parametrize("text", ["", "40", "forty", "4512", "$", "dollars", "25.5", "9:30"])
def test_it_reads_no_amount_without_a_currency_or_a_price_shape(text: str) -> None:
    assert parse_amount_cents(text) is None


@given(st.integers(min_value=0, max_value=9_999_999), st.integers(min_value=1, max_value=99))
def test_any_amount_said_in_words_reads_back_in_cents(dollars: int, cents: int) -> None:
    said = f"{int_to_words(dollars)} dollars and {int_to_words(cents)} cents"
    assert parse_amount_cents(said) == dollars * 100 + cents


@given(st.integers(min_value=0, max_value=9_999_999), st.integers(min_value=0, max_value=99))
def test_any_amount_written_with_a_dollar_sign_reads_back(dollars: int, cents: int) -> None:
    assert parse_amount_cents(f"${dollars:,}.{cents:02d}") == dollars * 100 + cents


def test_an_amount_reading_keeps_the_fragment_it_was_heard_as() -> None:
    spoken = tokenize("Refund twenty-five dollars and fifty cents, please.")
    reading = read_amount(spoken, 1)
    assert reading is not None
    assert (reading.value, reading.heard, reading.first, reading.end) == (
        2550,
        "twenty-five dollars and fifty cents",
        1,
        7,
    )


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Hi, I'd like 9 a.m.", ["hi", "i'd", "like", "9", "am"]),
        ("Tuesday 2PM", ["tuesday", "2", "pm"]),
        ("Thursday 2p.m.", ["thursday", "2", "pm"]),
        ("I\u2019d like $25.50 on #4,512.", ["i'd", "like", "$", "25.50", "on", "#", "4,512"]),
        ("[BLANK_AUDIO]", []),
        ("[Music] Yes.", ["yes"]),
        ("twenty-five", ["twenty", "five"]),
        ("...", []),
    ],
)
def test_it_splits_text_into_lowercase_tokens(text: str, tokens: list[str]) -> None:
    assert [token.text for token in tokenize(text).tokens] == tokens


def test_a_token_knows_whether_punctuation_or_the_end_follows_it() -> None:
    spoken = tokenize("four five, one two")
    assert [token.pause_after for token in spoken.tokens] == [False, True, False, True]


@given(st.text(max_size=60))
def test_every_token_is_heard_as_a_fragment_of_the_text(text: str) -> None:
    spoken = tokenize(text)
    for index in range(len(spoken.tokens)):
        assert spoken.fragment(index, index + 1) in text
