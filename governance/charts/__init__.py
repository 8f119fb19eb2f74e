"""Pictures drawn on the server as SVG: the risk matrix, the work-package timeline, line charts
(budget curve, benefits), the RAG trend strip, the portfolio heat map and scatter, one module
each, on the frame they share (`base`: the chart and its table, the SVG element, RAG marks).

Pure functions: plain data in, a `Chart` out (its SVG markup and the table it draws). No query,
no model. The markup carries classes that `static/css/charts.css` colours and SVG presentation
attributes only (no `style=`, no script), so it passes the CSP. Every picture is readable
without colour: each RAG mark carries its letter, zones and series differ by pattern, dash or
marker, and the same figures are in the chart's table, one click away on the page.
"""

from django.utils.safestring import mark_safe

from governance.charts.base import (
    RAG_LEGEND,
    RAG_LETTERS,
    RAG_ORDER,
    RAG_PATTERN,
    RAG_WORDS,
    Cell,
    Chart,
    collect,
    compact_money,
    full_money,
    nice_ticks,
    rag_key,
)
from governance.charts.heat_map import HeatRow, heat_map
from governance.charts.line_chart import MARKERS, Series, line_chart
from governance.charts.rag_trend import rag_trend
from governance.charts.risk_matrix import ZONE_PATTERN, ZONE_WORDS, cell_zone, risk_matrix
from governance.charts.scatter import LABELLED, Point, scatter
from governance.charts.timeline import Span, TimelineRow, timeline

__all__ = [
    "LABELLED",
    "MARKERS",
    "RAG_LEGEND",
    "RAG_LETTERS",
    "RAG_ORDER",
    "RAG_PATTERN",
    "RAG_WORDS",
    "ZONE_PATTERN",
    "ZONE_WORDS",
    "Cell",
    "Chart",
    "HeatRow",
    "Point",
    "Series",
    "Span",
    "TimelineRow",
    "cell_zone",
    "collect",
    "compact_money",
    "full_money",
    "heat_map",
    "line_chart",
    "mark_safe",
    "nice_ticks",
    "rag_key",
    "rag_trend",
    "risk_matrix",
    "scatter",
    "timeline",
]
