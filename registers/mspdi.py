"""Microsoft Project plans as XML (MSPDI, the format of File > Save As > XML in Microsoft
Project and of ProjectLibre): the reading of a plan into work-package rows for the register
import (`registers.services.import_preview` / `import_file`, the same pipeline as CSV and
XLSX), and the writing of the work-package register as a plan.

Reading. Tasks at the chosen outline level (`outline_level`, default 1) become work
packages; the tasks below one roll up into it (earliest start, latest finish, costs summed,
percent complete weighted by duration); a task above that level without tasks below it
becomes a package too; the project summary task (outline level 0) never does. A milestone
(Milestone 1, or a zero duration: ProjectLibre writes Milestone 0 on every task) is a package
of type Milestone whose start is its end. Money is in hundredths (Cost 352625 is 3,526.25).
Where Baseline 0 gives a task's dates (or cost), those are the planned dates (the budget) and
the current Start and Finish (Cost) the forecast: the register's planned dates are the plan a
business-case approval freezes, as a baseline is in Microsoft Project. Percent complete is
read onto the register's steps of ten (warned when it moves) and gives the status.
Resources, assignments and calendars are ignored.

The file is parsed with defusedxml, a DTD (and so every entity) is refused, and the reading
stops at the import's size limit and at MAX_ELEMENTS elements. An .mpp file (an OLE2
compound file) is refused with the way to save it as XML."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from registers.models import WorkPackage


import dataclasses
import datetime as dt
import hashlib
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from defusedxml import DefusedXmlException
from django.utils import timezone

from governance import cleaning, formatting, spreadsheet_values
from governance.errors import ValidationFailed
from governance.models import Project
from registers import selectors, uploads

NS = "http://schemas.microsoft.com/project"
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
CONTENT_TYPE = "application/xml; charset=utf-8"
DEFAULT_OUTLINE_LEVEL = 1
MAX_OUTLINE_LEVEL = 100
MAX_ELEMENTS = 250_000  # a 5 MB plan of Microsoft Project holds about 150,000
# XML elements inside one another: Microsoft Project and ProjectLibre write 8 at most
# (Project > Tasks > Task > Baseline > TimephasedData > ...).
# Tasks inside one another (the outline): deeper plans are refused, with the depth found.
MAX_OUTLINE_DEPTH = MAX_OUTLINE_LEVEL
MAX_NUMBER_CHARS = 40  # an amount in hundredths or a percentage, as text
MILESTONE_TYPE = "Milestone"
MPP_MESSAGE = (
    "This is a Microsoft Project .mpp file, which cannot be read here. In Microsoft Project "
    "choose File > Save As, pick 'XML Format (*.xml)' as the type, and import that XML file."
)
OLE2_MESSAGE = (
    "This is an older Microsoft Office file (a Microsoft Project .mpp or an Excel .xls), "
    "which cannot be read here. Save a plan from Microsoft Project with File > Save As > "
    "'XML Format (*.xml)', or a workbook from Excel as .xlsx, and import that file."
)
NOT_MSPDI = (
    "The file is XML but not a Microsoft Project plan (its root element is not Project of "
    "the namespace http://schemas.microsoft.com/project). Save the plan from Microsoft "
    "Project or ProjectLibre as XML and import that file."
)
ONLY_WORK_PACKAGES = (
    "A Microsoft Project plan imports into the work packages only. Import this register "
    "from a CSV or XLSX file."
)
_DURATION = re.compile(
    r"-?P(?:(\d{1,9})Y)?(?:(\d{1,9})M)?(?:(\d{1,9})D)?"
    r"(?:T(?:(\d{1,9}(?:\.\d{1,9})?)H)?(?:(\d{1,9}(?:\.\d{1,9})?)M)?(?:(\d{1,9}(?:\.\d{1,9})?)S)?)?"
)
_INTEGER = re.compile(r"-?\d+")
_AMOUNT = re.compile(r"-?\d+(?:\.\d+)?")
# Characters XML 1.0 cannot carry (a stored value never makes the export unreadable).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_TASK_FIELDS = {
    "UID",
    "ID",
    "Name",
    "OutlineNumber",
    "OutlineLevel",
    "Start",
    "Finish",
    "Duration",
    "Milestone",
    "IsNull",
    "FixedCost",
    "PercentComplete",
    "Cost",
    "ActualCost",
    "ActualStart",
    "ActualFinish",
    "Notes",
}


def is_mpp(head: bytes) -> bool:
    return head.startswith(OLE2_MAGIC)


def is_xml(head: bytes) -> bool:
    """The start of an XML document: '<' after an optional byte-order mark and blanks."""
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").startswith(b"<")


def outline_level_of(value: Any) -> int:
    """The outline level asked for: a whole number from 1 to MAX_OUTLINE_LEVEL, 1 when blank."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_OUTLINE_LEVEL
    text = str(value).strip()
    # ASCII digits only: str.isdigit also takes '²', which int() refuses.
    if (
        len(text) > 4
        or not (text.isascii() and text.isdigit())
        or not 1 <= int(text) <= MAX_OUTLINE_LEVEL
    ):
        raise ValidationFailed(
            {
                "outlineLevel": [
                    f"Must be a whole number from 1 to {MAX_OUTLINE_LEVEL}: the outline level "
                    "whose tasks become work packages (1 is the top level under the project)."
                ]
            }
        )
    return int(text)


# --- reading ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Task:
    """A task as the file writes it (text), with its place in the outline."""

    values: dict[str, str]
    baseline: dict[str, str]
    level: int
    children: list[Task] = dataclasses.field(default_factory=list)

    @property
    def row(self) -> int:
        """The row Microsoft Project shows (ID), else the UID."""
        for key in ("ID", "UID"):
            text = self.values.get(key, "")
            number = cleaning.whole_number(text, max_digits=9)
            if number is not None:
                return number
        return 0

    def label(self) -> str:
        name = self.values.get("Name") or "(no name)"
        return f"task {self.row} '{name[:60]}'"


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def read_file(upload: Any, outline_level: Any = None) -> uploads.Reading:
    """The work-package rows of an uploaded MSPDI plan (see the module's text), as a
    `uploads.Reading`: row numbers are the tasks' IDs (the rows Microsoft Project
    shows); the digest covers the file's bytes and the outline level."""
    level = outline_level_of(outline_level)
    if upload is None:
        raise ValidationFailed({"file": ["Choose a file to import."]})
    if upload.size > uploads.MAX_BYTES:
        raise ValidationFailed(
            {"file": [f"At most {uploads.MAX_BYTES // (1024 * 1024)} MB per file."]}
        )
    content = upload.read()
    if is_mpp(content[:8]):
        raise ValidationFailed({"file": [MPP_MESSAGE]})
    tasks, project = _tasks(content)
    rows, problems, notes = _rows(tasks, level)
    _check_currency(project, rows)
    digest = hashlib.sha256(content + f"\0outlineLevel={level}".encode()).hexdigest()
    return uploads.Reading(rows, problems, notes, digest)


def _check_currency(project: dict[str, str], rows: list[tuple[int, dict[str, Any]]]) -> None:
    """A plan whose costs are in another currency than the site's is refused, by the rule
    of every importer (`spreadsheet_values.is_other_currency`): its CurrencyCode, else its
    CurrencySymbol. A plan without costs (or only zeros) imports whatever its currency."""
    for element in ("CurrencyCode", "CurrencySymbol"):
        written = (project.get(element) or "").strip()
        if written:
            break
    else:
        return
    site = formatting.currency()
    if not spreadsheet_values.is_other_currency(written, site):
        return
    money = uploads.MONEY_COLUMNS["work-packages"]
    if not any(Decimal(data.get(f) or 0) for _, data in rows for f in money):
        return  # no cost, or only zeros: the same in every currency
    raise ValidationFailed(
        {
            "file": [
                f"Read the plan's {element} “{written[:10]}”: its costs are in another "
                f"currency than this site's ({site}), and amounts are never converted. "
                f"Convert the costs to {site} in Microsoft Project (or set the site's "
                "currency), save the plan as XML again and import that."
            ]
        }
    )


def _tasks(content: bytes) -> tuple[list[Task], dict[str, str]]:
    """The tasks of the plan in the file's order, each with its outline level, and the
    project's own values read here (its currency)."""
    tasks: list[Task] = []
    project: dict[str, str] = {}
    path: list[str] = []
    elements = 0
    try:
        for event, element in cleaning.xml_events(content):
            if event == "start":
                elements += 1
                if elements > MAX_ELEMENTS:
                    raise ValidationFailed(
                        {"file": [f"At most {MAX_ELEMENTS:,} XML elements per plan."]}
                    )
                if not path and (element.tag != f"{{{NS}}}Project"):
                    raise ValidationFailed({"file": [NOT_MSPDI]})
                path.append(_local(element.tag))
                continue
            path.pop()
            if len(path) == 2 and path[1] == "Tasks" and _local(element.tag) == "Task":
                tasks.append(_task(element))
                element.clear()
            elif len(path) == 1:
                name = _local(element.tag)
                if name in ("CurrencyCode", "CurrencySymbol"):
                    project[name] = (element.text or "")[:40]
                element.clear()  # calendars, resources, assignments: not read
    except ValidationFailed:
        raise
    except cleaning.XmlRefused as exc:
        raise ValidationFailed({"file": [str(exc)]}) from None
    except DefusedXmlException:
        raise ValidationFailed(
            {
                "file": [
                    "The file declares a document type or entities, which a Microsoft Project "
                    "plan never does; it is refused unread."
                ]
            }
        ) from None
    except ET.ParseError as exc:
        raise ValidationFailed(
            {
                "file": [
                    f"The file is not well-formed XML (line {exc.position[0]}, column "
                    f"{exc.position[1] + 1}). XML cannot carry characters such as NUL; save "
                    "the plan again from Microsoft Project as XML."
                ]
            }
        ) from None
    if not path and not tasks and elements == 0:
        raise ValidationFailed({"file": [NOT_MSPDI]})
    return tasks, project


def _task(element: ET.Element) -> Task:
    values: dict[str, str] = {}
    baseline: dict[str, str] = {}
    for child in element:
        name = _local(child.tag)
        if name in _TASK_FIELDS:
            values[name] = child.text or ""
        elif name == "Baseline":
            fields = {_local(c.tag): (c.text or "").strip() for c in child}
            if fields.get("Number") == "0":
                baseline = fields
    level_text = values.get("OutlineLevel", "").strip()
    level = cleaning.whole_number(level_text, max_digits=9)
    if level is None:  # from the outline number (1.2.3 is level 3)
        level = (values.get("OutlineNumber", "").strip().count(".") + 1) if values else 1
    return Task(values, baseline, level)


def _outline(tasks: list[Task]) -> list[Task]:
    """The top tasks under the project summary, each with its children (a task's parent is
    the closest task before it of a lower level). Blank rows (IsNull) are left out. A plan
    whose outline goes deeper than MAX_OUTLINE_DEPTH is refused, naming the deepest task."""
    roots: list[Task] = []
    stack: list[Task] = []
    kept = [t for t in tasks if t.values.get("IsNull", "").strip() != "1" and t.level >= 1]
    deepest = max(kept, key=lambda t: t.level, default=None)
    if deepest is not None and deepest.level > MAX_OUTLINE_DEPTH:
        raise ValidationFailed(
            {
                "file": [
                    f"The plan nests tasks {deepest.level:,} levels deep ({deepest.label()}); "
                    f"at most {MAX_OUTLINE_DEPTH} are supported. Outdent the tasks in "
                    "Microsoft Project and save the plan as XML again."
                ]
            }
        )
    for task in kept:
        while stack and stack[-1].level >= task.level:
            stack.pop()
        (stack[-1].children if stack else roots).append(task)
        stack.append(task)
    return roots


def _descendants(task: Task) -> Iterable[Task]:
    """The tasks below one, each before its own children (iterative: any depth)."""
    pending = list(reversed(task.children))
    while pending:
        child = pending.pop()
        yield child
        pending.extend(reversed(child.children))


class _Problems:
    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.items.append((field, message))


def _date(
    task: Task, value: str | None, what: str, field: str, problems: _Problems
) -> dt.date | None:
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        if len(text) > 40:
            raise ValueError
        return dt.datetime.fromisoformat(text).date()
    except ValueError:
        problems.add(
            field,
            f"{what} of {task.label()} is not a date and time such as 2027-01-04T08:00:00 "
            f"(the file has '{text[:40]}').",
        )
        return None


def _amount(
    task: Task, value: str | None, what: str, field: str, problems: _Problems
) -> Decimal | None:
    """An amount written in hundredths, as a Decimal of the currency unit."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if len(text) > MAX_NUMBER_CHARS or not _AMOUNT.fullmatch(text):
        shown = text if len(text) <= 40 else f"{text[:20]}... ({len(text):,} characters)"
        problems.add(
            field,
            f"{what} of {task.label()} is not an amount in hundredths such as 352625 "
            f"(the file has '{shown}').",
        )
        return None
    return Decimal(text) / 100


def _percent(task: Task, problems: _Problems) -> int | None:
    value = task.values.get("PercentComplete")
    if value is None or not value.strip():
        return None
    text = value.strip()
    if len(text) > MAX_NUMBER_CHARS or not _INTEGER.fullmatch(text) or not 0 <= int(text) <= 100:
        problems.add(
            "progress",
            f"PercentComplete of {task.label()} must be a whole number from 0 to 100 (the file "
            f"has '{text[:40]}').",
        )
        return None
    return int(text)


def _hours(task: Task) -> Decimal | None:
    """The task's Duration (PT8H0M0S) in hours, or None when it has none or it is unreadable."""
    text = (task.values.get("Duration") or "").strip()
    match = _DURATION.fullmatch(text) if len(text) < 80 else None
    if not match or text in ("P", "-P"):
        return None
    years, months, days, hours, minutes, seconds = (
        Decimal(g) if g else Decimal(0) for g in match.groups()
    )
    total = ((years * 12 + months) * 20 + days) * 8 + hours + minutes / 60 + seconds / 3600
    return -total if text.startswith("-") else total


def _is_milestone(task: Task) -> bool:
    if task.values.get("Milestone", "").strip() == "1":
        return True
    hours = _hours(task)
    if hours is not None:
        return hours == 0
    start, finish = task.values.get("Start"), task.values.get("Finish")
    return bool(start) and start == finish


def _steps(percent: Decimal) -> int:
    """A percentage on the register's steps of ten: 0 and 100 only when the plan says so
    (a task 3% done has started, one 97% done has not finished)."""
    if percent <= 0:
        return 0
    if percent >= 100:
        return 100
    tens = int((percent / 10).quantize(Decimal(1), rounding=ROUND_HALF_UP)) * 10
    return min(90, max(10, tens))


STATUS_OF_PROGRESS = {0: "Not Started", 100: "Complete"}


def _rows(
    tasks: list[Task], level: int
) -> tuple[list[tuple[int, dict[str, Any]]], list[dict[str, Any]], list[dict[str, Any]]]:
    packages: list[Task] = []
    pending = list(reversed(_outline(tasks)))
    while pending:  # in the outline's order, iterative
        task = pending.pop()
        if task.level >= level or not task.children:
            packages.append(task)
        else:
            pending.extend(reversed(task.children))
    if not packages:
        raise ValidationFailed({"file": ["The plan has no tasks under its project summary task."]})
    if len(packages) > uploads.MAX_ROWS:
        raise ValidationFailed(
            {
                "file": [
                    f"At most {uploads.MAX_ROWS:,} work packages per import (this plan "
                    f"gives {len(packages):,} at outline level {level})."
                ]
            }
        )
    rows: list[tuple[int, dict[str, Any]]] = []
    problems: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    names: set[str] = set()
    used: set[int] = set()
    for package in packages:
        number = package.row
        if number <= 0 or number in used:  # no ID, or one given twice: the next free number
            number = max(used, default=0) + 1
        used.add(number)
        data, found, said = _package(package)
        name = data.get("name")
        if isinstance(name, str) and name.strip():
            if name.strip().casefold() in names:
                outline = (package.values.get("OutlineNumber") or str(number)).strip()[:20]
                data["name"] = f"{name.strip()} ({outline})"
                said.append(
                    (
                        "name",
                        f"Another task of the plan is called '{name.strip()[:60]}': "
                        f"named '{data['name'][:80]}' after its outline number.",
                    )
                )
            names.add(str(data["name"]).strip().casefold())
        problems.extend({"row": number, "field": f, "message": m} for f, m in found.items)
        notes.extend({"row": number, "field": f, "message": m} for f, m in said)
        rows.append((number, data))
    return rows, problems, notes


def _package(package: Task) -> tuple[dict[str, Any], _Problems, list[tuple[str, str]]]:
    """The work package of one task and the tasks below it."""
    problems = _Problems()
    said: list[tuple[str, str]] = []
    subtree = [package, *_descendants(package)]
    leaves = [t for t in subtree if not t.children]
    data: dict[str, Any] = {}
    for field, text in (
        ("name", package.values.get("Name")),
        ("commentary", package.values.get("Notes")),
    ):
        if text is None or not text.strip():
            continue
        error = cleaning.text_error(text)
        if error:
            problems.add(field, error)
        else:
            data[field] = text.strip()
    starts, finishes, base_starts, base_finishes = [], [], [], []
    baselined = False
    for task in subtree:
        start = _date(task, task.values.get("Start"), "Start", "plannedStartDate", problems)
        finish = _date(task, task.values.get("Finish"), "Finish", "plannedEndDate", problems)
        starts += [start] if start else []
        finishes += [finish] if finish else []
        base_start = _date(
            task, task.baseline.get("Start"), "Baseline start", "plannedStartDate", problems
        )
        base_finish = _date(
            task, task.baseline.get("Finish"), "Baseline finish", "plannedEndDate", problems
        )
        single = base_start or base_finish
        if single is not None and not (base_start and base_finish):
            given, missing = ("start", "finish") if base_start else ("finish", "start")
            said.append(
                (
                    "plannedEndDate" if base_start else "plannedStartDate",
                    f"Baseline 0 of {task.label()} gives only its {given} "
                    f"({single.isoformat()}), no {missing}: a baseline "
                    "needs both, so it is not used and the task's current dates are read "
                    "instead.",
                )
            )
        if base_start and base_finish:
            base_starts.append(base_start)
            base_finishes.append(base_finish)
            baselined = True
        elif start and finish:  # a task without a baseline spans its current dates
            base_starts.append(start)
            base_finishes.append(finish)
    actual_starts = [
        day
        for task in subtree
        if (
            day := _date(
                task, task.values.get("ActualStart"), "ActualStart", "actualStartDate", problems
            )
        )
    ]
    actual_finishes = [
        _date(task, task.values.get("ActualFinish"), "ActualFinish", "actualEndDate", problems)
        for task in leaves
    ]
    if actual_starts:
        data["actualStartDate"] = min(actual_starts)
    if actual_finishes and all(actual_finishes):  # finished when every task below finished
        data["actualEndDate"] = max(d for d in actual_finishes if d)
    cost = actual = base_cost = None
    cost_baselined = False
    fixed_total = Decimal(0)
    weighted, weights, plain, counted = Decimal(0), Decimal(0), Decimal(0), 0
    for task in subtree:
        if task.children:
            fixed = _amount(task, task.values.get("FixedCost"), "FixedCost", "budget", problems)
            fixed_total += fixed or 0
            cost = fixed if cost is None else (cost + fixed if fixed is not None else cost)
            continue
        for what, field, value in (
            ("Cost", "budget", task.values.get("Cost")),
            ("ActualCost", "budgetActual", task.values.get("ActualCost")),
            ("Baseline cost", "budget", task.baseline.get("Cost")),
        ):
            amount = _amount(task, value, what, field, problems)
            if what == "Baseline cost":
                if amount is None:  # a task without a baseline cost counts its cost
                    amount = _amount(task, task.values.get("Cost"), "Cost", "budget", _Problems())
                else:
                    cost_baselined = True
            if amount is None:
                continue
            if what == "Cost":
                cost = amount if cost is None else cost + amount
            elif what == "ActualCost":
                actual = amount if actual is None else actual + amount
            else:
                base_cost = amount if base_cost is None else base_cost + amount
        percent = _percent(task, problems)
        if percent is not None:
            hours = _hours(task) or Decimal(0)
            weighted += percent * max(hours, Decimal(0))
            weights += max(hours, Decimal(0))
            plain += percent
            counted += 1
    milestone = not package.children and _is_milestone(package)
    if milestone:
        data["type"] = MILESTONE_TYPE
    start, finish = (min(starts) if starts else None), (max(finishes) if finishes else None)
    if milestone and start:
        finish = start
    if baselined:
        base_start, base_finish = min(base_starts), max(base_finishes)
        if milestone:
            base_finish = base_start
        data["plannedStartDate"], data["plannedEndDate"] = base_start, base_finish
        data["forecastStartDate"], data["forecastEndDate"] = start, finish
    else:
        data["plannedStartDate"], data["plannedEndDate"] = start, finish
    data = {
        k: (v.isoformat() if isinstance(v, dt.date) else v)
        for k, v in data.items()
        if v is not None
    }
    if cost_baselined and base_cost is not None:
        if fixed_total:
            base_cost += fixed_total
        data["budget"] = str(base_cost)
        if cost is not None:
            data["budgetForecast"] = str(cost)
    elif cost is not None:
        data["budget"] = str(cost)
    if actual is not None:
        data["budgetActual"] = str(actual)
    if counted:
        exact = weighted / weights if weights else plain / counted
        progress = _steps(exact)
        data["progress"] = progress
        data["status"] = STATUS_OF_PROGRESS.get(progress, "In Progress")
        shown = exact.quantize(Decimal("0.1")).normalize()
        if Decimal(progress) != exact:
            weighting = (
                f" of its {len(leaves)} tasks (weighted by duration)" if len(leaves) > 1 else ""
            )
            said.append(
                (
                    "progress",
                    f"Percent complete{weighting} is {shown:f}%, read as {progress} (progress is "
                    "kept in steps of 10; only 0% is not started, only 100% complete).",
                )
            )
    if any(f == "budget" for f, _ in problems.items):
        data.pop("budget", None)
        data.pop("budgetForecast", None)
    return data, problems, said


# --- writing ---------------------------------------------------------------------------------


def _xml_text(value: Any) -> str:
    return _NOT_XML.sub("\ufffd", str(value))


def _hundredths(amount: Decimal | None) -> str | None:
    if amount is None:
        return None
    return str(int((amount * 100).to_integral_value(rounding=ROUND_HALF_UP)))


def _working_hours(start: dt.date, end: dt.date) -> int:
    """Hours of the standard calendar (Monday to Friday, 8 hours) from start to end, both
    included."""
    if end < start:
        return 0
    days = (end - start).days + 1
    weeks, rest = divmod(days, 7)
    working = weeks * 5 + sum(1 for i in range(rest) if (start.weekday() + i) % 7 < 5)
    return working * 8


def _stamp(day: dt.date, time: str) -> str:
    return f"{day.isoformat()}T{time}"


def _span(
    start: dt.date | None, end: dt.date | None, milestone: bool
) -> tuple[str, str, str] | None:
    """(Start, Finish, Duration) text of a package's dates: a day from 08:00 to 17:00; a
    milestone at 08:00 with no duration."""
    start = start or end
    end = end or start
    if start is None or end is None:
        return None
    if milestone:
        return _stamp(start, "08:00:00"), _stamp(start, "08:00:00"), "PT0H0M0S"
    return (
        _stamp(start, "08:00:00"),
        _stamp(end, "17:00:00"),
        f"PT{_working_hours(start, end)}H0M0S",
    )


def _add(parent: ET.Element, tag: str, value: Any) -> None:
    if value is None:
        return
    ET.SubElement(parent, f"{{{NS}}}{tag}").text = _xml_text(value)


def _calendar(parent: ET.Element) -> None:
    calendars = ET.SubElement(parent, f"{{{NS}}}Calendars")
    calendar = ET.SubElement(calendars, f"{{{NS}}}Calendar")
    _add(calendar, "UID", 1)
    _add(calendar, "Name", "Standard")
    _add(calendar, "IsBaseCalendar", 1)
    _add(calendar, "BaseCalendarUID", -1)
    days = ET.SubElement(calendar, f"{{{NS}}}WeekDays")
    for day_type in range(1, 8):  # 1 is Sunday
        day = ET.SubElement(days, f"{{{NS}}}WeekDay")
        _add(day, "DayType", day_type)
        working = day_type not in (1, 7)
        _add(day, "DayWorking", int(working))
        if working:
            times = ET.SubElement(day, f"{{{NS}}}WorkingTimes")
            for start, end in (("08:00:00", "12:00:00"), ("13:00:00", "17:00:00")):
                time = ET.SubElement(times, f"{{{NS}}}WorkingTime")
                _add(time, "FromTime", start)
                _add(time, "ToTime", end)


def document(project: Project) -> bytes:
    """The work-package register as an MSPDI plan: the project summary task (UID 0) and one
    task per package at outline level 1, in the register's order (see docs/product.md)."""
    packages = list(selectors.work_packages(project))
    ET.register_namespace("", NS)
    root = ET.Element(f"{{{NS}}}Project")
    _add(root, "SaveVersion", 14)
    _add(root, "Name", f"{project.key}.xml")
    _add(root, "Title", project.name)
    _add(root, "CreationDate", timezone.localtime().strftime("%Y-%m-%dT%H:%M:%S"))
    _add(root, "ScheduleFromStart", 1)
    days = [d for wp in packages for d in _dates(wp) if d]
    first, last = (min(days), max(days)) if days else (timezone.localdate(),) * 2
    _add(root, "StartDate", _stamp(first, "08:00:00"))
    _add(root, "FinishDate", _stamp(last, "17:00:00"))
    _add(root, "CurrencyDigits", 2)
    code = formatting.currency()
    symbols = spreadsheet_values.CURRENCY_SYMBOLS.get(code.upper(), ())
    _add(root, "CurrencySymbol", symbols[0] if symbols else code)
    _add(root, "CurrencyCode", code)
    _add(root, "CalendarUID", 1)
    _add(root, "DefaultStartTime", "08:00:00")
    _add(root, "DefaultFinishTime", "17:00:00")
    _add(root, "MinutesPerDay", 480)
    _add(root, "MinutesPerWeek", 2400)
    _add(root, "DaysPerMonth", 20)
    _calendar(root)
    tasks = ET.SubElement(root, f"{{{NS}}}Tasks")
    summary = ET.SubElement(tasks, f"{{{NS}}}Task")
    _add(summary, "UID", 0)
    _add(summary, "ID", 0)
    _add(summary, "Name", project.name)
    _add(summary, "Type", 1)
    _add(summary, "IsNull", 0)
    _add(summary, "OutlineNumber", 0)
    _add(summary, "OutlineLevel", 0)
    _add(summary, "Start", _stamp(first, "08:00:00"))
    _add(summary, "Finish", _stamp(last, "17:00:00"))
    _add(summary, "Duration", f"PT{_working_hours(first, last)}H0M0S")
    _add(summary, "DurationFormat", 7)
    _add(summary, "Milestone", 0)
    _add(summary, "Summary", 1)
    for number, wp in enumerate(packages, start=1):
        _package_task(tasks, number, wp)
    body = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' + body).encode("utf-8")


def _dates(wp: WorkPackage) -> list[dt.date | None]:
    return [
        wp.planned_start_date,
        wp.planned_end_date,
        wp.forecast_start_date,
        wp.forecast_end_date,
    ]


def _package_task(tasks: ET.Element, number: int, wp: WorkPackage) -> None:
    """One package as a task: Start and Finish are the forecast dates when the package has
    both (its planned dates then Baseline 0's), else the planned dates; Cost is the forecast
    spend when there is one (the budget then Baseline 0's cost), else the budget."""
    milestone = wp.type == MILESTONE_TYPE
    forecast = wp.forecast_start_date is not None and wp.forecast_end_date is not None
    current = (
        _span(wp.forecast_start_date, wp.forecast_end_date, milestone)
        if forecast
        else _span(wp.planned_start_date, wp.planned_end_date, milestone)
    )
    planned = _span(wp.planned_start_date, wp.planned_end_date, milestone) if forecast else None
    cost = wp.budget_forecast if wp.budget_forecast is not None else wp.budget
    task = ET.SubElement(tasks, f"{{{NS}}}Task")
    _add(task, "UID", number)
    _add(task, "ID", number)
    _add(task, "Name", wp.name)
    _add(task, "Type", 1)
    _add(task, "IsNull", 0)
    _add(task, "WBS", number)
    _add(task, "OutlineNumber", number)
    _add(task, "OutlineLevel", 1)
    if current:
        _add(task, "Start", current[0])
        _add(task, "Finish", current[1])
        _add(task, "Duration", current[2])
        _add(task, "DurationFormat", 7)
    _add(task, "Milestone", int(milestone))
    _add(task, "Summary", 0)
    _add(task, "PercentComplete", wp.progress)
    _add(task, "Cost", _hundredths(cost))
    if wp.actual_start_date:
        _add(task, "ActualStart", _stamp(wp.actual_start_date, "08:00:00"))
    if wp.actual_end_date:
        _add(task, "ActualFinish", _stamp(wp.actual_end_date, "17:00:00"))
    _add(task, "ActualCost", _hundredths(wp.budget_actual))
    _add(task, "Notes", wp.commentary or None)
    baseline_cost = wp.budget if wp.budget_forecast is not None else None
    if planned or baseline_cost is not None:
        block = ET.SubElement(task, f"{{{NS}}}Baseline")
        _add(block, "Number", 0)
        if planned:
            _add(block, "Start", planned[0])
            _add(block, "Finish", planned[1])
            _add(block, "Duration", planned[2])
        _add(block, "Cost", _hundredths(baseline_cost))


def export(project: Project) -> tuple[bytes, str, str]:
    """(content, content type, file name) of the work-package register as an MSPDI plan."""
    name = f"{project.key}-work-packages-{timezone.localdate().isoformat()}.xml"
    return document(project), CONTENT_TYPE, name
