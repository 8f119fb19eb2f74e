"""Bulk edit of a register's rows (registers.services.bulk and the register pages' bulk bar):
the single edit's service row by row in one transaction, all or nothing, one audit entry per
row, refusals named by row and field label; the page's permission, CSRF and HTMX answers;
the totals under the table over the whole filter; queries that do not grow with the rows."""

import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from governance.errors import Forbidden, Frozen
from governance.formatting import money
from governance.models import AuditEntry
from governance.permissions import caller_for
from registers.models import Risk, WorkPackage
from registers.services import risk_update, work_package_update
from registers.services.bulk import BulkRefused, BulkRow, bulk_update
from registers.views.risks import PAGES as RISK_PAGES
from registers.views.work_packages import PAGES as WP_PAGES
from tests.factories import RiskFactory, WorkPackageFactory

BASE = "/projects/ALPHA/registers"
HX = {"HTTP_HX_REQUEST": "true"}


def wp_update(*, caller, pk, data, expected_revision):
    return work_package_update(
        caller=caller, wp_id=pk, data=data, expected_revision=expected_revision
    )


def packages(cast, count, **fields):
    return [
        WorkPackageFactory(project=cast.project, name=f"Package {n}", **fields)
        for n in range(count)
    ]


def rows(wps):
    return [BulkRow(wp.pk, wp.revision, wp.name) for wp in wps]


def bulk(cast, wps, data, user=None):
    return bulk_update(
        caller=caller_for(user or cast.lead, cast.project),
        update=wp_update,
        rows=rows(wps),
        data=data,
        field_labels=WP_PAGES.labels,
    )


# --- the service ------------------------------------------------------------------------------


def test_every_row_changes_and_each_is_audited_as_a_single_edit(cast):
    wps = packages(cast, 3)
    bulk(cast, wps, {"rag": "Amber", "ownerAccountId": cast.editor.account_id})
    for wp in wps:
        wp.refresh_from_db()
        assert (wp.rag, wp.owner_account_id, wp.revision) == ("Amber", cast.editor.account_id, 2)
    entries = AuditEntry.objects.filter(kind="work_package.updated").order_by("id")
    assert [e.target_id for e in entries] == [str(wp.pk) for wp in wps]
    assert all(e.actor_account_id == cast.lead.account_id for e in entries)
    assert entries[0].changes["rag"] == {"from": "None", "to": "Amber"} or "rag" in str(
        entries[0].changes
    )


def test_one_refused_row_writes_nothing_and_names_the_row_and_field(cast):
    done = WorkPackageFactory(project=cast.project, name="Survey", progress=100)
    late = WorkPackageFactory(project=cast.project, name="Build", progress=40)
    with pytest.raises(BulkRefused) as excinfo:
        bulk(cast, [done, late], {"status": "Complete", "rag": "Green"})
    refusals = excinfo.value.refusals
    assert [r.name for r in refusals] == ["Build"]
    assert refusals[0].text == "Build: Progress: A Complete work package has progress 100."
    done.refresh_from_db()
    assert (done.status, done.rag, done.revision) == ("Not Started", "None", 1)
    assert not AuditEntry.objects.filter(kind="work_package.updated").exists()


def test_a_row_changed_meanwhile_is_refused_as_stale(cast):
    first, second = packages(cast, 2)
    picked = rows([first, second])
    WorkPackage.objects.filter(pk=second.pk).update(revision=5)
    with pytest.raises(BulkRefused) as excinfo:
        bulk_update(
            caller=caller_for(cast.lead, cast.project),
            update=wp_update,
            rows=picked,
            data={"rag": "Red"},
            field_labels=WP_PAGES.labels,
        )
    assert excinfo.value.refusals[0].name == "Package 1"
    assert "someone changed it since the page was loaded" in excinfo.value.refusals[0].text
    first.refresh_from_db()
    assert first.rag == "None"


def test_a_viewer_is_refused_and_frozen_registers_refuse(cast):
    wps = packages(cast, 2)
    with pytest.raises(Forbidden):
        bulk(cast, wps, {"rag": "Red"}, user=cast.viewer)
    cast.project.approval_status = "Archived"
    cast.project.save(update_fields=["approval_status"])
    with pytest.raises(Frozen):
        bulk(cast, wps, {"rag": "Red"})
    assert not WorkPackage.objects.filter(rag="Red").exists()


def test_risks_take_status_and_owner_through_their_own_service(cast):
    risks = [RiskFactory(project=cast.project, title=f"Risk {n}") for n in range(2)]
    bulk_update(
        caller=caller_for(cast.lead, cast.project),
        update=lambda *, caller, pk, data, expected_revision: risk_update(
            caller=caller, risk_id=pk, data=data, expected_revision=expected_revision
        ),
        rows=[BulkRow(r.pk, r.revision, r.title) for r in risks],
        data={"status": "Closed"},
        field_labels=RISK_PAGES.labels,
    )
    assert set(Risk.objects.values_list("status", flat=True)) == {"Closed"}
    assert AuditEntry.objects.filter(kind="risk.updated").count() == 2


# --- the page ---------------------------------------------------------------------------------


def post_bulk(client, wps, query="", **fields):
    data = {"row": [f"{wp.pk}:{wp.revision}" for wp in wps], **fields}
    return client.post(f"{BASE}/work-packages/bulk/{query}", data, **HX)


def test_the_lead_sees_ticks_and_the_bar_a_viewer_sees_neither(cast, client_for):
    wps = packages(cast, 2)
    lead_page = client_for(cast.lead).get(f"{BASE}/work-packages/").content.decode()
    assert lead_page.count('name="row"') == 2
    assert f'value="{wps[0].pk}:1" form="wp-bulk-form"' in lead_page
    assert "Select Package 0" in lead_page and "Tick every work package on this page" in lead_page
    assert 'id="wp-bulk-form"' in lead_page and 'data-label="Select"' in lead_page
    bar = re.search(r'<form id="wp-bulk-form".*?</form>', lead_page, re.S).group(0)
    assert 'name="csrfmiddlewaretoken"' in bar and 'hx-post="/projects/ALPHA/registers/' in bar
    for label in ("Status", "Owner", "RAG"):
        assert f"{label}\n" in bar or f">{label}" in bar or f"{label} " in bar
    assert "Lena Lead" in bar and "— nobody —" in bar
    viewer_page = client_for(cast.viewer).get(f"{BASE}/work-packages/").content.decode()
    assert 'name="row"' not in viewer_page and "wp-bulk-form" not in viewer_page


def test_the_bulk_post_answers_the_table_and_a_toast(cast, client_for):
    wps = packages(cast, 3)
    response = post_bulk(client_for(cast.lead), wps, status="Blocked", progress="")
    # Blocked needs a progress of 10 to 90: refused, nothing written, every row named.
    assert response.status_code == 422
    text = response.content.decode()
    assert text.lstrip().startswith('<div id="register-table"')
    assert "Nothing was changed: 3 of the 3 selected work packages cannot take this edit." in text
    assert "Package 0: Progress: A Blocked work package has progress between 10 and 90." in text
    assert text.count(" checked>") == 3  # the rows stay ticked
    WorkPackage.objects.filter(pk__in=[wp.pk for wp in wps]).update(progress=50)
    wps = list(WorkPackage.objects.filter(pk__in=[wp.pk for wp in wps]))
    response = post_bulk(client_for(cast.lead), wps, status="Blocked", rag="Red")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'id="flash"' in text and 'hx-swap-oob="true"' in text
    assert "Changed 3 work packages: Status Blocked, RAG Red." in text
    assert text.count('class="badge wp-blocked">Blocked<') == 3
    assert set(WorkPackage.objects.values_list("status", "rag")) == {("Blocked", "Red")}


def test_owner_is_set_and_cleared(cast, client_for):
    wps = packages(cast, 2)
    client = client_for(cast.lead)
    assert post_bulk(client, wps, ownerAccountId=cast.editor.account_id).status_code == 200
    assert set(WorkPackage.objects.values_list("owner_account_id", flat=True)) == {
        cast.editor.account_id
    }
    wps = list(WorkPackage.objects.all())
    assert post_bulk(client, wps, ownerAccountId="-").status_code == 200
    assert set(WorkPackage.objects.values_list("owner_account_id", flat=True)) == {None}


def test_an_owner_who_cannot_see_the_project_is_refused_as_the_row_form_refuses(cast, client_for):
    wps = packages(cast, 2)
    response = post_bulk(client_for(cast.lead), wps, ownerAccountId=cast.outsider.account_id)
    assert response.status_code == 422
    assert "the person given cannot see the project" in response.content.decode()
    assert set(WorkPackage.objects.values_list("owner_account_id", flat=True)) == {None}


def test_nothing_chosen_or_nothing_ticked_is_said(cast, client_for):
    wps = packages(cast, 1)
    client = client_for(cast.lead)
    response = post_bulk(client, wps)
    assert response.status_code == 422
    assert "Choose at least one field to change." in response.content.decode()
    response = post_bulk(client, [], rag="Red")
    assert "Select at least one row." in response.content.decode()
    response = post_bulk(client, wps, rag="Purple")
    assert "Choose one of the offered values for RAG." in response.content.decode()


def test_readers_and_outsiders_answer_as_the_single_edit_does(cast, client_for):
    wps = packages(cast, 1)
    assert post_bulk(client_for(cast.viewer), wps, rag="Red").status_code == 403
    assert post_bulk(client_for(cast.outsider), wps, rag="Red").status_code == 404
    cast.project.approval_status = "Archived"
    cast.project.save(update_fields=["approval_status"])
    response = post_bulk(client_for(cast.lead), wps, rag="Red")
    assert (
        response.status_code == 409
        and "Nothing was changed. The registers of ALPHA are frozen" in (response.content.decode())
    )
    assert WorkPackage.objects.get().rag == "None"


def test_the_bulk_post_needs_the_csrf_token(cast, client_for):
    wps = packages(cast, 1)
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.lead)
    assert post_bulk(client, wps, rag="Red").status_code == 403
    assert WorkPackage.objects.get().rag == "None"


def test_without_script_the_bulk_post_redirects_to_the_same_filter(cast, client_for):
    wps = packages(cast, 2)
    data = {"row": [f"{wp.pk}:{wp.revision}" for wp in wps], "rag": "Green"}
    response = client_for(cast.lead).post(f"{BASE}/work-packages/bulk/?rag=None", data)
    assert response.status_code == 302 and response["Location"].endswith("?rag=None")


def test_the_filter_is_kept_for_the_table_after_the_edit(cast, client_for):
    wps = packages(cast, 2)
    WorkPackageFactory(project=cast.project, name="Elsewhere", rag="Green")
    response = post_bulk(client_for(cast.lead), wps, query="?rag=None", status="Not Started")
    text = response.content.decode()
    assert "Package 0" in text and "Elsewhere" not in text


# --- totals -----------------------------------------------------------------------------------


def footer(text):
    match = re.search(r"<tfoot[^>]*>.*?</tfoot>", text, re.S)
    return match.group(0) if match else ""


def test_totals_cover_the_whole_filter_in_the_table_footer(cast, client_for):
    for n in range(6):
        WorkPackageFactory(
            project=cast.project,
            name=f"P{n}",
            rag="Red" if n % 2 else "Green",
            budget=Decimal(1000 + n),
            budget_forecast=Decimal(500),
            budget_actual=None if n else Decimal("12.50"),
        )
    client = client_for(cast.viewer)
    foot = footer(client.get(f"{BASE}/work-packages/").content.decode())
    assert "Total of all 6 work packages" in foot
    assert money(Decimal(6015)) in foot and money(Decimal(3000)) in foot
    assert money(Decimal("12.50")) in foot and 'data-label="Budget"' in foot
    foot = footer(client.get(f"{BASE}/work-packages/?rag=Red", **HX).content.decode())
    assert "Total of the 3 work packages shown by this filter" in foot
    assert money(Decimal(1001 + 1003 + 1005)) in foot and money(Decimal(1500)) in foot
    assert "—" in foot  # no actual among the red ones


def test_an_empty_register_has_no_totals_row(cast, client_for):
    # The foot stays, empty, so a write's answer can fill it (record 0310).
    text = client_for(cast.lead).get(f"{BASE}/work-packages/").content.decode()
    assert "No work packages yet." in text and '<tfoot id="wp-totals"></tfoot>' in text
    WorkPackageFactory(project=cast.project, rag="Green")
    text = client_for(cast.lead).get(f"{BASE}/work-packages/?rag=Red").content.decode()
    assert '<tfoot id="wp-totals"></tfoot>' in text and "Total of" not in text


# --- queries ----------------------------------------------------------------------------------


def count_queries(action):
    with CaptureQueriesContext(connection) as captured:
        action()
    return len(captured)


@pytest.mark.parametrize("register", ["work-packages", "risks"])
def test_the_page_with_ticks_and_totals_runs_the_same_queries_for_more_rows(
    cast, client_for, register
):
    client = client_for(cast.lead)
    make = (
        (lambda n: WorkPackageFactory(project=cast.project, name=f"W{n}"))
        if register == "work-packages"
        else (lambda n: RiskFactory(project=cast.project, title=f"R{n}"))
    )
    for n in range(3):
        make(n)
    client.get(f"{BASE}/{register}/")  # the session and people caches warm
    few = count_queries(lambda: client.get(f"{BASE}/{register}/"))
    for n in range(3, 30):
        make(n)
    many = count_queries(lambda: client.get(f"{BASE}/{register}/"))
    assert many == few


def test_the_bulk_edit_reads_the_selected_rows_once(
    cast, client_for, django_assert_max_num_queries
):
    """The page's part of a bulk edit (the rows' names, one lock, the audit entries, the
    project's health, the table after it) does not grow with the rows; each row costs only
    the single edit's own read and write."""
    client = client_for(cast.lead)
    small = packages(cast, 2)
    post_bulk(client, small, rag="Amber")  # warm
    small = list(WorkPackage.objects.filter(pk__in=[w.pk for w in small]))
    few = count_queries(lambda: post_bulk(client, small, rag="Red"))
    big = [WorkPackageFactory(project=cast.project, name=f"More {n}") for n in range(12)]
    many = count_queries(lambda: post_bulk(client, big, rag="Red"))
    per_row = (many - few) / (len(big) - len(small))
    assert per_row <= 4, per_row  # its savepoint, read, update and release; nothing else
    big = list(WorkPackage.objects.filter(pk__in=[w.pk for w in big]))
    with django_assert_max_num_queries(few + 4 * (len(big) - len(small))):
        post_bulk(client, big, rag="Green")
