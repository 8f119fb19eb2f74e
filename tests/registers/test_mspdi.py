"""Microsoft Project plans (MSPDI XML): the import of a plan into the work packages through
the register import's pipeline (preview, digest-checked commit, per-row errors, all or
nothing), the refusals of hostile or wrong files, and the export of the register as a plan
that imports back to the same packages."""

import datetime as dt
import os
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from governance.errors import ValidationFailed
from governance.permissions import caller_for
from registers import mspdi, sample_plan, spreadsheets
from registers.models import WorkPackage
from registers.services import import_file, import_preview, work_package_create

NS = "http://schemas.microsoft.com/project"


def task(uid, level, name, start=None, finish=None, **extra) -> str:
    parts = [f"<UID>{uid}</UID><ID>{uid}</ID><Name>{name}</Name>"]
    parts.append(f"<OutlineLevel>{level}</OutlineLevel>")
    if start:
        parts.append(f"<Start>{start}T08:00:00</Start>")
    if finish:
        parts.append(f"<Finish>{finish}T17:00:00</Finish>")
    baseline = extra.pop("Baseline", None)
    for tag, value in extra.items():
        parts.append(f"<{tag}>{value}</{tag}>")
    if baseline:
        parts.append("<Baseline><Number>0</Number>" + baseline + "</Baseline>")
    return "<Task>" + "".join(parts) + "</Task>"


def plan(*tasks: str, prolog: str = "") -> bytes:
    body = "".join(tasks)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>{prolog}<Project xmlns="{NS}"><Tasks>'
        f"<Task><UID>0</UID><ID>0</ID><Name>Project</Name><OutlineLevel>0</OutlineLevel></Task>"
        f"{body}</Tasks><Resources><Resource><UID>1</UID><Name>Ann</Name></Resource></Resources>"
        "</Project>"
    ).encode()


def upload(content: bytes, name: str = "plan.xml") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content)


def preview(cast, content: bytes, level=None, name="plan.xml"):
    caller = caller_for(cast.lead, cast.project)
    return import_preview(
        caller=caller, register="work-packages", upload=upload(content, name), outline_level=level
    )


def refusal(cast, content: bytes, name="plan.xml", register="work-packages", level=None) -> str:
    caller = caller_for(cast.lead, cast.project)
    with pytest.raises(ValidationFailed) as raised:
        import_preview(
            caller=caller, register=register, upload=upload(content, name), outline_level=level
        )
    return " ".join(m for messages in raised.value.fields.values() for m in messages)


PLAN = plan(
    task(1, 1, "Design", "2027-01-04", "2027-02-05", Summary=1, FixedCost=10000),
    task(
        2,
        2,
        "Sketches",
        "2027-01-04",
        "2027-01-15",
        Duration="PT80H0M0S",
        PercentComplete=100,
        Cost=352625,
        ActualCost=352625,
    ),
    task(
        3,
        2,
        "Drawings",
        "2027-01-18",
        "2027-02-05",
        Duration="PT120H0M0S",
        PercentComplete=20,
        Cost=100000,
        ActualCost=20000,
    ),
    task(
        4,
        1,
        "Go-live",
        "2027-03-01",
        "2027-03-01",
        Duration="PT0H0M0S",
        Milestone=0,
        PercentComplete=0,
    ),
    task(
        5,
        1,
        "Build",
        "2027-02-08",
        "2027-03-12",
        Duration="PT200H0M0S",
        PercentComplete=37,
        Cost=500000,
        ActualCost=1000,
        Notes="<![CDATA[Walls & roof <first>]]>",
        Baseline="<Start>2027-02-01T08:00:00</Start><Finish>2027-03-05T17:00:00</Finish>"
        "<Cost>450000</Cost>",
    ),
)


# --- reading ---------------------------------------------------------------------------------


def test_tasks_at_the_outline_level_become_packages_and_the_tasks_below_roll_up(cast):
    outcome = preview(cast, PLAN)
    assert outcome.errors == []
    assert outcome.created == 3
    reading = mspdi.read_file(upload(PLAN))
    rows = dict(reading.rows)
    assert sorted(rows) == [1, 4, 5]  # the tasks' IDs; the project summary task never
    design = rows[1]
    assert design["name"] == "Design"
    assert (design["plannedStartDate"], design["plannedEndDate"]) == ("2027-01-04", "2027-02-05")
    # costs summed over the tasks below, the summary's fixed cost added; hundredths read
    assert Decimal(design["budget"]) == Decimal("3526.25") + Decimal("1000") + Decimal("100")
    assert Decimal(design["budgetActual"]) == Decimal("3726.25")
    # percent complete weighted by duration: (100*80 + 20*120) / 200 = 52 -> 50
    assert (design["progress"], design["status"]) == (50, "In Progress")
    note = next(n for n in reading.notes if n["row"] == 1 and n["field"] == "progress")
    assert "weighted by duration" in note["message"] and "52%" in note["message"]


def test_a_milestone_is_a_zero_length_package_and_the_baseline_gives_the_planned_dates(cast):
    rows = dict(mspdi.read_file(upload(PLAN)).rows)
    golive = rows[4]
    assert golive["type"] == "Milestone"
    assert golive["plannedStartDate"] == golive["plannedEndDate"] == "2027-03-01"
    assert (golive["progress"], golive["status"]) == (0, "Not Started")
    build = rows[5]
    assert (build["plannedStartDate"], build["plannedEndDate"]) == ("2027-02-01", "2027-03-05")
    assert (build["forecastStartDate"], build["forecastEndDate"]) == ("2027-02-08", "2027-03-12")
    assert Decimal(build["budget"]) == Decimal("4500")
    assert Decimal(build["budgetForecast"]) == Decimal("5000")
    assert build["commentary"] == "Walls & roof <first>"
    assert (build["progress"], build["status"]) == (40, "In Progress")


def test_a_deeper_outline_level_gives_the_tasks_below_and_keeps_leaves_above(cast):
    rows = dict(mspdi.read_file(upload(PLAN), 2).rows)
    assert sorted(rows) == [2, 3, 4, 5]
    assert rows[2]["name"] == "Sketches" and (rows[2]["progress"], rows[2]["status"]) == (
        100,
        "Complete",
    )


def test_the_commit_creates_the_packages_all_at_once_and_checks_the_preview(cast):
    caller = caller_for(cast.lead, cast.project)
    seen = preview(cast, PLAN)
    outcome = import_file(
        caller=caller, register="work-packages", upload=upload(PLAN), expected_digest=seen.digest
    )
    assert outcome.created == 3
    build = WorkPackage.objects.get(project=cast.project, name="Build")
    assert build.planned_end_date == dt.date(2027, 3, 5)
    assert build.forecast_end_date == dt.date(2027, 3, 12)
    assert build.budget == Decimal("4500.00") and build.budget_baseline is None
    assert build.progress == 40 and build.status == "In Progress"
    # the same file read at another outline level is another outcome: its digest differs
    level_two = preview(cast, PLAN, level=2)
    assert level_two.digest != seen.digest


def test_a_refused_task_refuses_the_plan_with_its_row_and_nothing_is_created(cast):
    caller = caller_for(cast.lead, cast.project)
    work_package_create(caller=caller, data={"name": "Build"})
    content = plan(
        task(1, 1, "Build", "2027-01-04", "2027-01-08"),
        task(2, 1, "Later", "2027-01-04", "2027-01-08", PercentComplete=150),
    )
    outcome = preview(cast, content)
    assert {(e["row"], e["field"]) for e in outcome.errors} == {(1, "name"), (2, "progress")}
    assert any(
        "between 0 and 100" in e["message"] or "0 to 100" in e["message"] for e in outcome.errors
    )
    with pytest.raises(ValidationFailed):
        import_file(caller=caller, register="work-packages", upload=upload(content))
    assert WorkPackage.objects.filter(project=cast.project).count() == 1


def test_two_tasks_of_one_name_are_told_apart_by_their_outline_number(cast):
    content = plan(
        task(1, 1, "Phase A", OutlineNumber=1),
        task(2, 2, "Review", "2027-01-04", "2027-01-04", OutlineNumber="1.1"),
        task(3, 1, "Phase B", OutlineNumber=2),
        task(4, 2, "Review", "2027-02-04", "2027-02-04", OutlineNumber="2.1"),
    )
    reading = mspdi.read_file(upload(content), 2)
    assert [d["name"] for _, d in reading.rows] == ["Review", "Review (2.1)"]
    assert any(n["row"] == 4 and n["field"] == "name" for n in reading.notes)


# --- refusals --------------------------------------------------------------------------------


def test_an_mpp_file_is_refused_with_the_way_to_save_it_as_xml(cast):
    content = mspdi.OLE2_MAGIC + b"\0" * 600
    message = refusal(cast, content, name="plan.mpp")
    assert "File > Save As" in message and "XML Format (*.xml)" in message


def test_a_plan_is_refused_by_the_other_registers_and_xml_that_is_not_a_plan(cast):
    assert "work packages only" in refusal(cast, PLAN, register="risks")
    assert "not a Microsoft Project plan" in refusal(cast, b"<?xml version='1.0'?><html/>")


@pytest.mark.parametrize(
    "prolog",
    [
        # billion laughs
        '<!DOCTYPE Project [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>',
        # an external entity
        '<!DOCTYPE Project [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    ],
)
def test_a_document_type_or_entities_are_refused_unread(cast, prolog):
    content = plan(task(1, 1, "&b;&x;", "2027-01-04", "2027-01-08"), prolog=prolog)
    assert "refused unread" in refusal(cast, content)


def test_size_element_count_and_outline_level_limits(cast, monkeypatch):
    big = plan(task(1, 1, "x" * (spreadsheets.MAX_BYTES + 1)))
    assert "At most 5 MB" in refusal(cast, big)
    monkeypatch.setattr(mspdi, "MAX_ELEMENTS", 50)
    many = plan(*(task(n, 1, f"T{n}", "2027-01-04", "2027-01-08") for n in range(1, 20)))
    assert "At most 50 XML elements" in refusal(cast, many)
    for level in ("0", "101", "1.5", "NaN", "9" * 400, "-1"):
        assert "whole number from 1 to 100" in refusal(cast, PLAN, level=level)


def test_characters_xml_cannot_carry_refuse_the_file_with_a_message(cast):
    for name in ("A&#0;B", "A&#xD800;B", "A&#1;B"):
        message = refusal(cast, plan(task(1, 1, name, "2027-01-04", "2027-01-08")))
        assert "not well-formed XML" in message


@pytest.mark.parametrize(
    ("extra", "field", "words"),
    [
        ({"PercentComplete": 150}, "progress", "0 to 100"),
        ({"PercentComplete": -5}, "progress", "0 to 100"),
        ({"PercentComplete": "NaN"}, "progress", "0 to 100"),
        ({"Cost": "1" + "0" * 400}, "budget", "not an amount"),
        ({"Cost": "Infinity"}, "budget", "not an amount"),
        ({"Cost": "1" + "0" * 30}, "budget", ""),  # an amount past the field's limit
        ({"ActualCost": "1e5"}, "budgetActual", "not an amount"),
        ({"Name": "N" * 201}, "name", "200"),  # XML cannot carry the refused controls
    ],
)
def test_hostile_values_are_refused_per_row_with_a_message(cast, extra, field, words):
    name = extra.pop("Name", "Hostile")
    outcome = preview(cast, plan(task(1, 1, name, "2027-01-04", "2027-01-08", **extra)))
    errors = [e for e in outcome.errors if e["row"] == 1 and e["field"] == field]
    assert errors, outcome.errors
    assert words in errors[0]["message"]


def test_dates_in_year_9999_and_unreadable_dates_are_refused_per_row(cast):
    outcome = preview(
        cast,
        plan(
            task(1, 1, "Far", "9999-12-30", "9999-12-31"),
            task(2, 1, "Odd", "2027-13-45", "2027-01-08"),
        ),
    )
    fields = {(e["row"], e["field"]) for e in outcome.errors}
    assert (1, "plannedStartDate") in fields and (2, "plannedStartDate") in fields
    odd = next(e for e in outcome.errors if e["row"] == 2)
    assert "not a date and time" in odd["message"]


def test_percent_complete_off_the_steps_is_read_onto_them_with_a_warning(cast):
    content = plan(
        task(1, 1, "Barely", "2027-01-04", "2027-01-08", PercentComplete=3),
        task(2, 1, "Almost", "2027-01-04", "2027-01-08", PercentComplete=97),
    )
    outcome = preview(cast, content)
    assert outcome.errors == []
    rows = dict(mspdi.read_file(upload(content)).rows)
    assert (rows[1]["progress"], rows[1]["status"]) == (10, "In Progress")
    assert (rows[2]["progress"], rows[2]["status"]) == (90, "In Progress")
    assert {w["row"] for w in outcome.warnings if w["field"] == "progress"} == {1, 2}


# --- page and API ----------------------------------------------------------------------------


def test_the_api_previews_and_commits_a_plan_at_an_outline_level(cast, bearer):
    client, auth = Client(), bearer(cast.lead)
    url = "/api/v1/projects/ALPHA/work-packages/import"
    answer = client.post(f"{url}?dryRun=true&outlineLevel=2", data={"file": upload(PLAN)}, **auth)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert (body["rows"], body["create"], body["errors"]) == (4, 4, [])
    answer = client.post(
        f"{url}?outlineLevel=2",
        data={"file": upload(PLAN), "previewDigest": body["previewDigest"]},
        **auth,
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["created"] == 4
    names = set(WorkPackage.objects.filter(project=cast.project).values_list("name", flat=True))
    assert names == {"Sketches", "Drawings", "Go-live", "Build"}
    refused = client.post(f"{url}?outlineLevel=0", data={"file": upload(PLAN)}, **auth)
    assert refused.status_code == 422
    assert "whole number from 1 to 100" in refused.content.decode()
    mpp = client.post(url, data={"file": upload(mspdi.OLE2_MAGIC + b"x" * 100, "a.mpp")}, **auth)
    assert mpp.status_code == 422 and "XML Format" in mpp.content.decode()


def test_the_page_previews_a_plan_and_imports_it_on_confirmation(cast, client_for):
    client = client_for(cast.lead)
    url = "/projects/ALPHA/registers/work-packages/import/"
    page = client.get(url)
    assert 'name="outlineLevel"' in page.content.decode()
    answer = client.post(url, {"file": upload(PLAN), "outlineLevel": "1"})
    text = answer.content.decode()
    assert answer.status_code == 200, text
    assert "would create <strong>3 work packages</strong>" in text
    token = text.split('name="token" value="')[1].split('"')[0]
    done = client.post(url, {"token": token})
    assert done.status_code == 302
    assert WorkPackage.objects.filter(project=cast.project).count() == 3


# --- export ----------------------------------------------------------------------------------


def _packages(cast) -> None:
    caller = caller_for(cast.lead, cast.project)
    for data in (
        {
            "name": "Survey",
            "plannedStartDate": "2027-01-04",
            "plannedEndDate": "2027-01-29",
            "budget": "130500.50",
            "budgetActual": "2000",
            "progress": 30,
            "status": "In Progress",
            "commentary": "Site & <access> notes",
        },
        {
            "name": "Approval",
            "type": "Milestone",
            "plannedStartDate": "2027-02-01",
            "plannedEndDate": "2027-02-01",
            "progress": 0,
            "status": "Not Started",
        },
        {
            "name": "Build",
            "plannedStartDate": "2027-02-01",
            "plannedEndDate": "2027-03-26",
            "forecastStartDate": "2027-02-08",
            "forecastEndDate": "2027-04-02",
            "budget": "90000",
            "budgetForecast": "95000.25",
            "progress": 100,
            "status": "Complete",
        },
        {"name": "Undated"},
    ):
        work_package_create(caller=caller, data=data)


FIELDS = [
    "name",
    "type",
    "planned_start_date",
    "planned_end_date",
    "forecast_start_date",
    "forecast_end_date",
    "progress",
    "status",
    "budget",
    "budget_forecast",
    "budget_actual",
    "commentary",
]


def test_the_export_imports_back_to_the_same_packages(cast):
    _packages(cast)
    before = list(WorkPackage.objects.filter(project=cast.project).order_by("name").values(*FIELDS))
    content, content_type, name = spreadsheets.export(cast.project, "work-packages", "mspdi")
    assert content_type.startswith("application/xml") and name.endswith(".xml")
    assert b"<Cost>13050050</Cost>" in content
    WorkPackage.objects.filter(project=cast.project).delete()
    caller = caller_for(cast.lead, cast.project)
    outcome = import_file(caller=caller, register="work-packages", upload=upload(content))
    assert outcome.created == 4 and outcome.errors == []
    after = list(WorkPackage.objects.filter(project=cast.project).order_by("name").values(*FIELDS))
    assert after == before


def test_the_export_is_a_download_on_the_page_and_in_the_api(cast, client_for, bearer):
    _packages(cast)
    page = client_for(cast.viewer).get("/projects/ALPHA/registers/work-packages/")
    assert "?format=mspdi" in page.content.decode()
    answer = client_for(cast.viewer).get(
        "/projects/ALPHA/registers/work-packages/export/?format=mspdi"
    )
    assert answer.status_code == 200 and b"<Name>Survey</Name>" in answer.content
    api = Client().get(
        "/api/v1/projects/ALPHA/work-packages/export?format=mspdi", **bearer(cast.viewer)
    )
    assert api.status_code == 200 and api.content.count(b"<Task>") == 5
    wrong = Client().get("/api/v1/projects/ALPHA/risks/export?format=mspdi", **bearer(cast.viewer))
    assert wrong.status_code == 422


def test_a_stored_value_xml_cannot_carry_does_not_break_the_export(cast):
    _packages(cast)
    WorkPackage.objects.filter(name="Survey").update(commentary="a\ufffeb")
    content = mspdi.document(cast.project)
    rows = dict(mspdi.read_file(upload(content)).rows)
    assert rows[1]["commentary"] == "a\ufffdb"


def test_an_independent_reader_opens_the_export(cast):
    """MPXJ (the library ProjectLibre and many tools read Microsoft Project files with) reads
    the export: names, dates, percent complete, costs and the baseline."""
    mpxj_reader = pytest.importorskip("tests.registers.mpxj_reader")
    if not mpxj_reader.available():
        pytest.skip("MPXJ needs the mpxj and JPype1 packages and a Java runtime")
    _packages(cast)
    tasks = mpxj_reader.read(mspdi.document(cast.project))
    by_name = {t["name"]: t for t in tasks}
    assert by_name["Alpha programme"]["outlineLevel"] == 0
    survey = by_name["Survey"]
    assert (survey["start"], survey["finish"]) == ("2027-01-04T08:00", "2027-01-29T17:00")
    assert survey["percentComplete"] == 30.0 and survey["cost"] == 130500.5
    assert survey["notes"] == "Site & <access> notes"
    assert by_name["Approval"]["milestone"] is True
    build = by_name["Build"]
    assert (build["start"], build["finish"]) == ("2027-02-08T08:00", "2027-04-02T17:00")
    assert build["baselineFinish"] == "2027-03-26T17:00" and build["baselineCost"] == 90000.0
    assert build["percentComplete"] == 100.0


# --- real plans ------------------------------------------------------------------------------


SAMPLES = os.environ.get("MSPDI_SAMPLES_DIR")


def site_currency(code: str) -> None:
    from governance import formatting
    from governance.models import SiteSettings

    site = SiteSettings.load()
    site.currency = code
    site.save()
    formatting.forget_currency()


@pytest.mark.skipif(not SAMPLES, reason="MSPDI_SAMPLES_DIR names no folder of real plans")
def test_real_plans_of_microsoft_project_and_projectlibre_import(cast):
    folder = Path(SAMPLES or ".")
    # The two plans of Microsoft Project cost in pounds (CurrencyCode GBP, CurrencySymbol £);
    # ProjectLibre's has no costs, so its $ does not matter.
    site_currency("GBP")
    expected = {
        "mpxj_sample_msp2003.xml": 3,
        "mpxj_task_baselines_msp2019.xml": 110,
        "projectlibre_new_product.xml": 7,
    }
    for file_name, count in expected.items():
        content = (folder / file_name).read_bytes()
        outcome = preview(cast, content)
        assert outcome.errors == [], (file_name, outcome.errors[:3])
        assert outcome.created == count, file_name
    rows = dict(mspdi.read_file(upload((folder / "mpxj_sample_msp2003.xml").read_bytes())).rows)
    assert rows[1]["name"] == "First Task" and Decimal(rows[1]["budget"]) == Decimal("3526.25")
    assert rows[1]["commentary"] == "Test Task Notes"
    library = dict(
        mspdi.read_file(upload((folder / "projectlibre_new_product.xml").read_bytes()), 2).rows
    )
    assert library[1]["type"] == "Milestone"  # ProjectLibre writes Milestone 0: zero duration


def test_the_sample_plan_has_two_hundred_tasks_and_imports(cast):
    content = sample_plan.plan(200, start=dt.date(2027, 1, 4), today=dt.date(2027, 4, 1))
    assert content.count(b"<Task>") == 201
    outcome = preview(cast, content)
    assert outcome.errors == [] and outcome.created == 8
    rows = [d for _, d in mspdi.read_file(upload(content)).rows]
    today = dt.date(2027, 4, 1)
    for data in rows:  # what ended before the day the plan is read against is complete
        if dt.date.fromisoformat(data.get("forecastEndDate", data["plannedEndDate"])) < today:
            assert data["status"] == "Complete", data


# --- queries ---------------------------------------------------------------------------------


def _statements(run) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        run()
    return sum(
        not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
        for q in queries.captured_queries
    )


def test_a_plan_costs_the_same_statements_for_8_or_192_packages(cast):
    caller = caller_for(cast.lead, cast.project)
    content = sample_plan.plan(200, start=dt.date(2027, 1, 4), today=dt.date(2027, 4, 1))
    counts = []
    for level in (1, 2):
        WorkPackage.objects.filter(project=cast.project).delete()

        def run(level=level):
            outcome = import_file(
                caller=caller,
                register="work-packages",
                upload=upload(content),
                outline_level=level,
            )
            assert outcome.created == (8 if level == 1 else 192)

        counts.append(_statements(run))
    # 192 rows in multi-row INSERTs (SQLite's bound-parameter limit splits them in batches)
    assert counts[1] <= counts[0] + 12, counts


def test_the_export_reads_the_register_in_one_query(cast, django_assert_num_queries):
    _packages(cast)
    with django_assert_num_queries(1):
        mspdi.document(cast.project)


def test_the_page_refuses_an_mpp_with_the_way_to_save_it_and_a_commit_at_another_level(
    cast, client_for, bearer
):
    page = client_for(cast.lead).post(
        "/projects/ALPHA/registers/work-packages/import/",
        {"file": upload(mspdi.OLE2_MAGIC + b"\0" * 100, "plan.mpp"), "outlineLevel": "1"},
    )
    assert page.status_code == 422
    assert "XML Format (*.xml)" in page.content.decode()
    client, auth = Client(), bearer(cast.lead)
    url = "/api/v1/projects/ALPHA/work-packages/import"
    seen = client.post(f"{url}?dryRun=true", data={"file": upload(PLAN)}, **auth).json()
    other = client.post(
        f"{url}?outlineLevel=2",
        data={"file": upload(PLAN), "previewDigest": seen["previewDigest"]},
        **auth,
    )
    assert other.status_code == 409
    assert not WorkPackage.objects.filter(project=cast.project).exists()


def test_tasks_without_an_id_or_with_one_id_twice_are_still_rows_of_their_own(cast):
    content = plan(
        "<Task><Name>No id</Name><OutlineLevel>1</OutlineLevel></Task>",
        task(7, 1, "Seven"),
        task(7, 1, "Seven again"),
    )
    outcome = preview(cast, content)
    assert outcome.errors == [] and outcome.created == 3
    assert [n for n, _ in mspdi.read_file(upload(content)).rows] == [1, 7, 8]


@pytest.mark.skipif(not SAMPLES, reason="MSPDI_SAMPLES_DIR names no folder of real plans")
def test_the_reader_agrees_with_mpxj_on_real_plans(cast):
    """Every task without tasks below it, read by this reader at the deepest level and by
    MPXJ: the same name, dates and cost (so the hundredths, the dates and the outline are
    read as the independent reader reads them)."""
    mpxj_reader = pytest.importorskip("tests.registers.mpxj_reader")
    if not mpxj_reader.available():
        pytest.skip("MPXJ needs the mpxj and JPype1 packages and a Java runtime")
    paths = sorted(Path(SAMPLES or ".").glob("*.xml"))
    assert len(paths) == 3
    site_currency("GBP")
    for path in paths:
        content = path.read_bytes()
        ours = dict(mspdi.read_file(upload(content), 100).rows)
        theirs = {
            t["id"]: t
            for t in mpxj_reader.read(content)
            if t["leaf"] and t["outlineLevel"] and not t["null"]
        }
        assert theirs and sorted(ours) == sorted(theirs), path.name
        for number, task in theirs.items():
            data = ours[number]
            assert data["name"] == task["name"], (path.name, number)
            start = data.get("forecastStartDate", data["plannedStartDate"])
            assert start == task["start"][:10], (path.name, number)
            if not task["milestone"]:
                end = data.get("forecastEndDate", data["plannedEndDate"])
                assert end == task["finish"][:10], (path.name, number)
            cost = data.get("budgetForecast", data.get("budget"))
            assert Decimal(cost or 0) == Decimal(str(task["cost"] or 0)), (path.name, number)
