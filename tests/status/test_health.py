"""The stored health rows (status.health): what the portfolio reads always equals a fresh
derivation. Every change of a fact rewrites its project's row in the same transaction; a row
the clock overtakes (staleness, the scope wait, a new day) or derived under other thresholds is
derived again when read."""

import datetime as dt
import random
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from charter.models import BusinessCase
from governance import signals
from governance.errors import DomainError
from governance.models import Project, SiteSettings
from governance.permissions import caller_for
from registers.models import ChangeRequest, Risk, WorkPackage
from registers.services import (
    change_adjudicate,
    change_create,
    change_delete,
    decision_create,
    risk_create,
    risk_delete,
    risk_record_decision,
    risk_update,
    work_package_create,
    work_package_delete,
    work_package_update,
)
from status import health, services
from status.models import ProjectHealth, ProjectStatus
from tests.factories import (
    ChangeRequestFactory,
    ProjectFactory,
    RiskFactory,
    UserFactory,
    WorkPackageFactory,
)

PROJECTS = 50


def fresh(projects, now=None):
    """The portfolio values derived now from the facts, nothing stored read or written."""
    return {
        pk: (row, cells) for pk, (_, row, cells) in health.derive_values(projects, now=now).items()
    }


def stored(projects, now):
    """The stored rows that hold at `now` (as the portfolio's read takes them, without
    deriving anything)."""
    fingerprint = health.basis(SiteSettings.load())
    found = {}
    for record in ProjectHealth.objects.filter(project__in=projects):
        assert record.basis == fingerprint, record.project_id
        assert record.computed_at <= now < record.valid_until, record.project_id
        assert record.as_of == timezone.localdate(record.computed_at)
        found[record.project_id] = (record.row, record.risk_cells)
    return found


@pytest.fixture
def world(db):
    lead = UserFactory(username="health-lead")
    approver = UserFactory(username="health-approver")
    admin = UserFactory(username="health-admin", admin=True)
    projects = [
        ProjectFactory(key=f"H{n:02d}", lead=lead, browsers=[approver, admin])
        for n in range(PROJECTS)
    ]
    return SimpleNamespace(lead=lead, approver=approver, admin=admin, projects=projects)


class Editor:
    """Random edits through the services (and, for what has no service here, model saves),
    each in its own transaction as a request makes them."""

    def __init__(self, rng, lead, approver):
        self.rng, self.lead, self.approver = rng, lead, approver

    def day(self, spread=200):
        return (
            timezone.localdate() + dt.timedelta(days=self.rng.randrange(-spread, spread))
        ).isoformat()

    def edit(self, project):
        rng = self.rng
        caller = caller_for(self.lead, project)
        packages = list(WorkPackage.objects.filter(project=project).values_list("pk", flat=True))
        risks = list(Risk.objects.filter(project=project))
        changes = list(ChangeRequest.objects.filter(project=project))
        act = rng.choice(
            [
                "wp_create", "wp_create", "wp_update", "wp_update", "wp_delete",
                "risk_create", "risk_update", "risk_delete", "risk_decision",
                "decision", "change", "change", "approve", "change_delete", "change_age",
                "status", "status_age", "case", "approval",
            ]
        )  # fmt: skip
        if act == "wp_create" or (act.startswith("wp_") and not packages):
            start = self.day()
            work_package_create(
                caller=caller,
                data={
                    "name": f"Package {rng.randrange(10**6)}",
                    "budget": rng.choice([None, rng.randrange(1, 500) * 100]),
                    "budgetForecast": rng.choice([None, rng.randrange(1, 600) * 100]),
                    "plannedStartDate": start,
                    "plannedEndDate": rng.choice([None, start]),
                    "forecastEndDate": rng.choice([None, self.day()]),
                    "status": rng.choice(["Not Started", "In Progress", "Blocked"]),
                },
            )
        elif act == "wp_update":
            work_package_update(
                caller=caller,
                wp_id=rng.choice(packages),
                data=rng.choice(
                    [
                        {"budgetForecast": rng.randrange(1, 900) * 100},
                        {"forecastEndDate": self.day()},
                        {"status": "Blocked"},
                        {"status": "Complete", "progress": 100},
                        {"budget": rng.randrange(1, 500) * 100},
                    ]
                ),
            )
        elif act == "wp_delete":
            work_package_delete(caller=caller, wp_id=rng.choice(packages))
        elif act == "risk_create" or (act.startswith("risk_") and not risks):
            risk_create(
                caller=caller,
                data={
                    "title": f"Risk {rng.randrange(10**6)}",
                    "impact": rng.randrange(1, 6),
                    "likelihood": rng.randrange(1, 6),
                    "materialised": rng.random() < 0.3,
                    "direction": rng.choice(["Risk", "Risk", "Opportunity"]),
                },
            )
        elif act == "risk_update":
            risk_update(
                caller=caller,
                risk_id=rng.choice(risks).pk,
                data=rng.choice(
                    [
                        {"status": "Closed"},
                        {"impact": rng.randrange(1, 6)},
                        {"residualImpact": 1, "residualLikelihood": rng.randrange(1, 6)},
                        {"materialised": True},
                    ]
                ),
            )
        elif act == "risk_delete":
            risk_delete(caller=caller, risk_id=rng.choice(risks).pk)
        elif act == "risk_decision":
            risk_record_decision(caller=caller, risk_id=rng.choice(risks).pk)
        elif act == "decision":
            decision_create(
                caller=caller,
                data={"decision": "Go", "madeOn": rng.choice([None, self.day(10)])},
            )
        elif act == "change" or (act in ("approve", "change_delete", "change_age") and not changes):
            dims = rng.choice([["Scope"], ["Budget"], ["Schedule"], ["Scope", "Budget"]])
            data = {
                "summary": f"Change {rng.randrange(10**6)}",
                "dimensions": dims,
                "approverAccountId": self.approver.account_id,
            }
            if "Budget" in dims:
                data["impactBudget"] = rng.randrange(-10, 30) * 100
            if "Schedule" in dims:
                data["impactScheduleDays"] = rng.randrange(-5, 40)
            change_create(caller=caller, data=data)
        elif act == "approve":
            change = rng.choice(changes)
            if change.status == "Proposed":
                change_adjudicate(
                    caller=caller_for(self.approver, project),
                    change_id=change.pk,
                    outcome=rng.choice(["Approved", "Approved", "Withdrawn"]),
                )
        elif act == "change_delete":
            change_delete(caller=caller, change_id=rng.choice(changes).pk)
        elif act == "change_age":
            change = rng.choice(changes)
            change.created_at = timezone.now() - dt.timedelta(days=rng.uniform(0, 60))
            change.save()
        elif act == "status":
            services.status_update(
                caller=caller,
                data=rng.choice(
                    [
                        {"costRagOverride": rng.choice(["Red", "Amber", "Green", None])},
                        {"scheduleRagOverride": rng.choice(["Blue", None])},
                        {"revisedForecast": rng.choice([None, rng.randrange(1, 900) * 100])},
                        {"reportingCadence": rng.choice(["Daily", "Weekly", "Monthly"])},
                        {"overallRag": rng.choice(["Red", "Green"]), "phase": "Delivery"},
                    ]
                ),
            )
        elif act == "status_age":
            status, _ = ProjectStatus.objects.get_or_create(project=project)
            status.last_updated_at = timezone.now() - dt.timedelta(days=rng.uniform(0, 40))
            status.save()
        elif act == "case":
            case, _ = BusinessCase.objects.get_or_create(project=project)
            case.theme = rng.choice(["", "Cost Out", "Strategic"])
            case.adoption_affected = rng.choice(["", "Staff"])
            case.adoption_kpi = rng.choice(["", "Usage"])
            case.change_saturation = rng.choice(["Low", "Unknown"])
            case.adoption_owner = {"accountId": self.lead.account_id, "displayName": "Lead"}
            case.version = rng.choice([1, 2])
            case.save()
        elif act == "approval":
            with transaction.atomic():
                locked = Project.objects.select_for_update().get(pk=project.pk)
                locked.approval_status = rng.choice(["Draft", "Approved", "InRealisation"])
                locked.save(update_fields=["approval_status"])
                case, _ = BusinessCase.objects.get_or_create(project=project)
                case.approval_status = locked.approval_status
                case.realisation_started_at = timezone.now() - dt.timedelta(days=100)
                case.save()
        return act


@pytest.mark.parametrize("seed", [1, 2])
def test_the_stored_row_always_equals_a_fresh_derivation(world, seed):
    lead, approver, projects = world.lead, world.approver, world.projects
    rng = random.Random(seed)
    editor = Editor(rng, lead, approver)
    for _ in range(160):
        project = rng.choice(projects)
        project.refresh_from_db()
        try:
            editor.edit(project)
        except DomainError:
            continue  # a refused edit changes nothing (frozen registers, a decided change...)
        project.refresh_from_db()
        now = timezone.now()
        assert stored([project], now)[project.pk] == fresh([project], now)[project.pk]
    for project in projects:
        project.refresh_from_db()
    now = timezone.now()
    health.rows_for(projects, now=now)  # rows never written yet (no edit) are derived here
    assert stored(projects, now) == fresh(projects, now)
    # The clock moves on: staleness, scope waits and review dates change without any write.
    for days in (0.5, 1, 7, 30.2, 31, 45):
        later = now + dt.timedelta(days=days)
        rows, cells = health.rows_and_cells_for(projects, now=later)
        assert {pk: (rows[pk], cells[pk]) for pk in rows} == fresh(projects, later)
        assert stored(projects, later) == fresh(projects, later)


def test_the_summary_columns_read_are_the_row_s_members_stored_or_derived(world):
    """`columns_for` answers what `rows_for`'s row holds, for a row stored and for one derived
    on the read (missing), in one query when every row holds."""
    projects = world.projects
    for project in projects[:3]:
        RiskFactory(project=project, impact=4, likelihood=project.pk % 5 + 1)
    now = timezone.now()
    ProjectHealth.objects.filter(project=projects[0]).delete()
    found = health.columns_for(projects, ["top_risk_score", "overall_rag"], now=now)
    rows = health.rows_for(projects, now=now)
    assert found == {
        p.pk: {
            "top_risk_score": rows[p.pk]["topRiskScore"],
            "overall_rag": rows[p.pk]["overallRag"],
        }
        for p in projects
    }
    with CaptureQueriesContext(connection) as queries:
        assert health.columns_for(projects, ["top_risk_score"], now=now) == {
            pk: {"top_risk_score": values["top_risk_score"]} for pk, values in found.items()
        }
    assert len(queries) == 2  # the site's settings, the stored rows
    with pytest.raises(ValueError, match="not a summary column: row"):
        health.columns_for(projects, ["row"])


def test_the_portfolio_reads_stored_rows_without_deriving(world, client_for):
    projects, admin = world.projects, world.admin
    for project in projects[:3]:
        WorkPackageFactory(project=project, budget=Decimal(100), budget_forecast=Decimal(130))
    client = client_for(admin)
    first = client.get("/api/v1/portfolio")
    assert first.status_code == 200 and len(first.json()["items"]) == PROJECTS
    with CaptureQueriesContext(connection) as queries:
        again = client.get("/api/v1/portfolio")
    assert again.json() == first.json()
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    assert "status_projecthealth" in sql
    assert "registers_workpackage" not in sql
    assert first.json()["items"][0]["effective"]["costRag"] == "Red"


def test_a_change_rewrites_the_row_in_its_own_transaction(world):
    lead, projects = world.lead, world.projects
    project = projects[0]
    caller = caller_for(lead, project)
    work_package_create(caller=caller, data={"name": "Build", "budget": 100})
    assert ProjectHealth.objects.get(project=project).row["eac"] == 100
    with pytest.raises(RuntimeError), transaction.atomic():
        work_package_create(caller=caller, data={"name": "More", "budget": 50})
        assert ProjectHealth.objects.get(project=project).row["eac"] == 150
        raise RuntimeError
    # Rolled back with the change it followed.
    assert ProjectHealth.objects.get(project=project).row["eac"] == 100


def test_a_status_falls_stale_when_its_update_falls_due(world):
    lead, projects = world.lead, world.projects
    project = projects[0]
    services.status_update(caller=caller_for(lead, project), data={"reportingCadence": "Weekly"})
    record = ProjectHealth.objects.get(project=project)
    assert record.row["stale"] is False
    due = dt.datetime.fromisoformat(record.row["nextUpdateDueAt"])
    assert record.valid_until <= due
    assert (
        health.rows_for([project], now=due - dt.timedelta(seconds=1))[project.pk]["stale"] is False
    )
    assert (
        health.rows_for([project], now=due + dt.timedelta(seconds=1))[project.pk]["stale"] is True
    )
    assert ProjectHealth.objects.get(project=project).stale is True


@pytest.mark.parametrize("red_after", [30, 30.5])
def test_a_pending_scope_change_turns_red_after_its_threshold(world, red_after):
    projects = world.projects
    project = projects[0]
    if red_after != 30:
        site = SiteSettings.load()
        site.rag_thresholds = {"scopeRedAfterDays": red_after}
        site.save()
    raised = timezone.now() - dt.timedelta(days=red_after) + dt.timedelta(hours=2)
    change = ChangeRequestFactory(project=project, dimensions=["Scope"])
    change.created_at = raised
    change.save()
    now = timezone.now()
    assert health.rows_for([project], now=now)[project.pk]["effective"]["scopeRag"] == "Amber"
    red_at = raised + dt.timedelta(days=red_after)
    assert ProjectHealth.objects.get(project=project).valid_until <= red_at
    later = red_at + dt.timedelta(seconds=1)
    assert health.rows_for([project], now=later)[project.pk]["effective"]["scopeRag"] == "Red"


def test_a_row_of_an_earlier_day_is_derived_again(world):
    projects = world.projects
    project = projects[0]
    health.refresh([project.pk])
    ProjectHealth.objects.filter(project=project).update(
        as_of=timezone.localdate() - dt.timedelta(days=1),
        computed_at=timezone.now() - dt.timedelta(days=1),
        valid_until=timezone.now() - dt.timedelta(hours=1),
        row={"stale": "not what derive says"},
    )
    assert health.rows_for([project])[project.pk] == fresh([project])[project.pk][0]
    assert ProjectHealth.objects.get(project=project).as_of == timezone.localdate()


def test_new_thresholds_rewrite_every_row_in_their_transaction(world):
    projects = world.projects
    for project in projects[:2]:
        WorkPackageFactory(project=project, budget=Decimal(100), budget_forecast=Decimal(107))
    assert {r.cost_rag for r in ProjectHealth.objects.filter(project__in=projects[:2])} == {"Amber"}
    site = SiteSettings.load()
    site.rag_thresholds = {"costGreenMaxPct": 8}
    site.save()
    assert {r.cost_rag for r in ProjectHealth.objects.filter(project__in=projects[:2])} == {"Green"}
    computed = set(ProjectHealth.objects.values_list("computed_at", flat=True))
    site.governance_group = "pmo"  # moves no row
    site.save()
    assert set(ProjectHealth.objects.values_list("computed_at", flat=True)) == computed


def test_rows_derived_under_other_settings_are_derived_again(world, settings):
    projects = world.projects
    project = projects[0]
    WorkPackageFactory(project=project, budget=Decimal(100), budget_forecast=Decimal(107))
    assert health.rows_for([project])[project.pk]["effective"]["costRag"] == "Amber"
    settings.RAG_THRESHOLDS = {**settings.RAG_THRESHOLDS, "costGreenMaxPct": 8.0}
    assert health.rows_for([project])[project.pk]["effective"]["costRag"] == "Green"


def test_deleting_a_project_deletes_its_row(world):
    lead, projects = world.lead, world.projects
    project = projects[0]
    work_package_create(caller=caller_for(lead, project), data={"name": "Build", "budget": 1})
    assert ProjectHealth.objects.filter(project=project).exists()
    Project.objects.filter(pk=project.pk).delete()
    assert not ProjectHealth.objects.filter(project_id=project.pk).exists()
    connection.check_constraints()


def test_a_read_keeps_a_row_a_write_stored_after_it_began(world):
    """A read that derived from facts older than a concurrent write's keeps the write's row."""
    projects = world.projects
    project = projects[0]
    began = timezone.now()
    WorkPackageFactory(project=project, budget=Decimal(100))  # the write, after the read began
    written = ProjectHealth.objects.get(project=project)
    assert written.computed_at > began
    ProjectHealth.objects.filter(project=project).update(basis="older rules")
    health.rows_for([project], now=began)
    assert ProjectHealth.objects.get(project=project).computed_at == written.computed_at


def test_deferred_changes_rewrite_a_row_once(world, monkeypatch):
    projects = world.projects
    calls = []
    monkeypatch.setattr(health, "refresh", lambda ids, **kw: calls.append(set(ids)))
    with transaction.atomic(), signals.deferred_project_changes():
        for n in range(5):
            WorkPackageFactory(project=projects[n % 2])
        assert calls == []
    assert calls == [{projects[0].pk, projects[1].pk}]


def test_an_import_derives_the_health_once(world, monkeypatch):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from registers.services import register_import

    project = world.projects[0]
    calls = []
    monkeypatch.setattr(health, "refresh", lambda ids, **kw: calls.append(set(ids)))
    rows = "".join(f"Risk {n},4,3,Risk\n" for n in range(20))
    upload = SimpleUploadedFile("risks.csv", f"title,impact,likelihood,direction\n{rows}".encode())
    created = register_import(
        caller=caller_for(world.lead, project), register="risks", upload=upload
    )
    assert created == 20
    assert calls == [{project.pk}]


def test_the_stored_json_round_trips(world):
    """The row and its risk cells are stored as JSON through the driver's own adaptation and
    read back equal to what was derived: quotes, backslashes, line breaks and letters beyond
    ASCII in the text, money as numbers, None as null."""
    project = world.projects[0]
    RiskFactory(project=project, impact=4, likelihood=3)
    WorkPackageFactory(project=project, budget=Decimal("1234.50"))
    ProjectStatus.objects.update_or_create(
        project=project,
        defaults={"overall_rag": "Amber", "overall_reason": 'A "quoted" \\ reason\nnext: äöü €'},
    )
    health.refresh([project.pk])
    now = timezone.now()
    expected_row, expected_cells = fresh([project], now=now)[project.pk]
    record = ProjectHealth.objects.get(project=project)
    assert record.row["overallReason"] == 'A "quoted" \\ reason\nnext: äöü €'
    assert record.row == expected_row
    assert record.risk_cells == expected_cells
    rows, cells = health.rows_and_cells_for([project], now=now)
    assert rows[project.pk] == expected_row and cells[project.pk] == expected_cells
    assert health.rows_for([project], now=now)[project.pk] == expected_row
    assert not hasattr(health, "_DECODED") and not hasattr(health, "_TEXTS")


def test_a_write_stores_the_inputs_it_was_derived_from(world):
    """A write refreshes its own project's row, with the fingerprint of the inputs it read: the
    periodic job then finds nothing to do for it."""
    project = world.projects[0]
    health.refresh([p.pk for p in world.projects])
    before = ProjectHealth.objects.get(project=project)
    risk_create(
        caller=caller_for(world.lead, project),
        data={"title": "Supplier", "impact": 5, "likelihood": 5},
    )
    after = ProjectHealth.objects.get(project=project)
    assert after.row["topRiskScore"] == 25 and before.row["topRiskScore"] != 25
    assert after.inputs == health.inputs_of([project.pk])[project.pk] != before.inputs
    assert health.due_for_refresh(timezone.now()) == []


def test_the_periodic_job_skips_unchanged_rows_and_refreshes_changed_ones(world):
    """A change that reached the tables without its write's own refresh (a bulk update) is
    caught by the inputs fingerprint; every other row is left as stored, not derived again."""
    first, second = world.projects[:2]
    RiskFactory(project=first, impact=2, likelihood=2)
    health.refresh([p.pk for p in world.projects])
    stamps = dict(ProjectHealth.objects.values_list("project_id", "computed_at"))
    assert health.refresh_changed() == 0
    assert dict(ProjectHealth.objects.values_list("project_id", "computed_at")) == stamps
    # No signal: a bulk update (stamping its rows, as `auto_now` would) and a bulk insert.
    Risk.objects.filter(project=first).update(impact=5, likelihood=5, updated_at=timezone.now())
    WorkPackage.objects.bulk_create([WorkPackage(project=second, name="Bulk", budget=70)])
    assert set(health.due_for_refresh(timezone.now())) == {first.pk, second.pk}
    assert health.refresh_changed() == 2
    now = dict(ProjectHealth.objects.values_list("project_id", "computed_at"))
    assert {pk for pk in now if now[pk] != stamps[pk]} == {first.pk, second.pk}
    assert ProjectHealth.objects.get(project=first).row["topRiskScore"] == 25
    assert ProjectHealth.objects.get(project=second).row["eac"] == 70
    assert health.refresh_changed() == 0


def test_the_periodic_job_refreshes_the_rows_the_clock_overtook(world):
    """An update falling due (staleness) or a new day (dates passing) moves figures without
    any write: the rows the clock overtakes are derived again, the others are left."""
    project = world.projects[0]
    services.status_update(
        caller=caller_for(world.lead, project), data={"reportingCadence": "Weekly"}
    )
    start = timezone.make_aware(
        dt.datetime.combine(timezone.localdate() + dt.timedelta(days=1), dt.time(10, 0))
    )
    ProjectStatus.objects.filter(project=project).update(
        last_updated_at=start - dt.timedelta(days=7) + dt.timedelta(hours=1)
    )
    health.refresh([p.pk for p in world.projects], now=start)
    assert health.refresh_changed(start) == 0
    row = ProjectHealth.objects.get(project=project).row
    due = dt.datetime.fromisoformat(row["nextUpdateDueAt"])
    assert row["stale"] is False and start < due < start + dt.timedelta(hours=12)
    later = due + dt.timedelta(minutes=1)
    assert health.refresh_changed(later) == 1  # that project's row alone, now stale
    record = ProjectHealth.objects.get(project=project)
    assert record.row["stale"] is True and record.computed_at == later
    assert health.refresh_changed(later) == 0
    next_day = timezone.make_aware(
        dt.datetime.combine(timezone.localdate(start) + dt.timedelta(days=1), dt.time(0, 30))
    )
    assert health.refresh_changed(next_day) == PROJECTS  # each row holds for one day at most
    assert health.refresh_changed(next_day) == 0


def test_the_basis_and_every_cache_key_carry_the_deploy_version(db, settings):
    """Rows derived and pages cached by other code are not read: the deploy's version, not a
    digest of source files, says which code it was."""
    from django.core.cache import caches

    site = SiteSettings.load()
    before = health.basis(site)
    assert settings.CACHES["default"]["VERSION"] == settings.DEPLOY_VERSION
    assert caches["default"].version == settings.DEPLOY_VERSION
    settings.DEPLOY_VERSION = f"{settings.DEPLOY_VERSION}-next"
    assert health.basis(site) != before


def test_the_periodic_job_derives_again_the_rows_that_expired(db):
    """`health_refresh` rewrites, from the same model as every write, the rows that are missing
    or expired, and leaves the current ones."""
    from status import health
    from status.models import ProjectHealth
    from tests.factories import ProjectFactory

    first, second = ProjectFactory(), ProjectFactory()
    health.refresh([first.pk, second.pk])
    ProjectHealth.objects.filter(project=second).update(valid_until=timezone.now())
    ProjectHealth.objects.filter(project=first).delete()
    kept = ProjectHealth.objects.get(project=second).computed_at
    assert health.refresh_changed() == 2
    assert ProjectHealth.objects.filter(project__in=[first, second]).count() == 2
    assert ProjectHealth.objects.get(project=second).computed_at > kept
    assert health.refresh_changed() == 0
