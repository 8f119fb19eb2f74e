"""Every register page and API list runs the same number of queries at 1 and at 200 rows."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from tests.factories import SteeringMinutesFactory

REGISTERS = ["work-packages", "risks", "decisions", "changes"]


def fill(cast, register: str, n: int) -> None:
    """n rows with a realistic spread: several owners and makers, links, notes, minutes,
    treating decisions and target work packages, so any per-row lookup would show."""
    project = cast.project
    people = [cast.lead.account_id, cast.editor.account_id, cast.sponsor.account_id, None]
    if register == "work-packages":
        start = WorkPackage.objects.count()
        WorkPackage.objects.bulk_create(
            WorkPackage(
                project=project,
                name=f"Package {start + i}",
                owner_account_id=people[i % 4],
                status="In Progress",
                progress=50,
                rag=["Red", "Amber", "Green", "None"][i % 4],
                planned_start_date=dt.date(2026, 1, 1) + dt.timedelta(days=i),
                planned_end_date=dt.date(2026, 6, 1),
                forecast_end_date=dt.date(2026, 6, 10),
                budget=1000 + i,
                linked_issue_keys=[f"ALPHA-{i + 1}"],
                sort_order=i if i % 2 else None,
            )
            for i in range(n)
        )
    elif register == "risks":
        risks = Risk.objects.bulk_create(
            Risk(
                project=project,
                title=f"Risk {i}",
                owner_account_id=people[i % 4],
                direction="Risk" if i % 3 else "Opportunity",
                materialised=bool(i % 3 == 1),
                impact=1 + i % 5,
                likelihood=1 + (i * 2) % 5,
                treatment="Accept" if i % 3 else "Pursue",
                accepted_by_account_id=people[(i + 1) % 4],
                status="Closed" if i % 5 == 0 else "Open",
            )
            for i in range(n)
        )
        Decision.objects.bulk_create(
            Decision(project=project, decision=f"Treat {r.title}", treated_risk_id=str(r.pk))
            for r in risks[::2]
        )
    elif register == "decisions":
        minutes = SteeringMinutesFactory(project=project)
        Decision.objects.bulk_create(
            Decision(
                project=project,
                decision=f"Decision {i}",
                made_on=dt.date(2026, 1, 1) if i % 2 else None,
                made_by_account_id=people[i % 4],
                recorded_by=people[(i + 1) % 4],
                created_by_account_id=cast.lead.account_id,
                minutes_ref={"id": str(minutes.pk), "title": minutes.title, "url": ""},
                notes=[
                    {
                        "id": "n",
                        "text": "note",
                        "authorAccountId": people[(i + 2) % 4] or "x",
                        "at": "2026-01-01T00:00:00+00:00",
                    }
                ],
            )
            for i in range(n)
        )
    else:
        target, _ = WorkPackage.objects.get_or_create(project=project, name="Target")
        ChangeRequest.objects.bulk_create(
            ChangeRequest(
                project=project,
                summary=f"Change {i}",
                proposer_account_id=people[i % 4],
                approver_account_id=people[(i + 1) % 4],
                status=["Proposed", "Approved", "Rejected", "Withdrawn"][i % 4],
                dimensions=[["Scope"], ["Budget"], ["Schedule", "Budget"], []][i % 4],
                impact_budget=i,
                target_work_package_id=target.pk if i % 2 else None,
                decided_by_account_id=people[(i + 2) % 4],
            )
            for i in range(n)
        )


def count(client, url, **headers) -> int:
    assert client.get(url, **headers).status_code == 200  # warm the name cache
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, **headers)
        if response.streaming:  # a streamed export reads its rows as it is sent
            b"".join(response.streaming_content)
    assert response.status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("register", REGISTERS)
@pytest.mark.parametrize("role", ["lead", "viewer"])
def test_register_page_queries_do_not_grow_with_rows(cast, client_for, register, role):
    client = client_for(getattr(cast, role))
    url = f"/projects/ALPHA/registers/{register}/"
    fill(cast, register, 1)
    one = count(client, url)
    fill(cast, register, 199)
    assert count(client, url) == one


@pytest.mark.parametrize("register", REGISTERS)
def test_api_list_queries_do_not_grow_with_rows(cast, client_for, bearer, register):
    client = client_for(None)
    auth = bearer(cast.viewer)
    url = f"/api/v1/projects/ALPHA/{register}"
    fill(cast, register, 1)
    one = count(client, url, **auth)
    fill(cast, register, 199)
    assert count(client, url, **auth) == one
    first = client.get(url, **auth).json()
    assert len(first["items"]) == 100 and first["next"]
    # The next page, read from its cursor, costs what the first did.
    assert count(client, first["next"], **auth) == one


@pytest.mark.parametrize("register", REGISTERS)
def test_exports_queries_do_not_grow_with_rows(cast, client_for, register):
    client = client_for(cast.viewer)
    url = f"/projects/ALPHA/registers/{register}/export/?format=csv"
    fill(cast, register, 1)
    one = count(client, url)
    fill(cast, register, 199)
    assert count(client, url) == one


def test_the_tab_bar_counts_are_one_query_and_count_only_the_project(cast, db):
    from registers import selectors
    from tests.factories import (
        ChangeRequestFactory,
        DecisionFactory,
        RiskFactory,
        WorkPackageFactory,
    )

    WorkPackageFactory.create_batch(3, project=cast.project)
    RiskFactory.create_batch(2, project=cast.project)
    ChangeRequestFactory(project=cast.project)
    WorkPackageFactory()  # another project's rows are not counted
    DecisionFactory()
    with CaptureQueriesContext(connection) as queries:
        counts = selectors.register_counts(cast.project)
    assert len(queries) == 1
    assert counts == {"work-packages": 3, "risks": 2, "decisions": 0, "changes": 1}
