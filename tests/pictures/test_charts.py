"""The SVG builders of governance.charts: pure functions, readable without colour, no inline
style or script."""

import datetime as dt
import itertools
import xml.etree.ElementTree as ET

from governance import charts
from governance.rag import risk_zone
from tests.html import inline_problems

SVG = "{http://www.w3.org/2000/svg}"


def parse(chart: charts.Chart) -> ET.Element:
    root = ET.fromstring(str(chart.svg))
    assert root.tag == f"{SVG}svg"
    assert inline_problems(str(chart.svg)) == []
    return root


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def test_risk_matrix_counts_each_cell_and_links_the_filled_ones():
    chart = charts.risk_matrix(
        {(4, 3): 2, (1, 1): 1},
        chart_id="m",
        title="Inherent risk matrix",
        amber_min=8,
        red_min=15,
        link=lambda i, lk: f"/r/?cell=inherent-{i}-{lk}",
    )
    root = parse(chart)
    links = [a.get("href") for a in root.iter(f"{SVG}a")]
    assert links == ["/r/?cell=inherent-4-3", "/r/?cell=inherent-1-1"]
    # A link is named by its <title> (an aria-label would not contain the digits drawn).
    labels = [a.find(f"{SVG}title").text for a in root.iter(f"{SVG}a")]
    assert labels[0] == "2 risks with impact 4 and likelihood 3 (score 12, medium)"
    # 25 cells, each with its score; the counts are text, not colour.
    assert len([r for r in root.iter(f"{SVG}rect") if "mx-cell" in r.get("class")]) == 25
    assert "2" in texts(root) and "1" in texts(root)
    # Zones differ by pattern as well as colour.
    patterns = {r.get("fill") for r in root.iter(f"{SVG}rect") if r.get("fill")}
    assert patterns == {"url(#m-hatch)", "url(#m-dots)"}
    # The table: impact 5 first, the counts with the same links.
    assert chart.columns == ["Impact \\ likelihood", "1", "2", "3", "4", "5"]
    row4 = chart.rows[1]
    assert row4[0].text == "4" and row4[3].text == "2" and row4[3].href.endswith("4-3")
    assert chart.empty == ""


def test_risk_matrix_without_risks_says_so():
    chart = charts.risk_matrix({}, chart_id="m", title="T", amber_min=8, red_min=15)
    assert chart.empty == "No risks scored yet."


def test_risk_zone_follows_the_thresholds():
    assert charts.cell_zone(16, 8, 15) == "high"
    assert charts.cell_zone(8, 8, 15) == "medium"
    assert charts.cell_zone(7, 8, 15) == "low"
    thresholds = {"riskAmberMinScore": 8, "riskRedMinScore": 15}
    assert [risk_zone(s, thresholds) for s in (None, 7, 8, 14, 15)] == [
        "None",
        "Green",
        "Amber",
        "Amber",
        "Red",
    ]


def test_labels_are_escaped():
    chart = charts.heat_map(
        [charts.HeatRow("<b>X</b>", "/s/?a=1&b=2", ["Red", "Green"])],
        ["Overall", "Cost"],
        chart_id="h",
        title="Heat <map>",
    )
    svg = str(chart.svg)
    assert "<b>" not in svg and "&lt;b&gt;X&lt;/b&gt;" in svg
    assert 'href="/s/?a=1&amp;b=2"' in svg
    parse(chart)


def test_timeline_draws_baseline_forecast_actual_today_milestones_and_slips():
    day = dt.date
    rows = [
        charts.TimelineRow(
            "Build",
            "/wp/1/",
            baseline=charts.Span(day(2026, 1, 1), day(2026, 3, 31)),
            forecast=charts.Span(day(2026, 1, 1), day(2026, 4, 14)),
            actual=charts.Span(day(2026, 1, 5), None),
        ),
        charts.TimelineRow(
            "Go-live",
            "/wp/2/",
            baseline=charts.Span(day(2026, 5, 1), day(2026, 5, 1)),
            forecast=charts.Span(day(2026, 4, 20), day(2026, 4, 20)),
            milestone=True,
        ),
        charts.TimelineRow("Unplanned"),
    ]
    chart = charts.timeline(rows, chart_id="t", title="Timeline", today=day(2026, 2, 15))
    root = parse(chart)
    classes = [r.get("class") for r in root.iter(f"{SVG}rect")]
    assert classes.count("bar-baseline") == 2
    assert "bar-forecast bar-slipped" in classes  # Build ends 14 days after its baseline
    assert "bar-forecast" in classes  # Go-live is early: not marked
    assert "bar-actual" in classes
    assert "+14 d" in texts(root) and "Today" in texts(root)
    assert [p.get("class") for p in root.iter(f"{SVG}path")][-1:] == ["milestone"]
    assert [a.get("href") for a in root.iter(f"{SVG}a")] == ["/wp/1/", "/wp/2/"]
    # Today's line sits between the axis ends.
    line = next(li for li in root.iter(f"{SVG}line") if li.get("class") == "today-line")
    assert 190 < float(line.get("x1")) < 810
    assert chart.columns == ["Work package", "Baseline", "Forecast", "Actual", "Slip"]
    build, golive, unplanned = chart.rows
    assert build[3].text == "5 Jan 2026, not finished"
    assert build[4].text == "14 days late" and build[4].css == "late"
    assert golive[4].text == "11 days early"
    assert unplanned[1].text == "—" and unplanned[4].text == "—"


def test_timeline_without_dates_says_so():
    chart = charts.timeline(
        [charts.TimelineRow("A")], chart_id="t", title="T", today=dt.date(2026, 1, 1)
    )
    assert chart.empty == "No work package has dates yet." and str(chart.svg) == ""


def test_rag_trend_letters_every_mark_and_steps_the_overall_line():
    chart = charts.rag_trend(
        ["1 Oct 26", "1 Nov 26", "1 Dec 26"],
        [("Overall", ["Amber", "Red", "Green"]), ("Cost", ["Red", None, "Blue"])],
        chart_id="r",
        title="RAG trend",
    )
    root = parse(chart)
    letters = [t.text for t in root.iter(f"{SVG}text") if "rag-letter" in t.get("class", "")]
    assert letters == ["A", "R", "G", "R", "\u2013", "B"]
    assert [p.get("class") for p in root.iter(f"{SVG}path")][-1] == "trend-line"
    assert chart.rows[1][2].text == "No RAG"
    assert charts.rag_trend([], [("Overall", [])], chart_id="r", title="T").empty


def test_line_chart_marks_each_series_by_dash_marker_and_name():
    chart = charts.line_chart(
        ["Jan 2026", "Feb 2026", "Mar 2026"],
        [
            charts.Series("Baseline", "series-baseline", [100.0, 200.0, 300.0]),
            charts.Series("Actual", "series-actual", [90.0, 210.0, None]),
        ],
        chart_id="b",
        title="Budget",
        marker_line=(1, "This month"),
    )
    root = parse(chart)
    lines = [p for p in root.iter(f"{SVG}path") if p.get("class", "").startswith("line ")]
    assert [p.get("class") for p in lines] == ["line series-baseline", "line series-actual"]
    assert "Baseline" in texts(root) and "Actual" in texts(root) and "This month" in texts(root)
    assert root.findall(f".//{SVG}circle")  # baseline markers
    assert chart.rows[2] and chart.rows[2][2].text == "—"  # actual stops this month
    assert chart.rows[1][1].text == "200"


def test_compact_money():
    assert charts.compact_money(0) == "0"
    assert charts.compact_money(12_500) == "12.5k"
    assert charts.compact_money(1_000_000) == "1M"


def test_heat_map_letters_and_patterns_each_cell():
    chart = charts.heat_map(
        [
            charts.HeatRow("ALPHA", "/a/", ["Red", "Amber", "Green", "Blue", "None"]),
            charts.HeatRow("BETA", "/b/", ["Green", None, "Green", "Green", "Green"]),
        ],
        ["Overall", "Cost", "Schedule", "Scope", "Risk"],
        chart_id="h",
        title="Heat",
    )
    root = parse(chart)
    letters = [t.text for t in root.iter(f"{SVG}text") if "rag-letter" in t.get("class", "")]
    assert letters == ["R", "A", "G", "B", "\u2013", "G", "\u2013", "G", "G", "G"]
    fills = [r.get("fill") for r in root.iter(f"{SVG}rect") if r.get("fill")]
    assert fills == ["url(#h-hatch)", "url(#h-dots)", "url(#h-cross)"]
    assert [a.get("href") for a in root.iter(f"{SVG}a")] == ["/a/", "/b/"]
    assert chart.rows[1][2].text == "No RAG"


def test_scatter_places_sizes_and_letters_projects_and_lists_the_rest():
    points = [
        charts.Point("BIG", "/big/", 30, 12.5, 1_000_000, "Red"),
        charts.Point("SMALL", "/small/", -5, 0, 10_000, "Green"),
        charts.Point("NEW", "/new/", None, None, None, "None"),
    ]
    chart = charts.scatter(points, chart_id="s", title="Scatter")
    root = parse(chart)
    bubbles = {
        c.get("class"): float(c.get("r"))
        for c in root.iter(f"{SVG}circle")
        if "bubble" in c.get("class", "")
    }
    assert bubbles["bubble rag-fill rag-fill-red"] > bubbles["bubble rag-fill rag-fill-green"]
    big = next(c for c in root.iter(f"{SVG}circle") if "rag-fill-red" in c.get("class", ""))
    small = next(c for c in root.iter(f"{SVG}circle") if "rag-fill-green" in c.get("class", ""))
    assert float(big.get("cx")) > float(small.get("cx"))  # more slip: further right
    assert float(big.get("cy")) < float(small.get("cy"))  # more overrun: higher
    assert "BIG" in texts(root) and "NEW" not in texts(root)
    assert [a.get("href") for a in root.iter(f"{SVG}a")] == ["/big/", "/small/"]
    assert [a.find(f"{SVG}title").text for a in root.iter(f"{SVG}a")] == [
        "BIG: 30 days late, cost 12.5 % over budget, budget 1,000,000, overall Red",
        "SMALL: 5 days early, cost on budget, budget 10,000, overall Green",
    ]
    assert [row[0].text for row in chart.rows] == ["BIG", "SMALL", "NEW"]
    assert chart.rows[0][1].text == "30 days" and chart.rows[0][2].text == "12.5 %"
    assert chart.rows[2][1].text == "—"


def test_nice_ticks():
    assert charts.nice_ticks(-29, 26) == [-20.0, 0.0, 20.0]
    assert charts.nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_the_table_rows_written_in_python_match_the_template_form():
    """Chart.body_html writes the rows of a chart's table; the template keeps their form as
    the `table-rows` partial of charts/_figure.html. Both give the same markup, hostile text
    included."""
    from django.template.loader import render_to_string

    hostile = "<b>R&D</b> \"quoted\" 'single'"
    made = [
        charts.risk_matrix(
            {(4, 3): 2, (1, 1): 1},
            chart_id="m",
            title="Inherent",
            amber_min=8,
            red_min=15,
            link=lambda i, lk: f"?cell=inherent-{i}-{lk}&x=<y>",
        ),
        charts.heat_map(
            [charts.HeatRow(label=hostile, href="/p/?a=1&b=2", rags=["Red", "None", "Amber"])],
            ["Overall", "Cost", "Schedule"],
            chart_id="h",
            title="Heat",
        ),
        charts.scatter(
            [charts.Point(label=hostile, href="/s/", x=3, y=12.5, size=1000, rag="Green")],
            chart_id="s",
            title="Scatter",
        ),
        charts.Chart(
            id="c",
            title="Cells",
            svg=charts.mark_safe("<svg></svg>"),
            columns=["A", "B"],
            rows=[
                [charts.Cell(hostile, anchor="a<1>", css="x"), charts.Cell("2", href="/&")],
                [charts.Cell("″"), charts.Cell(charts.mark_safe("<em>safe</em>"), css="y z")],
            ],
        ),
    ]
    for chart in made:
        assert chart.rows, chart.id
        expected = render_to_string("charts/_figure.html#table-rows", {"chart": chart})
        assert str(chart.body_html()) == expected, chart.id


def test_the_names_at_the_ends_of_lines_that_end_close_together_do_not_overlap():
    """Earned value and actual cost often end a few thousand apart: their names are moved
    apart by at least a line of text, and a name far from the others stays at its line."""
    chart = charts.line_chart(
        ["Oct", "Nov", "Dec"],
        [
            charts.Series("Planned value", "series-baseline", [100.0, 600.0, 800.0]),
            charts.Series("Earned value", "series-forecast", [50.0, 372.0, None]),
            charts.Series("Actual cost", "series-actual", [60.0, 390.0, None]),
        ],
        chart_id="ev",
        title="Earned value",
    )
    root = ET.fromstring(str(chart.svg))
    names = {
        t.text: float(t.get("y"))
        for t in root.iter("{http://www.w3.org/2000/svg}text")
        if "series-label" in (t.get("class") or "")
    }
    assert set(names) == {"Planned value", "Earned value", "Actual cost"}
    assert abs(names["Earned value"] - names["Actual cost"]) >= 14
    ends = sorted(names.values())
    assert all(b - a >= 14 for a, b in itertools.pairwise(ends))


def test_the_month_names_under_a_long_line_chart_do_not_overlap():
    """Thirteen months or more: every second (third, ...) month is named, so no two names
    overlap at 11px (about 6.5px a character), and the first is always named."""
    for months in (3, 13, 25, 60):
        labels = [
            f"{m} 20{26 + i // 12}"
            for i, m in enumerate(
                itertools.islice(
                    itertools.cycle(
                        [
                            "Jan",
                            "Feb",
                            "Mar",
                            "Apr",
                            "May",
                            "Jun",
                            "Jul",
                            "Aug",
                            "Sep",
                            "Oct",
                            "Nov",
                            "Dec",
                        ]
                    ),
                    months,
                )
            )
        ]
        chart = charts.line_chart(
            labels,
            [charts.Series("Forecast", "series-forecast", [float(i) for i in range(months)])],
            chart_id="m",
            title="Budget",
        )
        root = ET.fromstring(str(chart.svg))
        ticks = [
            (float(t.get("x")), t.text)
            for t in root.iter("{http://www.w3.org/2000/svg}text")
            if t.get("class") == "axis-tick" and t.get("text-anchor") == "middle"
        ]
        assert ticks[0][1] == labels[0]
        assert len(ticks) == months if months <= 6 else len(ticks) < months
        for (a, text_a), (b, text_b) in itertools.pairwise(ticks):
            half = (len(text_a) + len(text_b)) * 6.5 / 2
            assert b - a >= half + 8, (months, text_a, text_b, b - a)


def test_a_timeline_date_is_written_as_strftime_wrote_it(monkeypatch):
    """The timeline writes its dates without strftime: the same text, and the same picture
    and table, as `%b %Y` gave, for every month, short and long years and varied lanes."""
    import importlib

    module = importlib.import_module("governance.charts.timeline")

    def strftime_form(day):
        return f"{day.day} {day:%b %Y}" if day else "—"

    days = [
        dt.date(year, month, day)
        for year in (1, 999, 1000, 1999, 2026, 9999)
        for month in range(1, 13)
        for day in (1, 9, 28)
    ]
    assert [module._fmt(d) for d in [*days, None]] == [strftime_form(d) for d in [*days, None]]
    Span, Row = charts.Span, charts.TimelineRow
    rows = [
        Row(
            label=f"Lane {n} <&>",
            href=f"/w/{n}/" if n % 2 else "",
            baseline=Span(dt.date(2025, 1 + n % 12, 1 + n), dt.date(2026, 1 + n % 12, 2 + n)),
            forecast=Span(None, dt.date(2026, 1 + (n + 3) % 12, 5)) if n % 3 else Span(None, None),
            actual=Span(dt.date(2025, 6, 1 + n), None if n % 4 else dt.date(2026, 2, 1)),
            milestone=n % 5 == 0,
            done=n % 7 == 0,
            slip=n - 4 if n % 2 else None,
            slip_derived=bool(n % 2),
        )
        for n in range(24)
    ]
    drawn = charts.timeline(rows, chart_id="t", title="T", today=dt.date(2026, 11, 29))
    monkeypatch.setattr(module, "_fmt", strftime_form)
    before = charts.timeline(rows, chart_id="t", title="T", today=dt.date(2026, 11, 29))
    assert drawn.svg == before.svg and drawn.body_html() == before.body_html()
