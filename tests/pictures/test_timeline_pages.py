"""The work-package timeline on the register and on the status page (against the approved
plan there), with its table, and no query per row."""

import datetime as dt

from charter.models import BusinessCase
from registers.models import WorkPackage
from tests.factories import WorkPackageFactory
from tests.html import inline_problems
from tests.pictures.test_risk_matrix_pages import queries

REGISTER = "/projects/ALPHA/registers/work-packages/"
STATUS = "/projects/ALPHA/status/"


def add_packages(project, n):
    WorkPackage.objects.bulk_create(
        WorkPackage(
            project=project,
            name=f"Package {WorkPackage.objects.count()}-{i}",
            planned_start_date=dt.date(2026, 1, 1) + dt.timedelta(days=i),
            planned_end_date=dt.date(2026, 6, 1),
            forecast_start_date=dt.date(2026, 1, 1),
            forecast_end_date=dt.date(2026, 6, 10),
            actual_start_date=dt.date(2026, 1, 3),
        )
        for i in range(n)
    )


def test_register_draws_the_timeline_with_its_table(cast, client_for):
    wp = WorkPackageFactory(
        project=cast.project,
        name="Build",
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=dt.date(2026, 3, 31),
        forecast_start_date=dt.date(2026, 1, 1),
        forecast_end_date=dt.date(2026, 4, 14),
    )
    WorkPackageFactory(
        project=cast.project,
        name="Go-live",
        type="Milestone",
        planned_start_date=dt.date(2026, 5, 1),
        planned_end_date=dt.date(2026, 5, 1),
    )
    html = client_for(cast.viewer).get(REGISTER).content.decode()
    assert 'id="wp-timeline"' in html and 'class="today-line"' in html
    assert "+14 d" in html and 'class="milestone"' in html
    assert f'href="{REGISTER}{wp.pk}/"' in html
    assert "Show as a table" in html and "14 days late" in html
    assert "Planned (outlined)" in html  # the register has no approved plan to draw
    assert inline_problems(html) == []


def test_register_timeline_costs_no_query_per_row(cast, client_for):
    client = client_for(cast.viewer)
    add_packages(cast.project, 2)
    few = queries(client, REGISTER)
    add_packages(cast.project, 50)
    assert queries(client, REGISTER) == few


def test_status_timeline_draws_the_approved_plan_as_the_baseline(cast, client_for):
    wp = WorkPackageFactory(
        project=cast.project,
        name="Build",
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=dt.date(2026, 5, 31),  # moved after approval
        forecast_start_date=dt.date(2026, 1, 1),
        forecast_end_date=dt.date(2026, 5, 31),
    )
    BusinessCase.objects.create(
        project=cast.project,
        plan_baseline={
            "version": 1,
            "workPackages": {
                str(wp.pk): {"plannedStartDate": "2026-01-01", "plannedEndDate": "2026-03-31"}
            },
        },
    )
    client = client_for(cast.viewer)
    html = client.get(STATUS).content.decode()
    assert 'id="status-timeline"' in html
    assert "Baseline (approved plan) (outlined)" in html
    assert "1 Jan 2026 to 31 Mar 2026" in html  # the approved dates, not the moved ones
    assert "61 days late" in html and "+61 d" in html
    few = queries(client, STATUS)
    add_packages(cast.project, 40)
    assert queries(client, STATUS) == few


def test_a_paged_register_links_its_timeline_to_the_whole_one(cast, client_for):
    """The register's timeline draws the page's rows (100 a page); the status page's draws
    every package, and the register's links to it when the page shows fewer."""
    client = client_for(cast.viewer)
    add_packages(cast.project, 3)
    assert "See the whole timeline" not in client.get(REGISTER).content.decode()
    add_packages(cast.project, 120)
    html = client.get(REGISTER).content.decode()
    assert "This page&#x27;s 100 of 123 work packages." in html
    assert f'<a href="{STATUS}#status-timeline">See the whole timeline (123 work packages)</a>' in (
        html
    )
    whole = client.get(STATUS).content.decode()
    timeline = whole[whole.index('id="status-timeline"') :]
    timeline = timeline[: timeline.index("</figure>")]
    assert all(f">Package {n}-" in timeline for n in (0, 3))
    assert timeline.count('<th scope="row"') == 123
    assert inline_problems(html) == []
