"""The register pages in the browser's terms: HTMX partials, inline edit with 422 errors and a
conflict row, add and delete with counts, read-only viewers, frozen registers, filters and
sorting, derived badges, the link picker, reordering, the acts (record decision, notes,
adjudication), exports and imports."""

import datetime as dt
import re
from html.parser import HTMLParser

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from governance.models import AuditEntry, Project
from governance.tracker.local import scripting
from governance.tracker.local.models import LocalIssue
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    RiskFactory,
    WorkPackageFactory,
)
from tests.html import inline_problems

BASE = "/projects/ALPHA/registers"
HX = {"HTTP_HX_REQUEST": "true"}


def text_of(response) -> str:
    return response.content.decode()


def test_registers_tab_opens_on_work_packages(cast, client_for):
    response = client_for(cast.viewer).get(f"{BASE}/")
    assert response.status_code == 302 and response["Location"] == f"{BASE}/work-packages/"


@pytest.mark.parametrize("register", ["work-packages", "risks", "decisions", "changes"])
def test_full_page_and_htmx_table_render_the_same_rows(cast, client_for, register):
    WorkPackageFactory(project=cast.project, name="Alpha build")
    RiskFactory(project=cast.project, title="Alpha risk")
    DecisionFactory(project=cast.project, decision="Alpha decision")
    ChangeRequestFactory(project=cast.project, summary="Alpha change")
    client = client_for(cast.viewer)
    full = client.get(f"{BASE}/{register}/")
    partial = client.get(f"{BASE}/{register}/", **HX)
    assert "<html" in text_of(full) and "<html" not in text_of(partial)
    assert text_of(partial).lstrip().startswith('<div id="register-table"')
    assert "HX-Request" in partial["Vary"]
    row = re.search(r'<tr id="[a-z]+-[0-9a-f-]{36}".*?</tr>', text_of(partial), re.S).group(0)
    assert row in text_of(full)
    assert inline_problems(text_of(full)) == []


def test_counts_in_the_register_tab_bar(cast, client_for):
    WorkPackageFactory.create_batch(3, project=cast.project)
    RiskFactory(project=cast.project)
    page = text_of(client_for(cast.viewer).get(f"{BASE}/risks/"))
    tabs = re.search(r'<nav id="register-tabs".*?</nav>', page, re.S).group(0)
    assert re.search(r"Work packages <span class=\"count\"[^>]*>3<", tabs)
    assert re.search(r"Risks <span class=\"count\"[^>]*>1<", tabs)
    assert re.search(r"Decisions <span class=\"count\"[^>]*>0<", tabs)


def test_empty_states_say_what_to_do(cast, client_for):
    lead_page = text_of(client_for(cast.lead).get(f"{BASE}/decisions/"))
    assert "No decisions logged yet." in lead_page and "Add decision" in lead_page
    viewer_page = text_of(client_for(cast.viewer).get(f"{BASE}/decisions/"))
    assert "The Project Lead and the editors they nominate log them here." in viewer_page
    WorkPackageFactory(project=cast.project, status="Complete", progress=100)
    filtered = text_of(client_for(cast.viewer).get(f"{BASE}/work-packages/?status=Blocked"))
    assert "No work packages match these filters." in filtered


def test_viewer_sees_no_edit_controls_and_rows_open_the_detail(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    RiskFactory(project=cast.project, materialised=True)
    DecisionFactory(project=cast.project)
    ChangeRequestFactory(project=cast.project)
    client = client_for(cast.viewer)
    for register in ("work-packages", "risks", "decisions", "changes"):
        page = text_of(client.get(f"{BASE}/{register}/"))
        for control in ("Add ", ">Edit<", ">Delete<", "Import…", "Record decision", "Add note"):
            assert control not in page, (register, control)
        assert "Move " not in page and ">Link<" not in page and ">Decide<" not in page
        assert "data-href=" in page and "Export" in page
        table = page[page.index('<div id="register-table"') :]
        for markup in ("<form", "hx-post", "/edit/", "/delete/", "/move/", "csrfmiddlewaretoken"):
            assert markup not in table, (register, markup)
    detail = client.get(f"{BASE}/work-packages/{wp.pk}/")
    assert detail.status_code == 200 and "Build" in text_of(detail)
    assert "Edit in the register" not in text_of(detail)
    assert client.get(f"{BASE}/work-packages/{wp.pk}/edit/", **HX).status_code == 403


def test_frozen_registers_show_no_write_controls_but_keep_decision_notes(cast, client_for):
    WorkPackageFactory(project=cast.project)
    DecisionFactory(project=cast.project, made_on=dt.date(2026, 1, 1))
    cast.project.approval_status = "ClosingSubmitted"
    cast.project.save()
    client = client_for(cast.lead)
    wp_page = text_of(client.get(f"{BASE}/work-packages/"))
    assert "These registers are frozen" in wp_page
    assert (
        ">Edit<" not in wp_page and "Add work package" not in wp_page and ">Delete<" not in wp_page
    )
    decisions_page = text_of(client.get(f"{BASE}/decisions/"))
    assert "Add note" in decisions_page and ">Edit<" not in decisions_page
    assert client.get(f"{BASE}/work-packages/new/", **HX).status_code == 409


def test_inline_edit_saves_and_returns_the_read_row(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    client = client_for(cast.editor)
    editor = client.get(f"{BASE}/work-packages/{wp.pk}/edit/", **HX)
    assert editor.status_code == 200
    assert 'name="revision" value="1"' in text_of(editor) and "data-escape-cancel" in text_of(
        editor
    )
    response = client.post(
        f"{BASE}/work-packages/{wp.pk}/",
        {"name": "Build phase", "status": "In Progress", "progress": "50", "revision": "1",
         "rag": "Amber", "ownerAccountId": cast.viewer.account_id},
        **HX,
    )  # fmt: skip
    assert response.status_code == 200
    row = text_of(response)
    assert row.lstrip().startswith(f'<tr id="wp-{wp.pk}"') and "Build phase" in row
    assert "Vera Viewer" in row and "50%" in row
    wp.refresh_from_db()
    assert (wp.name, wp.status, wp.progress, wp.rag, wp.revision) == (
        "Build phase",
        "In Progress",
        50,
        "Amber",
        2,
    )


def test_inline_validation_error_is_shown_in_the_row_with_422(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    response = client_for(cast.lead).post(
        f"{BASE}/work-packages/{wp.pk}/",
        {"name": "Build", "status": "Complete", "progress": "50", "revision": "1",
         "budgetPhasing": "2026-01: 100\n2026-13: 5"},
        **HX,
    )  # fmt: skip
    assert response.status_code == 422
    row = text_of(response)
    assert "A Complete work package has progress 100." in row
    assert "Line 2, period: Must be a month as YYYY-MM." in row
    # Re-shown in the month grid as typed.
    assert 'aria-invalid="true"' in row and 'value="2026-13"' in row and 'value="5"' in row
    wp.refresh_from_db()
    assert wp.status == "Not Started" and wp.revision == 1


def test_stale_save_shows_a_conflict_row_with_yours_and_theirs(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build", commentary="Original")
    client_for(cast.editor).post(
        f"{BASE}/work-packages/{wp.pk}/",
        {"name": "Build", "commentary": "Theirs", "revision": "1"},
        **HX,
    )
    response = client_for(cast.lead).post(
        f"{BASE}/work-packages/{wp.pk}/",
        {"name": "Build", "commentary": "Mine", "revision": "1"},
        **HX,
    )
    assert response.status_code == 412
    row = text_of(response)
    assert "Someone else saved this work package while you were editing it." in row
    assert re.search(
        r'Commentary</th><td class="yours">Mine</td><td class="theirs">Theirs</td>', row
    )
    assert 'name="revision" value="2"' in row and "Save mine over theirs" in row
    assert WorkPackage.objects.get().commentary == "Theirs"


def test_add_row_creates_with_201_and_updates_the_counts(cast, client_for):
    client = client_for(cast.lead)
    add = client.get(f"{BASE}/risks/new/", **HX)
    assert add.status_code == 200 and 'id="risk-new"' in text_of(add)
    response = client.post(
        f"{BASE}/risks/",
        {"title": "Supplier risk", "direction": "Risk", "status": "Open", "impact": "5",
         "likelihood": "4", "treatment": "Mitigate"},
        **HX,
    )  # fmt: skip
    assert response.status_code == 201
    body = text_of(response)
    risk = Risk.objects.get()
    assert f'<tr id="risk-{risk.pk}"' in body
    assert 'id="register-tabs"' in body and 'hx-swap-oob="true"' in body
    assert re.search(r"Risks <span class=\"count\"[^>]*>1<", body)
    assert "heat heat-red" in body  # 5 x 4 = 20


def test_add_row_errors_keep_what_was_typed(cast, client_for):
    response = client_for(cast.lead).post(
        f"{BASE}/changes/", {"summary": "", "impactBudget": "lots", "reason": "Because"}, **HX
    )
    assert response.status_code == 422
    row = text_of(response)
    assert 'id="change-new"' in row and "This field is required." in row
    assert "Write a number, like 12000" in row and "Because" in row
    assert not ChangeRequest.objects.exists()


def test_without_javascript_a_save_redirects_and_an_error_renders_the_page(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    client = client_for(cast.lead)
    ok = client.post(f"{BASE}/work-packages/{wp.pk}/", {"name": "Built", "revision": "1"})
    assert ok.status_code == 302 and ok["Location"].endswith(f"#wp-{wp.pk}")
    bad = client.post(f"{BASE}/work-packages/{wp.pk}/", {"name": "", "revision": "2"})
    assert bad.status_code == 422 and "<html" in text_of(bad)
    assert "This field is required." in text_of(bad)
    page = client.get(f"{BASE}/work-packages/{wp.pk}/edit/")
    assert page.status_code == 200 and 'class="editing"' in text_of(page)


def test_delete_after_confirmation_updates_counts_and_refuses_stale(cast, client_for):
    first = WorkPackageFactory(project=cast.project, name="One")
    second = WorkPackageFactory(project=cast.project, name="Two")
    client = client_for(cast.lead)
    page = text_of(client.get(f"{BASE}/work-packages/"))
    assert 'data-confirm="Delete the work package “One”?' in page
    response = client.post(f"{BASE}/work-packages/{first.pk}/delete/", {"revision": "1"}, **HX)
    assert response.status_code == 200 and "<tr" not in text_of(response)
    assert re.search(r"Work packages <span class=\"count\"[^>]*>1<", text_of(response))
    WorkPackage.objects.filter(pk=second.pk).update(revision=5)
    stale = client.post(f"{BASE}/work-packages/{second.pk}/delete/", {"revision": "1"}, **HX)
    assert stale.status_code == 412 and "Not deleted" in text_of(stale)
    # Delete buttons submit the table's shared form: the answer names the row it replaces.
    for answer, wp in ((response, first), (stale, second)):
        assert answer["HX-Retarget"] == f"#wp-{wp.pk}" and answer["HX-Reswap"] == "outerHTML"
    assert list(WorkPackage.objects.values_list("name", flat=True)) == ["Two"]


def test_filters_search_and_sorting(cast, client_for):
    WorkPackageFactory(
        project=cast.project,
        name="Alpha",
        rag="Red",
        owner_account_id=cast.editor.account_id,
        budget=5,
    )
    WorkPackageFactory(
        project=cast.project, name="Bravo", rag="Green", status="Blocked", progress=20, budget=50
    )
    WorkPackageFactory(
        project=cast.project, name="Charlie", rag="Green", commentary="needs vendor", budget=None
    )
    client = client_for(cast.viewer)

    def names(query):
        page = text_of(client.get(f"{BASE}/work-packages/{query}", **HX))
        # The table's rows (the timeline's table of the same rows follows, out of band).
        table = page.split('<div id="register-pictures"')[0]
        return re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a>', table)

    assert names("?rag=Green") == ["Bravo", "Charlie"]
    assert names("?status=Blocked") == ["Bravo"]
    assert names(f"?owner={cast.editor.account_id}") == ["Alpha"]
    assert names("?q=VENDOR") == ["Charlie"]
    assert names("?sort=budget&dir=desc") == ["Bravo", "Alpha", "Charlie"]  # empty last
    assert names("?sort=budget") == ["Alpha", "Bravo", "Charlie"]
    assert names("?rag=Purple") == ["Alpha", "Bravo", "Charlie"]  # unknown filter ignored
    header = text_of(client.get(f"{BASE}/work-packages/?sort=name", **HX))
    assert 'aria-sort="ascending"' in header and "sort=name&amp;dir=desc" in header


def test_other_registers_filter_by_direction_state_and_dimension(cast, client_for):
    RiskFactory(project=cast.project, title="Threat", direction="Risk")
    RiskFactory(project=cast.project, title="Upside", direction="Opportunity")
    DecisionFactory(project=cast.project, decision="Taken", made_on=dt.date(2026, 1, 1))
    DecisionFactory(project=cast.project, decision="Open question")
    ChangeRequestFactory(project=cast.project, summary="Scope change", dimensions=["Scope"])
    ChangeRequestFactory(
        project=cast.project, summary="Money", dimensions=["Budget"], status="Approved"
    )
    client = client_for(cast.viewer)

    def rows(path):
        page = text_of(client.get(f"{BASE}/{path}", **HX))
        return re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a>', page)

    assert rows("risks/?direction=Opportunity") == ["Upside"]
    assert rows("decisions/?state=Pending") == ["Open question"]
    assert rows("changes/?dimension=Scope") == ["Scope change"]
    assert rows("changes/?state=Applied") == ["Money"]


def test_derived_values_on_the_pages(cast, client_for):
    RiskFactory(
        project=cast.project, impact=2, likelihood=4, residual_impact=1, residual_likelihood=2
    )
    DecisionFactory(project=cast.project, made_on=dt.date(2026, 1, 1), made_by_account_id=None)
    ChangeRequestFactory(project=cast.project, status="Approved", dimensions=["Scope", "Budget"])
    client = client_for(cast.viewer)
    risks = text_of(client.get(f"{BASE}/risks/"))
    assert re.search(r'class="heat heat-green"[^>]*>2<', risks)
    decisions = text_of(client.get(f"{BASE}/decisions/"))
    assert '<span class="badge state-made">Made</span>' in decisions
    assert '<span class="muted">—</span>' in decisions  # the unnamed maker is a dash
    ChangeRequestFactory(
        project=cast.project,
        status="Approved",
        dimensions=["Budget", "Schedule"],
        impact_budget=-500,
        impact_schedule_days=12,
    )
    ChangeRequestFactory(project=cast.project, status="Proposed", impact_budget=9000)
    changes = text_of(client.get(f"{BASE}/changes/"))
    assert "Awaiting application" in changes
    assert (
        "the approved changes <strong>take EUR\u00a0500 off the budget</strong> and "
        "<strong>add 12 days to the schedule</strong>"
    ) in changes


def test_display_names_are_resolved_in_one_tracker_call(cast, client_for, monkeypatch):
    from governance.tracker.local.backend import LocalTracker

    for user in (cast.editor, cast.viewer, cast.sponsor):
        WorkPackageFactory(project=cast.project, owner_account_id=user.account_id)
    calls = []
    original = LocalTracker.users_bulk

    def counting(self, ids):
        calls.append(sorted(ids))
        return original(self, ids)

    monkeypatch.setattr(LocalTracker, "users_bulk", counting)
    page = text_of(client_for(cast.viewer).get(f"{BASE}/work-packages/"))
    assert "Eddie Editor" in page and "Vera Viewer" in page and "Sam Sponsor" in page
    owner_calls = [c for c in calls if cast.sponsor.account_id in c]
    assert len(owner_calls) == 1


@pytest.fixture
def issues(cast):
    for n in range(1, 4):
        scripting.ensure_issue(f"ALPHA-{n}", summary=f"Payments epic {n}")


def test_issue_link_picker_searches_links_and_unlinks(
    cast, client_for, issues, django_capture_on_commit_callbacks
):
    wp = WorkPackageFactory(project=cast.project, name="Payments")
    client = client_for(cast.lead)
    picker = client.get(f"{BASE}/work-packages/{wp.pk}/links/", **HX)
    assert picker.status_code == 200 and 'name="q"' in text_of(picker)
    results = text_of(client.get(f"{BASE}/work-packages/{wp.pk}/links/?q=epic 2", **HX))
    assert "ALPHA-2" in results and "ALPHA-1" not in results
    with django_capture_on_commit_callbacks(execute=True):
        linked = client.post(
            f"{BASE}/work-packages/{wp.pk}/links/", {"issue_key": "ALPHA-2", "revision": "1"}, **HX
        )
    assert linked.status_code == 200 and "ALPHA-2 linked" in text_of(linked)
    assert LocalIssue.objects.get(key="ALPHA-2").work_package == "Payments"
    refused = client.post(f"{BASE}/work-packages/{wp.pk}/links/", {"issue_key": "ALPHA-9"}, **HX)
    assert refused.status_code == 422 and "The tracker has no issue ALPHA-9." in text_of(refused)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"{BASE}/work-packages/{wp.pk}/links/ALPHA-2/delete/", **HX)
    assert LocalIssue.objects.get(key="ALPHA-2").work_package is None
    assert WorkPackage.objects.get().linked_issue_keys == []


def test_keyboard_move_and_drag_and_drop_reorder(cast, client_for):
    a, b, c = (WorkPackageFactory(project=cast.project, name=n) for n in ("A", "B", "C"))
    client = client_for(cast.lead)
    moved = client.post(f"{BASE}/work-packages/{c.pk}/move/", {"direction": "up"}, **HX)
    assert moved.status_code == 200
    order = re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a>', text_of(moved))
    assert order == ["A", "C", "B"]
    assert re.search(
        r'value="up" class="icon" data-focus><span aria-hidden="true">↑</span>'
        r'<span class="visually-hidden">Move C up',
        text_of(moved),
    )
    dropped = client.post(
        f"{BASE}/work-packages/reorder/", {"ids": [str(b.pk), str(a.pk), str(c.pk)]}, **HX
    )
    order = re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a>', text_of(dropped))
    assert order == ["B", "A", "C"]
    sorted_page = text_of(client.get(f"{BASE}/work-packages/?sort=name"))
    assert "reorderable" not in sorted_page  # moving only in the register's own order


def test_record_decision_inline_on_a_materialised_risk(cast, client_for):
    risk = RiskFactory(
        project=cast.project, title="Supplier late", materialised=True, mitigation="Switch"
    )
    quiet = RiskFactory(project=cast.project, title="Quiet")
    client = client_for(cast.lead)
    page = text_of(client.get(f"{BASE}/risks/"))
    assert page.count("Record decision<") == 1
    form = text_of(client.get(f"{BASE}/risks/{risk.pk}/record-decision/", **HX))
    assert 'value="Supplier late"' in form and "Switch</textarea>" in form
    refused = client.post(f"{BASE}/risks/{risk.pk}/record-decision/", {"decision": ""}, **HX)
    assert refused.status_code == 422
    done = client.post(
        f"{BASE}/risks/{risk.pk}/record-decision/",
        {"decision": "Switch supplier", "rationale": "Late"},
        **HX,
    )
    assert done.status_code == 201 and "Treated by" in text_of(done)
    decision = Decision.objects.get()
    assert decision.treated_risk_id == decision.risk_id == str(risk.pk)
    assert client.get(f"{BASE}/risks/{quiet.pk}/record-decision/", **HX).status_code == 409


def test_decision_notes_inline_and_made_decisions_not_editable(cast, client_for):
    made = DecisionFactory(project=cast.project, decision="Go", made_on=dt.date(2026, 1, 1))
    client = client_for(cast.editor)
    assert client.get(f"{BASE}/decisions/{made.pk}/edit/", **HX).status_code == 409
    assert client.post(f"{BASE}/decisions/{made.pk}/", {"decision": "x"}, **HX).status_code == 409
    form = client.get(f"{BASE}/decisions/{made.pk}/notes/", **HX)
    assert 'name="text"' in text_of(form)
    empty = client.post(f"{BASE}/decisions/{made.pk}/notes/", {"text": ""}, **HX)
    assert empty.status_code == 422 and "This field is required." in text_of(empty)
    added = client.post(f"{BASE}/decisions/{made.pk}/notes/", {"text": "Clarified scope"}, **HX)
    assert added.status_code == 200 and "1 note" in text_of(added)
    detail = text_of(client.get(f"{BASE}/decisions/{made.pk}/"))
    assert "Clarified scope" in detail and "Eddie Editor" in detail


def test_pending_decision_made_through_the_row_is_audited(cast, client_for):
    pending = DecisionFactory(project=cast.project, decision="Pick vendor")
    response = client_for(cast.lead).post(
        f"{BASE}/decisions/{pending.pk}/",
        {
            "decision": "Pick vendor",
            "madeOn": "2026-02-01",
            "madeByAccountId": cast.sponsor.account_id,
            "revision": "1",
            "minutesRef": "",
            "evidenceLinks": "Paper | https://wiki.example/p",
        },
        **HX,
    )
    assert response.status_code == 200 and "state-made" in text_of(response)
    assert AuditEntry.objects.filter(kind="decision.made").exists()
    assert Decision.objects.get().evidence_links[0]["label"] == "Paper"


def test_adjudication_offered_only_to_whom_the_gate_allows(cast, client_for):
    change = ChangeRequestFactory(
        project=cast.project, summary="More budget", proposer_account_id=cast.lead.account_id
    )
    assert ">Decide<" in text_of(client_for(cast.sponsor).get(f"{BASE}/changes/"))
    lead_page = text_of(client_for(cast.lead).get(f"{BASE}/changes/"))
    assert ">Decide<" not in lead_page and 'value="Withdrawn"' in lead_page
    assert (
        client_for(cast.viewer).get(f"{BASE}/changes/{change.pk}/adjudicate/", **HX).status_code
        == 403
    )
    sponsor = client_for(cast.sponsor)
    form = text_of(sponsor.get(f"{BASE}/changes/{change.pk}/adjudicate/", **HX))
    assert (
        'value="Approved"' in form
        and 'value="Rejected"' in form
        and 'value="Withdrawn"' not in form
    )
    refused = sponsor.post(
        f"{BASE}/changes/{change.pk}/adjudicate/", {"outcome": "Rejected", "revision": "1"}, **HX
    )
    assert refused.status_code == 422 and "A reason is required to reject a change." in text_of(
        refused
    )
    approved = sponsor.post(
        f"{BASE}/changes/{change.pk}/adjudicate/", {"outcome": "Approved", "revision": "1"}, **HX
    )
    assert approved.status_code == 200 and "change-approved" in text_of(approved)
    assert ChangeRequest.objects.get().status == "Approved"


def test_exports_from_the_pages(cast, client_for):
    DecisionFactory(project=cast.project, decision="Unnamed maker", made_on=dt.date(2026, 1, 1))
    client = client_for(cast.viewer)
    page = text_of(client.get(f"{BASE}/decisions/"))
    assert f"{BASE}/decisions/export/?format=csv" in page and "?format=xlsx" in page
    csv = client.get(f"{BASE}/decisions/export/?format=csv&shape=api")
    assert csv.status_code == 200 and "attachment" in csv["Content-Disposition"]
    header, row = csv.getvalue().decode("utf-8-sig").splitlines()[:2]
    columns = dict(zip(header.split(","), row.split(","), strict=False))
    assert columns["madeByAccountId"] == "" and columns["madeByName"] == ""
    xlsx = client.get(f"{BASE}/decisions/export/?format=xlsx")
    assert xlsx.getvalue()[:2] == b"PK"
    assert client.get(f"{BASE}/ledger/export/").status_code == 404


def test_import_page_all_or_nothing(cast, client_for):
    client = client_for(cast.lead)
    assert "Columns this register takes" in text_of(client.get(f"{BASE}/changes/import/"))
    bad = client.post(
        f"{BASE}/changes/import/",
        {"file": SimpleUploadedFile("c.csv", b"summary,impactBudget\nGood,5\n,abc\n")},
    )
    assert bad.status_code == 422
    assert re.search(r"<td>3</td><td>Summary \(<code>summary</code>\)</td>", text_of(bad))
    assert not ChangeRequest.objects.exists()
    preview = client.post(
        f"{BASE}/changes/import/",
        {"file": SimpleUploadedFile("c.csv", b"summary;impactBudget\nGood;5\nAlso;-3\n")},
    )
    assert preview.status_code == 200
    assert "would create <strong>2 change requests</strong>" in text_of(preview)
    assert not ChangeRequest.objects.exists()
    token = re.search(r'name="token" value="([^"]+)"', preview.content.decode())[1]
    good = client.post(f"{BASE}/changes/import/", {"token": token})
    assert good.status_code == 302
    assert sorted(ChangeRequest.objects.values_list("summary", flat=True)) == ["Also", "Good"]
    assert set(ChangeRequest.objects.values_list("imported", flat=True)) == {True}
    assert client_for(cast.viewer).get(f"{BASE}/changes/import/").status_code == 403


def test_detail_pages_show_history_and_acts(cast, client_for):
    change = ChangeRequestFactory(project=cast.project, summary="Scope it")
    page = text_of(client_for(cast.sponsor).get(f"{BASE}/changes/{change.pk}/"))
    assert 'id="decide"' in page and "hx-post" not in page.split('id="decide"')[1][:400]
    assert inline_problems(page) == []


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = []

    def handle_starttag(self, tag, attrs):
        self.ids += [v for k, v in attrs if k == "id"]


def test_row_anchors_for_deep_links_and_unique_ids(cast, client_for):
    wp = WorkPackageFactory(project=cast.project)
    change = ChangeRequestFactory(project=cast.project)
    for path, anchor in (("work-packages", f"wp-{wp.pk}"), ("changes", f"change-{change.pk}")):
        parser = _Ids()
        parser.feed(text_of(client_for(cast.lead).get(f"{BASE}/{path}/")))
        assert anchor in parser.ids
        assert len(parser.ids) == len(set(parser.ids))


def test_back_button_history_restore_gets_the_whole_page(cast, client_for):
    response = client_for(cast.viewer).get(
        f"{BASE}/work-packages/?rag=Red", HTTP_HX_HISTORY_RESTORE_REQUEST="true", **HX
    )
    assert "<html" in text_of(response)


def test_minutes_link_only_for_web_addresses(cast, client_for):
    DecisionFactory(
        project=cast.project,
        decision="Odd minutes",
        minutes_ref={"id": "x", "title": "Steerco", "url": "javascript:alert(1)"},
    )
    page = text_of(client_for(cast.viewer).get(f"{BASE}/decisions/"))
    assert "Steerco" in page and "javascript:" not in page


def test_record_decision_refusal_says_what_the_service_says(cast, client_for):
    quiet = RiskFactory(project=cast.project, title="Quiet")
    response = client_for(cast.lead).get(f"{BASE}/risks/{quiet.pk}/record-decision/", **HX)
    assert response.status_code == 409
    assert "mark the risk as materialised first" in text_of(response)


def test_made_decision_edit_refusal_says_what_the_service_says(cast, client_for):
    made = DecisionFactory(project=cast.project, decision="Go", made_on=dt.date(2026, 1, 1))
    response = client_for(cast.editor).get(f"{BASE}/decisions/{made.pk}/edit/", **HX)
    assert response.status_code == 409
    assert "Add a note to correct or extend it." in text_of(response)


def test_risk_rows_offer_record_decision_and_flag_untreated_materialised_risks(cast, client_for):
    RiskFactory(project=cast.project, title="Happened", materialised=True)
    treated = RiskFactory(project=cast.project, title="Handled", materialised=True)
    DecisionFactory(project=cast.project, risk_id=str(treated.pk), treated_risk_id=str(treated.pk))
    RiskFactory(project=cast.project, title="Might happen")
    RiskFactory(project=cast.project, title="Upside", direction="Opportunity")
    warning = "Materialised, no treating decision yet"
    lead_page = text_of(client_for(cast.lead).get(f"{BASE}/risks/"))
    assert lead_page.count(warning) == 1 and lead_page.count("Record decision<") == 2
    viewer_page = text_of(client_for(cast.viewer).get(f"{BASE}/risks/"))
    assert viewer_page.count(warning) == 1 and "Record decision<" not in viewer_page
    cast.project.approval_status = "Archived"
    cast.project.save()
    frozen_page = text_of(client_for(cast.lead).get(f"{BASE}/risks/"))
    assert frozen_page.count(warning) == 1 and "Record decision<" not in frozen_page


def test_register_templates_read_row_flags_and_never_derive_the_rules():
    """Record-decision, made-decision and open-change rules live in registers.derive; the
    templates only read the flags the tables compute from them."""
    from pathlib import Path

    from django.conf import settings

    folder = Path(settings.BASE_DIR) / "templates" / "registers"
    rules = ('direction == "Risk"', '"Proposed"', '"Pending"', '"Made"', "made_on %}")
    for template in folder.glob("*.html"):
        text = template.read_text()
        assert [rule for rule in rules if rule in text] == [], template.name


def test_the_page_class_stays_a_page_class():
    """`RegisterPages` (registers.views.base) serves the pages and nothing beside them: the
    row forms, the bulk edit and the shared helpers are modules of their own, and it stays
    under 450 lines with no caching of its own."""
    from pathlib import Path

    from django.conf import settings

    folder = Path(settings.BASE_DIR) / "registers" / "views"
    text = (folder / "base.py").read_text()
    assert len(text.splitlines()) < 450
    assert "cache" not in text
    assert "def bulk_" not in text and "class BulkEdit" in (folder / "bulk.py").read_text()


def _vary_world(cast):
    return {
        "wp": WorkPackageFactory(project=cast.project, name="Build"),
        "risk": RiskFactory(project=cast.project, title="Outage", materialised=True),
        "decision": DecisionFactory(project=cast.project, decision="Pick vendor"),
        "change": ChangeRequestFactory(project=cast.project, summary="More budget"),
    }


VARY_PATHS = [
    *(f"{register}/" for register in ("work-packages", "risks", "decisions", "changes")),
    *(f"{register}/new/" for register in ("work-packages", "risks", "decisions", "changes")),
    "work-packages/{wp}/",
    "work-packages/{wp}/edit/",
    "work-packages/{wp}/links/",
    "risks/{risk}/",
    "risks/{risk}/edit/",
    "risks/{risk}/record-decision/",
    "decisions/{decision}/",
    "decisions/{decision}/edit/",
    "decisions/{decision}/notes/",
    "changes/{change}/",
    "changes/{change}/edit/",
    "changes/{change}/adjudicate/",
]


@pytest.mark.parametrize("path", VARY_PATHS)
def test_register_pages_vary_on_hx_request_in_both_branches(cast, client_for, path):
    """Whatever branch a view takes on HX-Request (the full page, a redirect without
    script, or the HTMX fragment), the response says it varies on that header."""
    world = _vary_world(cast)
    url = f"{BASE}/" + path.format(**{name: record.pk for name, record in world.items()})
    client = client_for(cast.lead)
    full, partial = client.get(url), client.get(url, **HX)
    assert full.status_code in (200, 302) and partial.status_code == 200
    assert "HX-Request" in full.get("Vary", ""), "full page"
    assert "HX-Request" in partial.get("Vary", ""), "HTMX fragment"


def test_register_writes_vary_on_hx_request_in_both_branches(cast, client_for):
    world = _vary_world(cast)
    client = client_for(cast.lead)
    wp_url = f"{BASE}/work-packages/{world['wp'].pk}/"
    responses = [
        client.post(f"{BASE}/work-packages/", {"name": "Without script"}),
        client.post(f"{BASE}/work-packages/", {"name": "With script"}, **HX),
        client.post(wp_url, {"name": "Build 2", "revision": "1"}),
        client.post(wp_url, {"name": "Build 3", "revision": "2"}, **HX),
        client.post(f"{wp_url}move/", {"direction": "down"}),
        client.post(f"{wp_url}move/", {"direction": "up"}, **HX),
        client.post(f"{BASE}/decisions/{world['decision'].pk}/notes/", {"text": "Noted"}),
        client.post(f"{BASE}/decisions/{world['decision'].pk}/notes/", {"text": "Too"}, **HX),
    ]
    assert [r.status_code for r in responses] == [302, 201, 302, 200, 302, 200, 302, 200]
    assert all("HX-Request" in r.get("Vary", "") for r in responses)


@pytest.mark.parametrize(
    ("register", "spec_name"),
    [
        ("work-packages", "WorkPackageSpec"),
        ("risks", "RiskSpec"),
        ("decisions", "DecisionSpec"),
        ("changes", "ChangeSpec"),
    ],
)
def test_the_add_forms_label_each_field_by_its_declaration(cast, client_for, register, spec_name):
    from governance import specs
    from registers import specs as register_specs

    spec = getattr(register_specs, spec_name)
    html = text_of(client_for(cast.lead).get(f"{BASE}/{register}/new/", **HX))
    found = dict(re.findall(r'<label for="f-new-(\w+)">([^<]+)<', html))
    found.update(re.findall(r'id="f-new-(\w+)" name="\w+"[^>]*> ([^<]+)</label>', html))
    labels = specs.labels(spec)
    assert found, html
    for name, label in found.items():
        assert label.strip() == labels[name], name
    assert len(found) >= 5


@pytest.mark.parametrize("register", ["work-packages", "risks", "decisions", "changes"])
def test_the_whole_add_page_sizes_its_text_boxes_and_leaks_no_rows(cast, client_for, register):
    """Opened as a page (not swapped in), the add form sits beside the register's rows; its
    text boxes keep their own height and nothing of those rows lands in an attribute."""
    project = Project.objects.get(key="ALPHA")
    WorkPackageFactory(project=project, name="Discovery")
    RiskFactory(project=project, title="Supplier late")
    DecisionFactory(project=project, decision="Go")
    ChangeRequestFactory(project=project, summary="More scope")
    html = text_of(client_for(cast.lead).get(f"{BASE}/{register}/new/"))
    boxes = re.findall(r"<textarea [^>]*>", html)
    assert boxes
    assert all('rows="3"' in box for box in boxes if "rows=" in box)
    assert "&lt;" not in "".join(boxes) and "<WorkPackage" not in html


def test_the_sort_goes_with_the_filters_from_inside_the_table_it_sorts(cast, client_for):
    """The sort's hidden fields stand in the table a header's sort swaps in, tied to the
    filter form by its id: a filter or search after a sort sends the sort the table is in,
    not the one the page was loaded with."""
    client = client_for(cast.lead)
    page = text_of(client.get(f"{BASE}/work-packages/?sort=budget&dir=desc"))
    assert 'id="wp-filters"' in page
    start = page.index('id="wp-filters"')
    form = page[start : page.index("</form>", start)]
    assert 'name="sort"' not in form
    table = text_of(client.get(f"{BASE}/work-packages/?sort=budget&dir=desc", **HX))
    assert table.lstrip().startswith('<div id="register-table"')
    assert '<input type="hidden" name="sort" value="budget" form="wp-filters">' in table
    assert '<input type="hidden" name="dir" value="desc" form="wp-filters">' in table
