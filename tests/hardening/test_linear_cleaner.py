"""The number cleaners are linear in their input: a cell of a million characters gets its
answer at once. Before, a run of digits followed by a letter backtracked quadratically in
the comma check (a 32,000-character cell took seconds, a million characters hours), and
int() of a million digits took minutes; a huge exponent overflowed into a 500."""

import pytest

from governance import cleaning

MILLION = 1_000_000


@pytest.mark.parametrize(
    ("value", "nullable", "signed"),
    [
        ("1" * MILLION + ",x", (None, None), (None, "Must be a number.")),
        ("1," * (MILLION // 2) + ".x", (None, None), (None, "Must be a number.")),
        ("9" * MILLION, (None, "Too large."), (None, "Too large.")),
        ("1e999999999", (None, "Too large."), (None, "Too large.")),
        ("-1e999999999", (None, None), (None, "Too large.")),
    ],
    ids=["digits then a letter", "groups then a letter", "a million digits", "exponent", "neg"],
)
def test_long_and_huge_numbers_are_answered(value, nullable, signed):
    assert cleaning.nullable_number(value) == nullable
    assert cleaning.signed_number(value) == signed


@pytest.mark.parametrize(
    "value", ["9" * MILLION, "-" + "9" * MILLION, "1e999999999", "1" * MILLION + ",x"]
)
def test_huge_integers_are_refused_before_they_are_converted(value):
    assert cleaning.signed_integer(value)[1] in ("Too large.", "Must be a whole number.")
    assert cleaning.bounded_integer(value, low=1, high=5)[1] in (
        "Must be between 1 and 5.",
        "Must be a whole number.",
    )


def test_the_integer_cleaners_still_take_what_they_took():
    assert cleaning.bounded_integer("0003", low=1, high=5) == (3, None)
    assert cleaning.bounded_integer("5.0", low=1, high=5) == (5, None)
    assert cleaning.bounded_integer("6", low=1, high=5) == (None, "Must be between 1 and 5.")
    assert cleaning.bounded_integer("30", low=0, high=100, step=10) == (30, None)
    assert cleaning.signed_integer("-9999999999999999") == (-9999999999999999, None)
    assert cleaning.signed_integer("10000000000000000") == (None, "Too large.")
    assert cleaning.nullable_number("1,234.5")[0] is not None
    assert cleaning.nullable_number(",,1,2") == (None, cleaning.AMBIGUOUS_MESSAGE)


def test_the_comma_pattern_accepts_what_it_accepted():
    old = r"[+-]?[\d,]*\d[\d,]*(\.\d*)?"
    import itertools
    import re

    for length in range(7):
        for chars in itertools.product("1,.x-", repeat=length):
            text = "".join(chars)
            assert bool(re.fullmatch(old, text)) == bool(
                cleaning.NUMBER_LIKE_WITH_COMMA.fullmatch(text)
            ), text
