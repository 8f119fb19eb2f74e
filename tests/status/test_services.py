"""Status writes: the spec's defaults, lenient overrides, clamped reasons, pass-through
metrics, stamps, concurrency, the initiation checklist and signals, and status reports whose
published snapshots never change."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from governance import permissions, signals
from governance.errors import Conflict, Forbidden, NotFound, Stale, ValidationFailed
from governance.models import AuditEntry
from status import selectors, services
from status.models import (
    STATUS_REASON_MAX,
    ProjectStatus,
    PublishedReportChanged,
    StatusReport,
)
from tests.factories import ProjectFactory, StatusReportFactory, WorkPackageFactory

REASONS = [
    "overallReason",
    "confidenceReason",
    "costRagOverrideReason",
    "scheduleRagOverrideReason",
    "scopeRagOverrideReason",
]


@pytest.fixture
def lead(cast):
    return permissions.caller_for(cast.lead, cast.project)


@pytest.fixture
def editor(cast):
    return permissions.caller_for(cast.editor, cast.project)


@pytest.fixture
def viewer(cast):
    return permissions.caller_for(cast.viewer, cast.project)


def status_of(project) -> dict:
    from status.serializers import status_to_dict

    return status_to_dict(selectors.view_for(project))


def test_a_never_saved_status_reads_the_spec_defaults_without_writing(cast):
    body = status_of(cast.project)
    assert body["overallRag"] == "None"
    assert body["phase"] == "Initiation"
    assert body["reportingCadence"] == "Monthly"
    assert body["outcomeConfidence"] == "Unknown"
    assert body["adoptionConfidence"] == "Unknown"
    assert body["initiationDismissals"] == {}
    assert body["brCadence"] is None
    assert [body[f"{d}RagOverride"] for d in ("cost", "schedule", "scope", "risk")] == [None] * 4
    assert not ProjectStatus.objects.exists()


def test_update_stamps_last_updated_and_audits_the_change(cast, lead):
    before = timezone.now()
    status = services.status_update(caller=lead, data={"overallRag": "Amber", "phase": "Build"})
    assert status.last_updated_at >= before
    assert status.last_updated_by_account_id == cast.lead.account_id
    assert (status.overall_rag, status.phase, status.revision) == ("Amber", "Build", 2)
    entry = AuditEntry.objects.get(kind="status.updated")
    assert entry.project_key == "ALPHA"
    assert entry.changes["overallRag"] == {"before": "None", "after": "Amber"}
    assert entry.changes["phase"] == {"before": "Initiation", "after": "Build"}


def test_saving_without_changes_confirms_the_status_as_current(cast, lead):
    services.status_update(caller=lead, data={}, now=timezone.now() - dt.timedelta(days=40))
    assert status_of(cast.project)["stale"] is True
    services.status_update(caller=lead, data={})
    assert status_of(cast.project)["stale"] is False


@pytest.mark.parametrize(
    "field", ["costRagOverride", "scheduleRagOverride", "scopeRagOverride", "riskRagOverride"]
)
def test_overrides_outside_the_enum_become_null(cast, lead, field):
    services.status_update(caller=lead, data={field: "Amber"})
    assert status_of(cast.project)[field] == "Amber"
    for junk in ("Purple", "red", 3, "", None, ["Red"]):
        services.status_update(caller=lead, data={field: "Green"})
        services.status_update(caller=lead, data={field: junk})
        assert status_of(cast.project)[field] is None, junk


def test_an_override_of_none_is_a_value_not_null(cast, lead):
    services.status_update(caller=lead, data={"riskRagOverride": "None"})
    body = status_of(cast.project)
    assert body["riskRagOverride"] == "None"
    assert body["effective"]["riskRag"] == "None"


@pytest.mark.parametrize("field", REASONS)
def test_reason_lines_are_trimmed_clamped_to_120_and_cleared_by_empty(cast, lead, field):
    services.status_update(caller=lead, data={field: "  " + "x" * 119 + "  "})
    assert status_of(cast.project)[field] == "x" * 119
    services.status_update(caller=lead, data={field: "y" * STATUS_REASON_MAX})
    assert status_of(cast.project)[field] == "y" * 120
    services.status_update(caller=lead, data={field: "z" * 121})
    assert status_of(cast.project)[field] == "z" * 120
    services.status_update(caller=lead, data={field: "w" * 5000})
    assert status_of(cast.project)[field] == "w" * 120
    services.status_update(caller=lead, data={field: ""})
    assert status_of(cast.project)[field] == ""


def test_a_reason_that_is_not_text_is_refused(lead):
    with pytest.raises(ValidationFailed) as exc:
        services.status_update(caller=lead, data={"overallReason": ["a"]})
    assert "overallReason" in exc.value.fields


def test_confidence_reads_unknown_when_missing_and_refuses_other_values(cast, lead):
    services.status_update(caller=lead, data={"outcomeConfidence": "High"})
    assert status_of(cast.project)["outcomeConfidence"] == "High"
    services.status_update(caller=lead, data={"outcomeConfidence": None})
    assert ProjectStatus.objects.get().outcome_confidence is None
    assert status_of(cast.project)["outcomeConfidence"] == "Unknown"
    with pytest.raises(ValidationFailed) as exc:
        services.status_update(caller=lead, data={"adoptionConfidence": "Certain"})
    assert list(exc.value.fields) == ["adoptionConfidence"]


@pytest.mark.parametrize(
    "metrics",
    [{"velocity": [12, 15, 9], "nested": {"a": None}}, [1, "two", 3.5], 42, "free text", None],
)
def test_project_metrics_pass_through_as_given(cast, lead, metrics):
    services.status_update(caller=lead, data={"projectMetrics": metrics})
    assert status_of(cast.project)["projectMetrics"] == metrics


def test_oversized_project_metrics_are_refused(lead):
    with pytest.raises(ValidationFailed) as exc:
        services.status_update(caller=lead, data={"projectMetrics": {"blob": "x" * 60_000}})
    assert "projectMetrics" in exc.value.fields


def test_revised_forecast_is_a_nullable_number(cast, lead):
    services.status_update(caller=lead, data={"revisedForecast": "1200.50"})
    assert status_of(cast.project)["revisedForecast"] == 1200.5
    for lenient in ("", "-5", "n/a", None):
        services.status_update(caller=lead, data={"revisedForecast": lenient})
        assert status_of(cast.project)["revisedForecast"] is None
    # More decimal places: rounded half-even (the document's nullable number), not refused.
    services.status_update(caller=lead, data={"revisedForecast": "10.125"})
    assert status_of(cast.project)["revisedForecast"] == 10.12
    with pytest.raises(ValidationFailed) as exc:
        services.status_update(caller=lead, data={"revisedForecast": 10**16})
    assert "revisedForecast" in exc.value.fields


def test_bad_enums_text_and_commentary_are_refused_naming_every_field(lead):
    with pytest.raises(ValidationFailed) as exc:
        services.status_update(
            caller=lead,
            data={
                "overallRag": "Purple",
                "reportingCadence": "Hourly",
                "brCadence": "Weekly",
                "phase": "p" * 201,
                "pmKeyMessage": "m" * 2001,
                "structuredCommentary": {"keyMessages": "k" * 2001, "mood": "fine"},
                "nonsense": 1,
            },
        )
    assert set(exc.value.fields) == {
        "overallRag",
        "reportingCadence",
        "brCadence",
        "phase",
        "pmKeyMessage",
        "structuredCommentary.keyMessages",
        "structuredCommentary.mood",
        "nonsense",
    }


def test_a_refused_update_changes_nothing(cast, lead):
    with pytest.raises(ValidationFailed):
        services.status_update(caller=lead, data={"overallRag": "Amber", "phase": "p" * 500})
    assert not ProjectStatus.objects.exists()
    assert not AuditEntry.objects.filter(kind__startswith="status.").exists()


def test_structured_commentary_and_br_cadence_are_stored(cast, lead):
    services.status_update(
        caller=lead,
        data={
            "structuredCommentary": {"keyMessages": " On track ", "keyRisks": ""},
            "brCadence": "Annual",
        },
    )
    body = status_of(cast.project)
    assert body["structuredCommentary"] == {
        "keyMessages": "On track",
        "keyRisks": "",
        "decisionsRequired": "",
    }
    assert body["brCadence"] == "Annual"
    services.status_update(caller=lead, data={"structuredCommentary": {"keyMessages": ""}})
    assert status_of(cast.project)["structuredCommentary"] is None


def test_read_only_fields_sent_back_are_ignored(cast, lead):
    body = status_of(cast.project)
    body["overallRag"] = "Green"
    body["derived"] = {"costRag": "Blue"}
    body["lastUpdatedByAccountId"] = "someone-else"
    body["initiationDismissals"] = {"sponsorNamed": "2020-01-01"}
    services.status_update(caller=lead, data=body)
    stored = ProjectStatus.objects.get()
    assert stored.overall_rag == "Green"
    assert stored.last_updated_by_account_id == cast.lead.account_id
    assert stored.initiation_dismissals == {}


def test_only_editors_update_status(cast, editor, viewer):
    services.status_update(caller=editor, data={"overallRag": "Green"})
    with pytest.raises(Forbidden):
        services.status_update(caller=viewer, data={"overallRag": "Red"})
    sponsor = permissions.caller_for(cast.sponsor, cast.project)
    with pytest.raises(Forbidden):
        services.status_update(caller=sponsor, data={"overallRag": "Red"})
    assert ProjectStatus.objects.get().overall_rag == "Green"


def test_a_stale_revision_is_refused(cast, lead, editor):
    services.status_update(caller=lead, data={"overallRag": "Green"}, expected_revision=1)
    with pytest.raises(Stale):
        services.status_update(caller=editor, data={"overallRag": "Red"}, expected_revision=1)
    services.status_update(caller=editor, data={"overallRag": "Red"}, expected_revision=2)
    assert ProjectStatus.objects.get().revision == 3


# --- initiation ---------------------------------------------------------------------------------


def test_dismissing_a_checklist_item_keeps_when(cast, lead):
    services.status_checklist_dismiss(caller=lead, item_id="risksIdentified")
    stored = ProjectStatus.objects.get().initiation_dismissals
    assert set(stored) == {"risksIdentified"}
    at = dt.datetime.fromisoformat(stored["risksIdentified"])
    assert abs((timezone.now() - at).total_seconds()) < 60
    # Dismissing again keeps the first timestamp.
    services.status_checklist_dismiss(caller=lead, item_id="risksIdentified")
    assert ProjectStatus.objects.get().initiation_dismissals == stored
    item = next(
        i for i in status_of(cast.project)["initiationChecklist"] if i["id"] == "risksIdentified"
    )
    assert item["dismissedAt"] == stored["risksIdentified"]
    services.status_checklist_restore(caller=lead, item_id="risksIdentified")
    assert ProjectStatus.objects.get().initiation_dismissals == {}
    kinds = list(AuditEntry.objects.order_by("id").values_list("kind", flat=True))
    assert kinds == ["status.checklist_dismissed", "status.checklist_restored"]


def test_unknown_checklist_items_are_refused(lead, viewer):
    with pytest.raises(ValidationFailed):
        services.status_checklist_dismiss(caller=lead, item_id="coffeeMachine")
    with pytest.raises(Forbidden):
        services.status_checklist_dismiss(caller=viewer, item_id="sponsorNamed")


def test_acknowledging_initiation_is_refused_before_the_case_is_approved(cast, lead):
    with pytest.raises(Conflict) as refused:
        services.status_initiation_acknowledge(caller=lead)
    assert refused.value.message == services.INITIATION_NOT_STARTED
    status = ProjectStatus.objects.filter(project=cast.project).first()
    assert status is None or status.initiation_completed_at is None
    assert not AuditEntry.objects.filter(kind="status.initiation_completed").exists()


def test_acknowledging_initiation_completes_it_once(cast, lead):
    signals.charter_approved.send(sender=None, project=cast.project, at=timezone.now())
    services.status_initiation_acknowledge(caller=lead)
    completed = ProjectStatus.objects.get().initiation_completed_at
    assert completed is not None
    with pytest.raises(Conflict):
        services.status_initiation_acknowledge(caller=lead)
    assert ProjectStatus.objects.get().initiation_completed_at == completed


def test_charter_approval_signal_starts_initiation_once(cast):
    approved_at = timezone.now() - dt.timedelta(days=3)
    signals.charter_approved.send(sender=None, project=cast.project, at=approved_at)
    status = ProjectStatus.objects.get(project=cast.project)
    assert status.initiation_started_at == approved_at
    assert (status.overall_rag, status.phase, status.reporting_cadence) == (
        "None",
        "Initiation",
        "Monthly",
    )
    assert status.last_updated_at is None  # no one reported a status
    signals.charter_approved.send(sender=None, project=cast.project, at=timezone.now())
    assert ProjectStatus.objects.get().initiation_started_at == approved_at
    assert AuditEntry.objects.filter(kind="status.initiation_started").count() == 1


def test_initiation_completed_signal_sets_completed_once(cast, lead):
    services.status_update(caller=lead, data={"overallRag": "Green"})
    held = timezone.now() - dt.timedelta(days=1)
    signals.initiation_completed.send(sender=None, project=cast.project, at=held)
    signals.initiation_completed.send(sender=None, project=cast.project, at=timezone.now())
    status = ProjectStatus.objects.get()
    assert status.initiation_completed_at == held
    assert status.overall_rag == "Green"


def test_signal_receivers_write_inside_the_senders_transaction(cast):
    with transaction.atomic():
        signals.charter_approved.send(sender=None, project=cast.project, at=timezone.now())
        assert ProjectStatus.objects.filter(initiation_started_at__isnull=False).exists()
        transaction.set_rollback(True)
    assert not ProjectStatus.objects.exists()


# --- status reports -----------------------------------------------------------------------------


def test_a_draft_starts_with_today_and_the_status_key_messages(cast, lead):
    services.status_update(caller=lead, data={"structuredCommentary": {"keyMessages": "All good."}})
    report = services.status_report_create(caller=lead, data={})
    assert report.state == "Draft"
    assert report.title == f"Status report {timezone.localdate().isoformat()}"
    assert report.key_messages == "All good."
    assert report.created_by_account_id == cast.lead.account_id


def test_one_draft_at_a_time(lead):
    services.status_report_create(caller=lead, data={"title": "March"})
    with pytest.raises(Conflict):
        services.status_report_create(caller=lead, data={"title": "April"})
    assert StatusReport.objects.count() == 1


def test_publishing_freezes_a_snapshot_of_status_derived_values_and_drivers(cast, lead):
    WorkPackageFactory(
        project=cast.project, name="Build", budget=Decimal(1000), budget_forecast=Decimal(1200)
    )
    services.status_update(
        caller=lead, data={"overallRag": "Amber", "overallReason": "Over budget"}
    )
    report = services.status_report_create(
        caller=lead, data={"title": "March", "keyMessages": "Cost pressure."}
    )
    published = services.status_report_publish(caller=lead, report_id=report.pk)
    assert published.state == "Published"
    assert published.published_by_account_id == cast.lead.account_id
    snapshot = StatusReport.objects.get().snapshot
    assert snapshot["title"] == "March"
    assert snapshot["keyMessages"] == "Cost pressure."
    assert snapshot["publishedByAccountId"] == cast.lead.account_id
    status = snapshot["status"]
    assert status["overallRag"] == "Amber"
    assert status["derived"]["costRag"] == "Red"
    assert status["drivers"]["costRag"]["summary"] == (
        "The forecast (EAC) EUR\u00a01,200 is 20% over the budget (not yet approved) of "
        "EUR\u00a01,000, above the Amber line at 10%."
    )
    assert status["effective"] == status_of(cast.project)["effective"]


def test_a_published_report_never_changes(cast, lead):
    package = WorkPackageFactory(
        project=cast.project, budget=Decimal(1000), budget_forecast=Decimal(1000)
    )
    report = services.status_report_create(caller=lead, data={"title": "March"})
    services.status_report_publish(caller=lead, report_id=report.pk)
    frozen = StatusReport.objects.get().snapshot
    # The world moves on...
    package.budget_forecast = Decimal(5000)
    package.save()
    services.status_update(caller=lead, data={"overallRag": "Red", "costRagOverride": "Amber"})
    # ...the report does not.
    assert StatusReport.objects.get().snapshot == frozen
    assert frozen["status"]["derived"]["costRag"] == "Green"
    with pytest.raises(Conflict):
        services.status_report_update(caller=lead, report_id=report.pk, data={"title": "X"})
    with pytest.raises(Conflict):
        services.status_report_delete(caller=lead, report_id=report.pk)
    with pytest.raises(Conflict):
        services.status_report_publish(caller=lead, report_id=report.pk)
    stored = StatusReport.objects.get()
    stored.title = "Rewritten"
    with pytest.raises(PublishedReportChanged):
        stored.save()
    with pytest.raises(PublishedReportChanged):
        stored.delete()
    with pytest.raises(PublishedReportChanged):
        StatusReport.objects.filter(pk=report.pk).update(title="Rewritten")
    with pytest.raises(PublishedReportChanged):
        StatusReport.objects.filter(pk=report.pk).delete()
    assert StatusReport.objects.get().title == "March"


def test_drafts_are_edited_and_discarded(cast, lead):
    report = services.status_report_create(caller=lead, data={"title": "March"})
    updated = services.status_report_update(
        caller=lead,
        report_id=report.pk,
        data={"keyMessages": "Updated"},
        expected_revision=report.revision,
    )
    assert (updated.key_messages, updated.revision) == ("Updated", 2)
    with pytest.raises(Stale):
        services.status_report_update(
            caller=lead, report_id=report.pk, data={"title": "Y"}, expected_revision=1
        )
    with pytest.raises(ValidationFailed) as exc:
        services.status_report_update(
            caller=lead, report_id=report.pk, data={"title": "", "keyMessages": "k" * 2001}
        )
    assert set(exc.value.fields) == {"title", "keyMessages"}
    services.status_report_delete(caller=lead, report_id=report.pk)
    assert not StatusReport.objects.exists()
    assert AuditEntry.objects.filter(kind="status_report.deleted").count() == 1


def test_reports_of_another_project_are_not_found(cast, lead):
    other = StatusReportFactory(project=ProjectFactory())
    with pytest.raises(NotFound):
        services.status_report_publish(caller=lead, report_id=other.pk)
    with pytest.raises(NotFound):
        services.status_report_update(caller=lead, report_id="not-a-uuid", data={})


def test_viewers_do_not_draft_or_publish(cast, lead, viewer):
    with pytest.raises(Forbidden):
        services.status_report_create(caller=viewer, data={})
    report = services.status_report_create(caller=lead, data={})
    with pytest.raises(Forbidden):
        services.status_report_publish(caller=viewer, report_id=report.pk)
    assert StatusReport.objects.get().state == "Draft"


def test_published_reports_come_newest_first(cast, lead):
    for days, title in ((30, "Older"), (2, "Newer")):
        report = services.status_report_create(caller=lead, data={"title": title})
        services.status_report_publish(
            caller=lead, report_id=report.pk, now=timezone.now() - dt.timedelta(days=days)
        )
    assert [r.title for r in selectors.published_reports(cast.project)] == ["Newer", "Older"]
