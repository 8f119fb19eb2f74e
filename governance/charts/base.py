"""The frame every picture shares: `Chart` and its table `Cell`, the SVG element with its
title, description and patterns, RAG marks and their legend, money on an axis, and small
helpers (ticks, label placement, counting)."""

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from django.utils.safestring import SafeString, mark_safe

RAG_LETTERS = {"Red": "R", "Amber": "A", "Green": "G", "Blue": "B", "None": "\u2013"}
RAG_WORDS = {"Red": "Red", "Amber": "Amber", "Green": "Green", "Blue": "Blue", "None": "No RAG"}
RAG_ORDER = ["Red", "Amber", "Green", "Blue", "None"]


@dataclass
class Cell:
    """One table cell: text, an optional link, optional classes."""

    text: str
    href: str = ""
    css: str = ""
    anchor: str = ""  # an id, so that a picture's mark can link to its row


@dataclass
class Chart:
    """A drawn picture with the table of what it draws. `id` is unique on the page (it
    prefixes the SVG's own ids and anchors the table)."""

    id: str
    title: str
    svg: SafeString
    columns: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)
    caption: str = ""
    legend: list[tuple[str, str]] = field(default_factory=list)  # (css class, words)
    empty: str = ""  # when there is nothing to draw, this sentence instead of the picture
    css: str = ""
    table_href: str = ""  # the page already shows the table: link to it instead
    note: str = ""  # a line under the title (for example what a crowded picture leaves out)
    # A link under the title to where the whole picture is (a picture of one page's rows).
    more_href: str = ""
    more_text: str = ""

    def body_html(self) -> SafeString:
        """The rows of the chart's table, written here rather than in the template: a
        portfolio of a thousand projects has a thousand cells (templates/charts/_figure.html
        keeps the template form of a row, and a test compares the two)."""
        e = _conditional  # as the template's autoescape
        out = []
        for row in self.rows:
            cells = []
            for index, cell in enumerate(row):
                anchor = f' id="{e(cell.anchor)}"' if index == 0 and cell.anchor else ""
                css = f' class="{e(cell.css)}"' if cell.css else ""
                text = f'<a href="{e(cell.href)}">{e(cell.text)}</a>' if cell.href else e(cell.text)
                tag = "th" if index == 0 else "td"
                scope = ' scope="row"' if index == 0 else ""
                cells.append(f"<{tag}{scope}{anchor}{css}>{text}</{tag}>")
            out.append(f"<tr>{''.join(cells)}</tr>")
        return mark_safe("".join(out))


def rag_key(value: str | None) -> str:
    return value if value in RAG_LETTERS else "None"


# Django's `escape` is `html.escape` (quotes included) behind a lazy-text wrapper, which cost
# more than the escaping itself at a thousand rows a picture: the same escaping, called
# directly (tests compare the output with Django's).


def _e(value: Any) -> str:
    return html.escape(str(value))


def _conditional(value: Any) -> str:
    """Django's `conditional_escape`: a safe value as it is, anything else escaped."""
    if hasattr(value, "__html__"):
        safe: str = value.__html__()
        return safe
    return html.escape(str(value))


def _n(value: float) -> str:
    """A coordinate: at most one decimal, no trailing zero."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _lane_label(label: str, href: str | None, y: float, longest: int) -> str:
    """A lane's name at the chart's left, cut to `longest` characters; where the lane links
    to its row's page, a link whose tooltip is the whole name."""
    shown = label if len(label) <= longest else label[: longest - 1] + "…"
    text = (
        f'<text x="4" y="{_n(y)}" class="lane-label" dominant-baseline="central">{_e(shown)}</text>'
    )
    if href:
        text = f'<a href="{_e(href)}"><title>{_e(label)}</title>{text}</a>'
    return text


def _svg(chart_id: str, width: float, height: float, title: str, desc: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg" id="{_e(chart_id)}-svg" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" width="{_n(width)}" height="{_n(height)}" '
        f'role="group" aria-labelledby="{_e(chart_id)}-t {_e(chart_id)}-d" '
        f'preserveAspectRatio="xMinYMin meet">'
        f'<title id="{_e(chart_id)}-t">{_e(title)}</title>'
        f'<desc id="{_e(chart_id)}-d">{_e(desc)}</desc>'
        f"{_patterns(chart_id)}{body}</svg>"
    )


@dataclass
class Frame:
    """What a picture has whether it draws anything or not: its id, title and table."""

    chart_id: str
    title: str
    columns: list[str]
    rows: list[list[Cell]]

    def empty(
        self, sentence: str, *, css: str, legend: list[tuple[str, str]] | None = None
    ) -> Chart:
        """Nothing to draw: the table and, instead of the picture, `sentence`."""
        return Chart(
            id=self.chart_id,
            title=self.title,
            svg=mark_safe(""),
            columns=self.columns,
            rows=self.rows,
            caption=self.title,
            legend=[] if legend is None else legend,
            empty=sentence,
            css=css,
        )

    def drawn(
        self,
        width: float,
        height: float,
        desc: str,
        parts: list[str],
        *,
        legend: list[tuple[str, str]],
        css: str,
        caption: str = "",
        empty: str = "",
    ) -> Chart:
        """The SVG element of `parts` with its title and description, and the table,
        captioned by the title unless `caption` says otherwise."""
        return Chart(
            id=self.chart_id,
            title=self.title,
            svg=mark_safe(_svg(self.chart_id, width, height, self.title, desc, "".join(parts))),
            columns=self.columns,
            rows=self.rows,
            caption=caption or self.title,
            legend=legend,
            empty=empty,
            css=css,
        )


def _patterns(chart_id: str) -> str:
    """Hatching, dots and cross-hatching, drawn over a colour so that a zone or a RAG reads
    without it."""
    p = _e(chart_id)
    return (
        "<defs>"
        f'<pattern id="{p}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" '
        'class="pat-line" stroke-width="2"/></pattern>'
        f'<pattern id="{p}-dots" width="6" height="6" patternUnits="userSpaceOnUse">'
        '<circle cx="3" cy="3" r="1.1" class="pat-dot"/></pattern>'
        f'<pattern id="{p}-cross" width="6" height="6" patternUnits="userSpaceOnUse">'
        '<path d="M0 0L6 6M6 0L0 6" class="pat-line" stroke-width="1"/></pattern>'
        "</defs>"
    )


# RAG marks: colour class plus a pattern and the letter.
RAG_PATTERN = {"Red": "hatch", "Amber": "dots", "Green": "", "Blue": "cross", "None": ""}


def _rag_rect(
    chart_id: str, x: float, y: float, w: float, h: float, rag: str, *, label: bool = True
) -> str:
    rag = rag_key(rag)
    out = (
        f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" '
        f'class="rag-fill rag-fill-{rag.lower()}"/>'
    )
    pattern = RAG_PATTERN[rag]
    if pattern:
        out += (
            f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" '
            f'fill="url(#{_e(chart_id)}-{pattern})" class="pat-{pattern}"/>'
        )
    if label:
        out += (
            f'<text x="{_n(x + w / 2)}" y="{_n(y + h / 2)}" class="rag-letter rag-letter-'
            f'{rag.lower()}" text-anchor="middle" dominant-baseline="central">'
            f"{RAG_LETTERS[rag]}</text>"
        )
    return out


RAG_LEGEND = [
    (f"legend-rag legend-rag-{r.lower()}", f"{RAG_LETTERS[r]} {RAG_WORDS[r]}") for r in RAG_ORDER
]


def compact_money(value: float) -> str:
    """12,500 -> 12.5k; 1,200,000 -> 1.2M."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value >= 1_000_000:
        text, unit = f"{value / 1_000_000:.1f}", "M"
    elif value >= 1_000:
        text, unit = f"{value / 1_000:.1f}", "k"
    else:
        return f"{sign}{value:,.0f}"
    return f"{sign}{text.removesuffix('.0')}{unit}"


def full_money(value: float | Decimal | None) -> str:
    if value is None:
        return "—"
    return f"{float(value):,.0f}"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values between low and high (about `count` of them), 0 among them when in
    range."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    ticks = []
    value = first
    while value <= high + 1e-9:
        ticks.append(round(value, 6) + 0.0)
        value += step
    return ticks


def _free_y(placed: list[Any], x: float, y: float, text: str) -> float:
    """A label's y near `y` that does not overlap a label already placed (greedy)."""
    width, height = 7 * len(text), 13
    for shift in (0, 13, -13, 26, -26, 39, -39, 52, -52):
        top = y + shift - height / 2
        box = (x, top, x + width, top + height)
        if not any(
            box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed
        ):
            placed.append(box)
            return y + shift
    placed.append((x, y - height / 2, x + width, y + height / 2))
    return y


Key = TypeVar("Key")


def collect(pairs: Iterable[tuple[Key, int]]) -> dict[Key, int]:
    """Sum counts by key (for matrix cells read from several rows)."""
    out: dict[Key, int] = {}
    for key, n in pairs:
        out[key] = out.get(key, 0) + n
    return out
