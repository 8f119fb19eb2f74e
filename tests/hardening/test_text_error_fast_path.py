"""`cleaning.text_error` passes most text after one range search (`_SUSPECT`): for every code
point, alone and beside ASCII and non-ASCII text, it answers what the three plain searches
answer, so a change to what is refused cannot slip past the fast path."""

from governance import cleaning


def _plain(value: str):
    if cleaning.CONTROL_CHARACTERS.search(value):
        return cleaning.CONTROL_MESSAGE
    if cleaning.SURROGATES.search(value):
        return cleaning.SURROGATE_MESSAGE
    if cleaning.NONCHARACTERS.search(value):
        return cleaning.NONCHARACTER_MESSAGE
    return None


def test_the_fast_path_answers_as_the_plain_searches_for_every_code_point():
    wrong = []
    for point in range(0x110000):
        char = chr(point)
        for value in (char, "a" + char, "é" + char):
            if cleaning.text_error(value) != _plain(value):
                wrong.append(f"U+{point:04X} in {value!r}")
    assert wrong == []
