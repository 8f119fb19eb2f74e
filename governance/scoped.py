"""A context variable held for the length of a block (`holding`): the audit channel and
batch, the notification batch, a request's notes. It is set on entering and given back what
it held before on leaving, whatever the block raised."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def holding(var: ContextVar[T], value: T) -> Iterator[T]:
    """`var` holds `value` inside the block, and what it held before after it."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)
