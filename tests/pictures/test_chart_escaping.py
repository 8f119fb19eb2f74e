"""The pictures escape with `html.escape` called directly: the same text as Django's
`escape` and `conditional_escape` for every class of value a stored field can hold."""

from decimal import Decimal

import pytest
from django.utils.html import conditional_escape, escape
from django.utils.safestring import mark_safe

from governance.charts import base

VALUES = [
    "plain",
    "<script>alert('x')</script>",
    "a \"quoted\" & <tagged> 'value'",
    "NUL\x00inside",
    "lone \ud800 surrogate",
    "ünïcödé — \u201cquotes\u201d \u2018single\u2019",
    "x" * 10_000,
    "",
    42,
    Decimal("1E+400"),
    float("nan"),
    None,
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_escaping_matches_djangos(value):
    assert base._e(value) == str(escape(str(value)))
    assert base._conditional(value) == str(conditional_escape(value))


def test_a_safe_value_is_kept_as_it_is():
    safe = mark_safe("<b>bold</b>")
    assert base._conditional(safe) == str(conditional_escape(safe)) == "<b>bold</b>"
