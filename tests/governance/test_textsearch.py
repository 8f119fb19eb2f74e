"""One text search: every word of the query, case-folded, somewhere in the row's text."""

from governance import textsearch


def test_every_word_in_any_order_case_folded():
    text = textsearch.haystack("Ledger migration", None, "ALPHA", "")
    assert text == "ledger migration alpha"
    assert textsearch.matches("alpha LEDGER", text)
    assert textsearch.matches(["migr"], text)
    assert not textsearch.matches("ledger beta", text)


def test_an_empty_query_finds_every_row():
    assert textsearch.matches("", "anything")
    assert textsearch.matches(None, "")
    assert textsearch.words("  Straße  ") == ["strasse"]
