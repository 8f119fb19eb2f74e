"""A Microsoft Project plan (MSPDI XML) written by code: the demo's imported plan, the
benchmark's and the tests'. Phases at outline level 1, each with work tasks at level 2 and a
closing milestone; dates on working days, costs in hundredths, a Baseline 0 on the tasks
that have slipped, percent complete that follows the day the plan is read against."""

import datetime as dt
from typing import Any
from xml.sax.saxutils import escape

NS = "http://schemas.microsoft.com/project"
PHASE_NAMES = [
    "Discovery",
    "Design",
    "Build",
    "Integration",
    "Testing",
    "Training",
    "Cut-over",
    "Early life support",
]


def _monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def _workdays(start: dt.date, count: int) -> dt.date:
    """The last of `count` working days from `start` (a working day)."""
    day, left = start, count - 1
    while left > 0:
        day += dt.timedelta(days=1)
        if day.weekday() < 5:
            left -= 1
    return day


def _next_workday(day: dt.date) -> dt.date:
    day += dt.timedelta(days=1)
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day


def _percent(start: dt.date, finish: dt.date, today: dt.date) -> int:
    """Done when it finished before today, not started when it starts after it, else the
    share of its days gone."""
    if finish < today:
        return 100
    if start >= today:
        return 0
    return max(1, min(99, round(100 * (today - start).days / ((finish - start).days + 1))))


def _task(lines: list[str], **values: Any) -> None:
    lines.append("<Task>")
    baseline = values.pop("baseline", None)
    for tag, value in values.items():
        if value is None:
            continue
        text = escape(str(value))
        lines.append(
            f"<{tag}><![CDATA[{value}]]></{tag}>" if tag == "Notes" else f"<{tag}>{text}</{tag}>"
        )
    if baseline:
        lines.append("<Baseline><Number>0</Number>")
        lines.extend(f"<{tag}>{value}</{tag}>" for tag, value in baseline.items())
        lines.append("</Baseline>")
    lines.append("</Task>")


def _in_phase(
    index: int, position: int, name: str, span: tuple[str, str], *, hours: int, **more: Any
) -> dict[str, Any]:
    """The fields of a task of phase `index` (its `position` in the phase) from the first stamp
    of `span` to the second, `hours` of work (none: a milestone); then `more`, in order."""
    start, finish = span
    return {
        "Name": name,
        "OutlineNumber": f"{index + 1}.{position}",
        "OutlineLevel": 2,
        "Start": start,
        "Finish": finish,
        "Duration": f"PT{hours}H0M0S",
        "Milestone": 0 if hours else 1,
        "Summary": 0,
        **more,
    }


def plan(
    tasks: int = 200,
    *,
    start: dt.date,
    today: dt.date,
    name: str = "Imported plan",
    cost_scale: int = 100,
) -> bytes:
    """A plan of `tasks` tasks (phases, their work tasks and one milestone per phase) from the
    Monday of `start`, four tasks at a time side by side; percent complete and actual dates
    as of `today`; each task costs 20 to 110 times `cost_scale` (in the currency unit)."""
    phases = max(1, min(len(PHASE_NAMES), tasks // 10))
    per_phase = [tasks // phases + (1 if i < tasks % phases else 0) for i in range(phases)]
    lines = [
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
        f'<Project xmlns="{NS}">',
        f"<Name>{escape(name)}.xml</Name><Title>{escape(name)}</Title>",
        "<ScheduleFromStart>1</ScheduleFromStart><CurrencyDigits>2</CurrencyDigits>",
        "<MinutesPerDay>480</MinutesPerDay><MinutesPerWeek>2400</MinutesPerWeek>",
        "<Calendars><Calendar><UID>1</UID><Name>Standard</Name><IsBaseCalendar>1</IsBaseCalendar>"
        "</Calendar></Calendars>",
        "<Tasks>",
    ]
    body: list[str] = []
    uid = 1
    day = _monday(start)
    first = day
    for index in range(phases):
        phase_name = f"{index + 1}. {PHASE_NAMES[index]}"
        children: list[dict[str, Any]] = []
        phase_start = day
        for n in range(per_phase[index] - 2):
            number = uid + 1 + n  # the task's UID
            length = 2 + (number * 7) % 5  # 2 to 6 working days
            finish = _workdays(day, length)
            cost = (20 + (number * 13) % 91) * cost_scale * 100  # in hundredths
            slipped = number % 5 == 0  # a fifth of the tasks moved since the baseline
            baseline = None
            if slipped:
                planned_finish = _workdays(day, max(1, length - 2))
                baseline = {
                    "Start": f"{day.isoformat()}T08:00:00",
                    "Finish": f"{planned_finish.isoformat()}T17:00:00",
                    "Duration": f"PT{max(1, length - 2) * 8}H0M0S",
                    "Cost": cost * 9 // 10,
                }
            percent = _percent(day, finish, today)
            children.append(
                _in_phase(
                    index,
                    n + 1,
                    f"{PHASE_NAMES[index]} task {n + 1}",
                    (f"{day.isoformat()}T08:00:00", f"{finish.isoformat()}T17:00:00"),
                    hours=length * 8,
                    PercentComplete=percent,
                    Cost=cost,
                    ActualStart=f"{day.isoformat()}T08:00:00" if percent else None,
                    ActualFinish=f"{finish.isoformat()}T17:00:00" if percent == 100 else None,
                    ActualCost=cost * percent // 100,
                    Notes=f"Work of the {PHASE_NAMES[index].lower()} phase." if n == 0 else None,
                    baseline=baseline,
                )
            )
            if n % 4 == 3:  # four tasks run side by side
                day = _next_workday(max(_iso(c["Finish"]) for c in children[-4:]))
        last = max(_iso(c["Finish"]) for c in children) if children else day
        children.append(
            _in_phase(
                index,
                len(children) + 1,
                f"{PHASE_NAMES[index]} complete",
                (f"{last.isoformat()}T17:00:00",) * 2,
                hours=0,
                PercentComplete=100 if last < today else 0,
                ActualStart=f"{last.isoformat()}T17:00:00" if last < today else None,
                ActualFinish=f"{last.isoformat()}T17:00:00" if last < today else None,
                Cost=0,
                ActualCost=0,
            )
        )
        _task(
            body,
            UID=uid,
            ID=uid,
            Name=phase_name,
            OutlineNumber=index + 1,
            OutlineLevel=1,
            Start=f"{phase_start.isoformat()}T08:00:00",
            Finish=f"{last.isoformat()}T17:00:00",
            Milestone=0,
            Summary=1,
            FixedCost=0,
            Notes=f"Phase {index + 1} of {phases} of the plan '{name}' (Microsoft Project).",
        )
        uid += 1
        for child in children:
            _task(body, UID=uid, ID=uid, **child)
            uid += 1
        day = _next_workday(last)
    lines.append(
        f"<Task><UID>0</UID><ID>0</ID><Name>{escape(name)}</Name><OutlineNumber>0</OutlineNumber>"
        f"<OutlineLevel>0</OutlineLevel><Start>{first.isoformat()}T08:00:00</Start>"
        f"<Summary>1</Summary></Task>"
    )
    lines.extend(body)
    lines += ["</Tasks>", "<Resources/><Assignments/>", "</Project>"]
    return "\n".join(lines).encode("utf-8")


def _iso(stamp: str) -> dt.date:
    return dt.date.fromisoformat(stamp[:10])
