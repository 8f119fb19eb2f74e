"""Text search, one rule wherever a person or the Assistant types words to find rows (the
registers' tables, the portfolio's lessons, the Assistant's searches): every word of the query,
case-folded, somewhere in the row's text, in any order. An empty query finds every row."""

from collections.abc import Iterable


def words(query: str | None) -> list[str]:
    """The query's words, case-folded."""
    return [word.casefold() for word in (query or "").split()]


def haystack(*texts: object) -> str:
    """A row's searchable text: its texts joined, case-folded (empty ones left out)."""
    return " ".join(str(text) for text in texts if text).casefold()


def matches(query: str | Iterable[str] | None, text: str) -> bool:
    """Whether every word of `query` (a query, or its `words`) is in `text`, a `haystack`."""
    found = words(query) if query is None or isinstance(query, str) else query
    return all(word in text for word in found)
