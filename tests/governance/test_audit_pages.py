"""The audit log and a record's history read as sentences with names, the changed fields as
labels with before -> after, 50 a page, filtered by person, kind and date; the stored entry
only behind a "details" toggle."""

import datetime as dt
import re

from django.utils import timezone

from governance import audit
from governance.models import AuditEntry
from governance.permissions import caller_for
from registers import services
from tests.factories import WorkPackageFactory

AUDIT = "/projects/ALPHA/audit/"


def outside_details(html: str) -> str:
    """The text a person reads without opening a "details" toggle."""
    html = re.sub(r"<details class=\"audit-raw\">.*?</details>", "", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_entries_read_as_sentences_with_names_and_labelled_changes(cast, client_for):
    lead = caller_for(cast.lead, cast.project)
    change = services.change_create(
        caller=lead, data={"summary": "Extend pilot", "impactScheduleDays": 14}
    )
    wp = WorkPackageFactory(project=cast.project, name="Build")
    services.work_package_update(
        caller=caller_for(cast.editor, cast.project),
        wp_id=wp.pk,
        data={"plannedStartDate": "2026-03-01", "ownerAccountId": cast.viewer.account_id},
    )
    html = client_for(cast.viewer).get(AUDIT).content.decode()
    shown = outside_details(html)
    assert "Lena Lead raised change request “Extend pilot”" in shown
    assert "Eddie Editor edited work package “Build”" in shown
    assert "Planned start date" in shown and "1 Mar 2026" in shown
    assert "Owner" in shown and "Vera Viewer" in shown
    assert "Schedule impact (days)" in shown
    for code in ("change.created", "work_package.updated", "plannedStartDate", "changeRequest"):
        assert code not in shown, code
    raw = re.search(r'<details class="audit-raw">.*?</details>', html, re.S).group(0)
    assert "Details" in raw and "work_package.updated" in html
    assert str(change.pk) in html  # the stored form, one click away


def test_fifty_a_page(cast, client_for):
    for n in range(55):
        audit.record(
            actor_account_id=cast.lead.account_id,
            project_key="ALPHA",
            kind="status.updated",
            target_type="projectStatus",
            target_id="ALPHA",
            changes={"phase": {"before": f"P{n}", "after": f"P{n + 1}"}},
        )
    client = client_for(cast.viewer)
    html = client.get(AUDIT).content.decode()
    assert html.count('<li class="audit-line">') == 50
    assert "Page 1 of 2" in html and "55 entries" in html
    html = client.get(f"{AUDIT}?page=2").content.decode()
    assert html.count('<li class="audit-line">') == 5
    assert "Lena Lead updated the project status" in html


def test_filters_by_person_kind_and_date(cast, client_for):
    old = timezone.now() - dt.timedelta(days=40)
    for actor, kind, at in (
        (cast.lead, "status.updated", timezone.now()),
        (cast.editor, "status.updated", old),
        (cast.editor, "closeout.started", timezone.now()),
    ):
        AuditEntry.objects.create(
            actor_account_id=actor.account_id,
            project_key="ALPHA",
            kind=kind,
            target_type="businessCase",
            target_id="ALPHA",
            at=at,
        )
    client = client_for(cast.viewer)
    html = client.get(AUDIT).content.decode()
    assert '<option value="closeout.started">Started the close-out</option>' in html
    assert f'<option value="{cast.editor.account_id}">Eddie Editor</option>' in html
    html = client.get(f"{AUDIT}?actor={cast.editor.account_id}").content.decode()
    assert html.count('<li class="audit-line">') == 2
    html = client.get(f"{AUDIT}?kind=status.updated").content.decode()
    assert html.count('<li class="audit-line">') == 2
    since = (timezone.localdate() - dt.timedelta(days=7)).isoformat()
    html = client.get(f"{AUDIT}?kind=status.updated&from={since}").content.decode()
    assert html.count('<li class="audit-line">') == 1
    assert "Lena Lead updated the project status" in html
    until = (timezone.localdate() - dt.timedelta(days=30)).isoformat()
    html = client.get(f"{AUDIT}?to={until}", HTTP_HX_REQUEST="true").content.decode()
    assert html.count('<li class="audit-line">') == 1 and "Eddie Editor" in html
    assert client.get(f"{AUDIT}?from=not-a-date").status_code == 200


def test_a_record_history_reads_as_sentences(cast, client_for):
    lead = caller_for(cast.lead, cast.project)
    risk = services.risk_create(caller=lead, data={"title": "Vendor late", "impact": 3})
    services.risk_update(caller=lead, risk_id=risk.pk, data={"impact": 5})
    html = client_for(cast.viewer).get(f"/projects/ALPHA/registers/risks/{risk.pk}/").content
    shown = outside_details(html.decode())
    assert "Lena Lead added this risk" in shown and "Lena Lead edited this risk" in shown
    assert "risk.updated" not in shown


def test_a_change_naming_a_record_reads_as_its_title(cast, client_for):
    """A field holding a record's id (the decision that treats a risk) reads as the record's
    title, not its id; one query per kind of record, as the entries' own titles."""
    lead = caller_for(cast.lead, cast.project)
    risk = services.risk_create(
        caller=lead, data={"title": "Vendor late", "impact": 3, "materialised": True}
    )
    decision = services.risk_record_decision(
        caller=lead, risk_id=risk.pk, data={"decision": "Bring in the standby supplier"}
    )
    for page in (f"/projects/ALPHA/registers/risks/{risk.pk}/", AUDIT):
        shown = outside_details(client_for(cast.viewer).get(page).content.decode())
        assert "Treating decision Bring in the standby supplier" in shown
        assert str(decision.pk) not in shown


def test_the_audit_page_queries_do_not_grow_with_entries(
    cast, client_for, django_assert_max_num_queries
):
    lead = caller_for(cast.lead, cast.project)
    for n in range(30):
        services.risk_create(caller=lead, data={"title": f"Risk {n}"})
        services.change_create(caller=lead, data={"summary": f"Change {n}"})
    client = client_for(cast.viewer)
    client.get(AUDIT)
    with django_assert_max_num_queries(15):  # + the unread-notification count
        assert client.get(AUDIT).status_code == 200
