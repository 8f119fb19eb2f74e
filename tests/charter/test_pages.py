"""The business-case pages: the lifecycle bar offers exactly the acts the server allows the
signed-in person, sections save in place (errors, conflicts), the live checklist, seats and
the people picker, supporting documents, return notes, close-out, realisation, minutes."""

import dataclasses
import json
import re
from html.parser import HTMLParser

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from charter import acts, finance
from charter.acts import ACTS
from charter.models import BusinessCase
from charter.services import charter_act
from governance.errors import Conflict, DomainError, Forbidden
from governance.permissions import caller_for
from governance.wiki.local.models import LocalWikiPage
from registers.models import SteeringMinutes
from tests.charter.conftest import closeout_record
from tests.factories import ChangeRequestFactory, RiskFactory, WorkPackageFactory
from tests.html import inline_problems

PAGE = "/projects/ALPHA/charter/"
HX = {"HTTP_HX_REQUEST": "true"}
ACT_FORM = re.compile(r'action="/projects/ALPHA/charter/acts/([a-z-]+)/"')


def offered(response) -> set[str]:
    return set(ACT_FORM.findall(response.content.decode()))


SCENARIOS = [
    ("Exploring", {}),
    ("Draft", {}),
    ("Draft", {"amendment": True}),
    ("Submitted", {}),
    ("Submitted", {"amendment": True}),
    ("Approved", {}),
    ("Approved", {"close_out": "started"}),
    ("ClosingSubmitted", {"close_out": "started"}),
    ("Closed", {"close_out": "owned"}),
    ("InRealisation", {"close_out": "owned"}),
    ("Realised", {}),
    ("NotRealised", {}),
    ("InMaintenance", {}),
    ("Archived", {}),
]


@pytest.mark.parametrize(("status", "extra"), SCENARIOS)
def test_the_lifecycle_bar_offers_exactly_what_the_server_allows(
    status, extra, cast, arrange, client_for
):
    """For every role and every act: the page shows the act's button if and only if the
    server, asked to take it, refuses it neither for the person (403) nor the state (409)."""
    fields = {}
    if extra.get("close_out") == "started":
        fields["close_out"] = closeout_record()
    if extra.get("close_out") == "owned":
        fields["close_out"] = closeout_record(owner=cast.viewer)
    if extra.get("amendment"):
        fields.update(version=2, approved_at=timezone.now())
    arrange(status, **fields)
    mismatches = []
    for role in ("lead", "viewer", "sponsor", "site_admin"):
        user = getattr(cast, role)
        shown = offered(client_for(user).get(PAGE))
        for name in ACTS:
            cast.project.refresh_from_db()
            caller = caller_for(user, cast.project)
            allowed = True
            with transaction.atomic():
                try:
                    charter_act(caller=caller, act=name, data={})
                except (Forbidden, Conflict):
                    allowed = False
                except DomainError:
                    pass  # refused for its body (422): the person and the state were right
                transaction.set_rollback(True)
            if allowed != (name in shown):
                mismatches.append(f"{role} {name}: shown={name in shown}, allowed={allowed}")
    assert not mismatches, "\n".join(mismatches)


def test_a_viewer_gets_a_read_only_page(cast, arrange, client_for):
    arrange("Draft", steering_committee=[{"id": "m1", "accountId": cast.sponsor.account_id,
                                           "displayName": "S", "role": "Chair"}])  # fmt: skip
    html = client_for(cast.viewer).get(PAGE).content.decode()
    assert "edit/thesis" not in html and "seats/" not in html and "links/" not in html
    assert "Sam Sponsor" in html
    assert "You can read this business case" in html
    html = client_for(cast.lead).get(PAGE).content.decode()
    assert 'action="/projects/ALPHA/charter/edit/thesis/"' in html


def test_thesis_saves_in_place(cast, arrange, client_for):
    case = arrange("Draft")
    response = client_for(cast.lead).post(
        f"{PAGE}edit/thesis/",
        {"revision": case.revision, "businessProblem": "Claims are slow", "theme": "Cost Out",
         "designPrinciples": "Buy\nReuse\n"},
        **HX,
    )  # fmt: skip
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="section-thesis"')
    assert "Saved." in html and "<html" not in html
    stored = BusinessCase.objects.get()
    assert stored.business_problem == "Claims are slow"
    assert stored.design_principles == ["Buy", "Reuse"]
    # The page's other forms learn the new revision (app.js moves those still at the old one).
    assert json.loads(response["HX-Trigger"]) == {
        "revised": {"resource": "charter", "from": case.revision, "to": case.revision + 1}
    }


def test_section_errors_keep_what_was_typed(cast, arrange, client_for):
    case = arrange("Draft")
    response = client_for(cast.lead).post(
        f"{PAGE}edit/thesis/",
        {"revision": case.revision, "businessProblem": "x" * 2001, "outcome": "Kept outcome"},
        **HX,
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert "At most 2000 characters" in html and "Kept outcome" in html
    assert 'aria-invalid="true"' in html
    assert BusinessCase.objects.get().revision == case.revision


def test_a_stale_save_shows_both_versions(cast, arrange, client_for):
    case = arrange("Draft", business_problem="Original")
    BusinessCase.objects.filter(pk=case.pk).update(
        business_problem="Someone else's", revision=case.revision + 1
    )
    response = client_for(cast.editor).post(
        f"{PAGE}edit/thesis/",
        {"revision": case.revision, "businessProblem": "Mine"},
        **HX,
    )
    assert response.status_code == 412
    html = response.content.decode()
    assert "Someone else saved this business case" in html
    assert "Mine" in html and "Someone else&#x27;s" in html
    assert f'name="revision" value="{case.revision + 1}"' in html  # saving again keeps mine
    assert BusinessCase.objects.get().business_problem == "Someone else's"


def _conflict_panel(html: str) -> list[tuple[str, str, str]]:
    """The conflict panel's rows: label, yours, stored."""
    return re.findall(
        r'<tr><th scope="row">([^<]*)</th><td>(.*?)</td><td>(.*?)</td></tr>', html, re.S
    )


def test_a_stale_adoption_save_lists_only_the_fields_that_differ(cast, arrange, client_for):
    case = arrange("Draft", adoption_kpi="80% in a month", change_saturation="Low")
    BusinessCase.objects.filter(pk=case.pk).update(
        adoption_kpi="90% in a month", revision=case.revision + 1
    )
    response = client_for(cast.editor).post(
        f"{PAGE}edit/adoption/",
        {
            "revision": case.revision,
            "adoptionAffected": f"  {case.adoption_affected}  ",
            "adoptionKpi": "80% in a month",
            "changeSaturation": "",
        },
        **HX,
    )
    assert response.status_code == 412
    assert _conflict_panel(response.content.decode()) == [
        ("Adoption KPI", "80% in a month", "90% in a month"),
        ("Change saturation", "—", "Low"),
    ]


def test_a_stale_financial_save_lists_the_figures_that_differ(cast, arrange, client_for):
    case = arrange("Draft")
    shown = finance.storable(case.financial_case)
    stored = shown["builtin"]
    BusinessCase.objects.filter(pk=case.pk).update(revision=case.revision + 1)
    response = client_for(cast.editor).post(
        f"{PAGE}edit/financial/",
        {
            "revision": case.revision,
            "mode": shown["mode"],
            "currency": stored["currency"],
            "discountRatePct": "99",
            "horizonYears": stored["horizonYears"],
            "line-0-cost": "5",
        },
        **HX,
    )
    assert response.status_code == 412
    rows = _conflict_panel(response.content.decode())
    assert [label for label, _, _ in rows] == ["Discount rate (%)", "Cash flows"]
    assert rows[0][1:] == ("99", str(stored["discountRatePct"]))
    assert rows[1][1] == "year 0: 5 / "


def test_the_checklist_follows_what_is_typed(cast, arrange, client_for):
    arrange("Draft", adoption_affected="", adoption_kpi="")
    client = client_for(cast.lead)
    html = client.get(f"{PAGE}checklist/", HX).content.decode()
    assert 'Who or what is affected<span class="visually-hidden">: missing' in html
    html = client.get(
        f"{PAGE}checklist/",
        {"adoptionAffected": "Branch staff", "adoptionKpi": "80%", "changeSaturation": "Low"},
        **HX,
    ).content.decode()
    assert ": missing" not in html and "Everything the submission gate needs" in html
    assert BusinessCase.objects.get().adoption_affected == ""  # nothing saved


def test_a_gated_act_rerenders_the_page_naming_what_is_missing(cast, client_for):
    response = client_for(cast.lead).post(f"{PAGE}acts/submit/", {"page": "case"})
    assert response.status_code == 422
    html = response.content.decode()
    assert "Submit for approval: not done." in html
    for field, label in (
        ("adoptionAffected", "Adoption affected"),
        ("adoptionKpi", "Adoption KPI"),
        ("changeSaturation", "Change saturation"),
        ("adoptionOwner", "Adoption owner"),
        ("decisionAuthority", "Sponsor (decision authority)"),
    ):  # the fields by their labels, not their API names
        assert f"<strong>{label}</strong>" in html and f"<strong>{field}</strong>" not in html
        assert field not in html.split("not done.</strong>", 1)[1].split("</p>", 1)[0]
    # The sentence itself names them as words too.
    assert "Still needed: adoption affected, adoption KPI" in html


def test_an_act_redirects_with_a_message(cast, arrange, client_for):
    case = arrange("Draft")
    client = client_for(cast.lead)
    response = client.post(f"{PAGE}acts/submit/", {"page": "case", "revision": case.revision})
    assert response.status_code == 302 and response["Location"] == PAGE
    assert "Submitted for approval" in client.get(PAGE).content.decode()
    assert BusinessCase.objects.get().approval_status == "Submitted"


def test_a_stale_act_changes_nothing_and_says_why(cast, arrange, client_for):
    case = arrange("Draft")
    response = client_for(cast.lead).post(
        f"{PAGE}acts/submit/", {"page": "case", "revision": case.revision - 1 or 99}
    )
    assert response.status_code == 412
    assert "Someone changed the business case" in response.content.decode()
    assert BusinessCase.objects.get().approval_status == "Draft"


def test_an_amendment_is_killed_from_the_page_and_its_change_withdrawn(cast, arrange, client_for):
    change = ChangeRequestFactory(project=cast.project, status="Proposed", summary="Widen scope")
    case = arrange(
        "Draft",
        version=2,
        approved_at=timezone.now(),
        amendment_enabled_by_change_id=str(change.pk),
    )
    lead_page = client_for(cast.lead).get(PAGE)
    assert "archive" not in offered(lead_page) and "kill" not in offered(lead_page)
    sponsor_page = client_for(cast.sponsor).get(PAGE)
    assert "kill" in offered(sponsor_page) and "archive" not in offered(sponsor_page)
    html = sponsor_page.content.decode()
    assert "“Widen scope” that enables this amendment is still Proposed" in html
    response = client_for(cast.sponsor).post(
        f"{PAGE}acts/kill/", {"page": "case", "revision": case.revision, "reason": "Stop it"}
    )
    assert response.status_code == 302
    assert BusinessCase.objects.get().terminal_disposition == "killed"
    change.refresh_from_db()
    assert change.status == "Withdrawn"


def test_the_sponsor_is_told_why_an_amendment_cannot_be_approved_yet(cast, arrange, client_for):
    change = ChangeRequestFactory(project=cast.project, status="Proposed", summary="Widen scope")
    arrange(
        "Submitted",
        version=2,
        approved_at=timezone.now(),
        amendment_enabled_by_change_id=str(change.pk),
    )
    response = client_for(cast.sponsor).get(PAGE)
    assert offered(response) >= {"return", "kill"} and "approve" not in offered(response)
    assert "“Widen scope” is Proposed: it must be Approved" in response.content.decode()
    change.status = "Approved"
    change.save()
    assert "approve" in offered(client_for(cast.sponsor).get(PAGE))


def test_return_with_notes_then_address_them(cast, arrange, client_for):
    arrange("Submitted")
    response = client_for(cast.sponsor).post(
        f"{PAGE}acts/return/",
        {"page": "case", "note-0-section": "returnExpected", "note-0-severity": "Blocker",
         "note-0-ask": "Quantify the return", "note-1-section": "adoption",
         "note-1-severity": "Minor", "note-1-ask": "Who trains night shift?",
         "note-2-section": "general", "note-2-severity": "Minor", "note-2-ask": "  "},
    )  # fmt: skip
    assert response.status_code == 302
    case = BusinessCase.objects.get()
    assert case.approval_status == "Draft"
    assert [n["ask"] for n in case.return_notes] == [
        "Quantify the return",
        "Who trains night shift?",
    ]
    lead = client_for(cast.lead)
    html = lead.get(PAGE).content.decode()
    assert "Return expected</h3>" in html and "Adoption</h3>" in html
    assert "2 open" in html
    note = case.return_notes[0]
    response = lead.post(
        f"{PAGE}return-notes/{note['id']}/", {"page": "case", "addressed": "true"}, **HX
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="return-notes"') and "1 open" in html
    assert BusinessCase.objects.get().return_notes[0]["addressed"] is True
    # The lifecycle bar follows, out of band: with the Blocker addressed, Submit asks nothing.
    bar = html[html.index('<section id="lifecycle"') :]
    assert bar.startswith('<section id="lifecycle" class="card lifecycle"')
    assert 'hx-swap-oob="true"' in bar.split(">", 1)[0]
    assert "confirmBlockers" not in bar and "Submit for approval" in bar


def test_people_picker_says_so_when_the_tracker_cannot_be_searched(
    cast, arrange, client_for, monkeypatch
):
    from governance.tracker import TrackerError
    from governance.tracker.local.backend import LocalTracker

    def down(self, query, *, limit=20):
        raise TrackerError("Jira is not answering (findUsers, HTTP 503).")

    monkeypatch.setattr(LocalTracker, "search_users", down)
    arrange("Draft")
    client = client_for(cast.lead)
    for headers in ({}, HX):
        response = client.get(
            f"{PAGE}people/", {"field": "projectManager", "q": "Eddie"}, **headers
        )
        assert response.status_code == 200
        html = response.content.decode()
        assert "People cannot be searched in the tracker right now" in html
        assert "Nobody in the tracker matches" not in html


def test_people_picker_sets_and_clears_seats(cast, arrange, client_for):
    arrange("Draft", project_manager=None)
    client = client_for(cast.lead)
    html = client.get(f"{PAGE}people/", {"field": "projectManager", "q": "Eddie"}, **HX)
    html = html.content.decode()
    assert 'Choose<span class="visually-hidden"> Eddie Editor' in html
    response = client.post(
        f"{PAGE}seats/", {"field": "projectManager", "account_id": cast.editor.account_id}, **HX
    )
    assert response.status_code == 200 and "Eddie Editor" in response.content.decode()
    assert BusinessCase.objects.get().project_manager["accountId"] == cast.editor.account_id
    client.post(
        f"{PAGE}seats/",
        {"field": "customerRep", "displayName": "Ext Person", "email": "ext@example.com"},
        **HX,
    )
    assert BusinessCase.objects.get().customer_rep["email"] == "ext@example.com"
    client.post(f"{PAGE}seats/", {"field": "projectManager"}, **HX)
    assert BusinessCase.objects.get().project_manager is None
    response = client.post(
        f"{PAGE}seats/", {"field": "decisionAuthority", "displayName": "Board", "email": "b@x.com"},
        **HX,
    )  # fmt: skip
    assert (
        response.status_code == 422
        and "choose a person from the tracker" in response.content.decode()
    )
    client.post(
        f"{PAGE}seats/",
        {"field": "steeringCommittee", "account_id": cast.pmo.account_id, "role": "PMO"},
        **HX,
    )
    members = BusinessCase.objects.get().steering_committee
    assert [(m["accountId"], m["role"]) for m in members] == [(cast.pmo.account_id, "PMO")]
    cast.project.refresh_from_db()
    assert cast.project.steering_account_ids == [cast.pmo.account_id]
    client.post(
        f"{PAGE}seats/",
        {"field": "steeringCommittee", "action": "remove", "member_id": members[0]["id"]},
        **HX,
    )
    assert BusinessCase.objects.get().steering_committee == []


LOCKED_NOTICE = "its thesis, seats and financial case are read-only"


@pytest.mark.parametrize(
    ("status", "role", "locked"),
    [
        ("Draft", "lead", False),
        ("Submitted", "lead", True),
        ("Approved", "editor", True),
        ("Submitted", "viewer", False),
        ("Submitted", "sponsor", False),
    ],
)
def test_the_read_only_notice_follows_the_flag_of_the_view(
    status, role, locked, cast, arrange, client_for
):
    arrange(status)
    response = client_for(getattr(cast, role)).get(PAGE)
    assert response.context["thesis_locked"] is locked
    assert (LOCKED_NOTICE in response.content.decode()) is locked


def test_which_states_allow_thesis_editing_is_decided_in_the_lifecycle_table_only(
    cast, arrange, client_for, monkeypatch
):
    """The page reads the rule from charter.acts: narrow EDIT_THESIS to Exploring and a Draft
    case shows the editor a read-only thesis with the notice saying so."""
    monkeypatch.setattr(acts, "EDIT_THESIS", dataclasses.replace(acts.EDIT_THESIS,
                        from_states=frozenset({"Exploring"})))  # fmt: skip
    arrange("Draft")
    html = client_for(cast.lead).get(PAGE).content.decode()
    assert 'action="/projects/ALPHA/charter/edit/thesis/"' not in html
    assert LOCKED_NOTICE in html


def test_the_not_started_pages_say_who_starts_them_from_the_lifecycle_table(
    cast, arrange, client_for
):
    viewer = client_for(cast.viewer)
    arrange("Draft")
    assert "It starts once the business case is approved." in (
        viewer.get(f"{PAGE}closeout/").content.decode()
    )
    assert "It starts after the close-out is closed." in (
        viewer.get(f"{PAGE}realisation/").content.decode()
    )
    arrange("Approved")
    assert "An editor of the project starts it." in (
        viewer.get(f"{PAGE}closeout/").content.decode()
    )
    arrange("Closed")
    html = viewer.get(f"{PAGE}realisation/").content.decode()
    assert "Benefits realisation has not started" in html
    assert "It starts after the close-out is closed." not in html


SEAT_FIELDS = [
    "decisionAuthority",
    "projectManager",
    "customerRep",
    "supplierRep",
    "adoptionOwner",
    "steeringCommittee",
]
EXTERNAL = {"displayName": "Erin External", "email": "erin@example.com"}


@pytest.mark.parametrize("field", SEAT_FIELDS)
def test_the_page_offers_an_external_person_exactly_where_the_api_takes_one(
    field, cast, arrange, client_for, client, bearer
):
    case = arrange("Draft", steering_committee=[])
    lead = client_for(cast.lead)
    html = lead.get(PAGE).content.decode()
    form = re.compile(
        rf'name="field" value="{field}">(?:(?!</form>).)*name="displayName"', re.DOTALL
    )
    page_offers = bool(form.search(html))
    results = lead.get(f"{PAGE}people/", {"field": field, "q": "nobody-by-this-name"}, **HX)
    search_offers = "Name an external person instead." in results.content.decode()
    value = [{**EXTERNAL, "role": "Adviser"}] if field == "steeringCommittee" else EXTERNAL
    response = client.patch(
        "/api/v1/projects/ALPHA/charter",
        data=json.dumps({field: value}),
        content_type="application/json",
        HTTP_IF_MATCH=f'"{case.revision}"',
        **bearer(cast.lead),
    )
    assert response.status_code in (200, 422), response.content
    api_takes = response.status_code == 200
    assert page_offers == search_offers == api_takes, (page_offers, search_offers, api_takes)
    assert api_takes is (field != "decisionAuthority")


def test_an_external_steering_member_is_added_from_the_page_without_access(
    cast, arrange, client_for
):
    arrange("Draft", steering_committee=[])
    lead = client_for(cast.lead)
    response = lead.post(
        f"{PAGE}seats/",
        {"field": "steeringCommittee", **EXTERNAL, "role": "Non-executive director"},
        **HX,
    )
    assert response.status_code == 200, response.content
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="section-people"')
    assert "Erin External" in html and "(external, erin@example.com)" in html
    [member] = BusinessCase.objects.get().steering_committee
    assert member["accountId"] is None and member["displayName"] == "Erin External"
    assert member["email"] == "erin@example.com" and member["role"] == "Non-executive director"
    # No tracker account: the member does not count toward the governance-group view rule.
    cast.project.refresh_from_db()
    assert cast.project.steering_account_ids == []
    # A bad e-mail is refused, naming it, and adds nobody.
    response = lead.post(
        f"{PAGE}seats/", {"field": "steeringCommittee", "displayName": "X", "email": "nope"}, **HX
    )
    assert response.status_code == 422 and "e-mail" in response.content.decode()
    assert len(BusinessCase.objects.get().steering_committee) == 1
    # The same member is removed like any other.
    lead.post(
        f"{PAGE}seats/",
        {"field": "steeringCommittee", "action": "remove", "member_id": member["id"]},
        **HX,
    )
    assert BusinessCase.objects.get().steering_committee == []


def test_supporting_documents_from_the_picker_a_link_and_the_template(cast, arrange, client_for):
    arrange("Draft")
    page = LocalWikiPage.objects.create(
        space_key="GOV", title="Vendor proposal", body="", project_key="ALPHA"
    )
    client = client_for(cast.editor)
    html = client.get(f"{PAGE}wiki/", {"q": "vendor"}, **HX).content.decode()
    assert "Vendor proposal" in html
    client.post(f"{PAGE}links/", {"action": "pick", "page_id": page.pk}, **HX)
    response = client.post(f"{PAGE}links/", {"action": "add", "label": "X", "url": "ftp://x"}, **HX)
    assert response.status_code == 422 and "http or https" in response.content.decode()
    client.post(
        f"{PAGE}links/", {"action": "add", "label": "Spec", "url": "https://x.test/s"}, **HX
    )
    response = client.post(f"{PAGE}links/template/", {"templateKind": "boardPaper"}, **HX)
    assert response.status_code == 200 and "created in the wiki" in response.content.decode()
    links = BusinessCase.objects.get().supporting_links
    assert [(link["label"], link["type"]) for link in links] == [
        ("Vendor proposal", "confluence"),
        ("Spec", "link"),
        ("Board paper: Alpha programme (ALPHA)", "confluence"),
    ]
    client.post(f"{PAGE}links/", {"action": "remove", "link_id": links[1]["id"]}, **HX)
    assert len(BusinessCase.objects.get().supporting_links) == 2


class _FormValues(HTMLParser):
    """What a browser would send for the form whose action ends with `action`: text inputs
    with their values, checked radios, and each select's selected option (else its first)."""

    def __init__(self, action: str):
        super().__init__()
        self.action, self.inside, self.values = action, False, {}
        self.select, self.first = None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = (attrs.get("action") or "").endswith(self.action)
        if not self.inside:
            return
        if tag == "input" and attrs.get("name"):
            kind = attrs.get("type", "text")
            if kind not in ("radio", "checkbox") or "checked" in attrs:
                self.values[attrs["name"]] = attrs.get("value") or ""
        elif tag == "select":
            self.select, self.first = attrs["name"], None
        elif tag == "option" and self.select:
            if self.first is None:
                self.first = attrs.get("value", "")
                self.values[self.select] = self.first
            if "selected" in attrs:
                self.values[self.select] = attrs.get("value", "")

    def handle_endtag(self, tag):
        if tag == "select":
            self.select = None
        elif tag == "form":
            self.inside = False


def form_values(html: str, action: str) -> dict:
    parser = _FormValues(action)
    parser.feed(html)
    return parser.values


def test_saving_the_financial_case_keeps_a_board_paper_set_elsewhere(
    cast, arrange, client_for, bearer, client
):
    """A boardPaperPageId set through the API, not among the supporting documents, survives a
    save of the form that does not touch it; choosing None still clears it."""
    arrange("Draft")
    paper = LocalWikiPage.objects.create(space_key="GOV", title="Board paper", body="")
    response = client.patch(
        "/api/v1/projects/ALPHA/charter",
        data=json.dumps({"financialCase": {"boardPaperPageId": str(paper.pk)}}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 200, response.content
    lead = client_for(cast.lead)
    html = lead.get(PAGE).content.decode()
    sent = form_values(html, "edit/financial/")
    assert sent["boardPaperPageId"] == str(paper.pk)
    assert f"Wiki page {paper.pk} (not among the supporting documents)" in html
    response = lead.post(f"{PAGE}edit/financial/", {**sent, "discountRatePct": "9"}, **HX)
    assert response.status_code == 200, response.content
    stored = BusinessCase.objects.get().financial_case
    assert stored["boardPaperPageId"] == str(paper.pk)
    assert stored["builtin"]["discountRatePct"] == 9
    # The section it answers with offers the same choice, still selected.
    sent = form_values(response.content.decode(), "edit/financial/")
    assert sent["boardPaperPageId"] == str(paper.pk)
    # An explicit None clears it.
    response = lead.post(f"{PAGE}edit/financial/", {**sent, "boardPaperPageId": ""}, **HX)
    assert response.status_code == 200
    assert BusinessCase.objects.get().financial_case["boardPaperPageId"] is None
    assert f"Wiki page {paper.pk}" not in response.content.decode()


def test_a_board_paper_whose_link_was_removed_stays_chosen(cast, arrange, client_for):
    arrange("Draft")
    lead = client_for(cast.lead)
    lead.post(f"{PAGE}links/template/", {"templateKind": "boardPaper"}, **HX)
    case = BusinessCase.objects.get()
    link = case.supporting_links[0]
    assert case.financial_case["boardPaperPageId"] == link["pageId"]
    lead.post(f"{PAGE}links/", {"action": "remove", "link_id": link["id"]}, **HX)
    sent = form_values(lead.get(PAGE).content.decode(), "edit/financial/")
    assert sent["boardPaperPageId"] == link["pageId"]
    assert lead.post(f"{PAGE}edit/financial/", sent, **HX).status_code == 200
    assert BusinessCase.objects.get().financial_case["boardPaperPageId"] == link["pageId"]


def test_financial_form_saves_and_shows_the_computed_figures(cast, arrange, client_for):
    case = arrange("Draft")
    response = client_for(cast.lead).post(
        f"{PAGE}edit/financial/",
        {"revision": case.revision, "mode": "builtin", "currency": "EUR", "discountRatePct": "10",
         "horizonYears": "3", "line-0-cost": "1000", "line-1-benefit": "300",
         "line-2-benefit": "400", "line-3-benefit": "500"},
        **HX,
    )  # fmt: skip
    assert response.status_code == 200
    html = response.content.decode()
    assert "EUR -21.04" in html and "8.90%" in html and "2.60 years" in html
    response = client_for(cast.lead).post(
        f"{PAGE}edit/financial/",
        {"revision": case.revision + 1, "mode": "builtin", "currency": "EUR",
         "discountRatePct": "10", "horizonYears": "3", "line-0-cost": "-5"},
        **HX,
    )  # fmt: skip
    assert response.status_code == 422
    assert 'value="-5"' in response.content.decode()


def test_closeout_page_saves_dispositions_and_shows_what_is_missing(cast, arrange, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    risk = RiskFactory(project=cast.project, title="Vendor")
    case = arrange("Approved", close_out=closeout_record())
    client = client_for(cast.lead)
    html = client.get(f"{PAGE}closeout/").content.decode()
    assert "2 register rows still need a disposition" in html
    response = client.post(
        f"{PAGE}closeout/",
        {"revision": case.revision, f"scope-{wp.pk}": "DeliveredAsChartered",
         f"scope-{wp.pk}-note": "All in", "asBuiltOutcome": "Done", "lessons-worked": "Demos"},
    )  # fmt: skip
    assert response.status_code == 302
    stored = BusinessCase.objects.get().close_out
    assert stored["scopeDispositions"] == {
        str(wp.pk): {"disposition": "DeliveredAsChartered", "note": "All in"}
    }
    assert stored["lessons"]["worked"] == "Demos"
    html = client.get(f"{PAGE}closeout/").content.decode()
    assert "1 register row still needs a disposition" in html and "Vendor" in html
    viewer_html = client_for(cast.viewer).get(f"{PAGE}closeout/").content.decode()
    assert f'action="{PAGE}closeout/"' not in viewer_html
    assert client_for(cast.viewer).post(f"{PAGE}closeout/", {}).status_code == 403
    assert risk.title in viewer_html


def test_realisation_page_record(cast, arrange, client_for):
    case = arrange("InRealisation", realisation_started_at="2026-01-01T00:00:00Z")
    response = client_for(cast.sponsor).post(
        f"{PAGE}realisation/",
        {"revision": case.revision, "realisationDate": "2027-01-31", "brOwner": "Ops",
         "realisationSummary": "Tracking"},
    )  # fmt: skip
    assert response.status_code == 302
    assert str(BusinessCase.objects.get().realisation_date) == "2027-01-31"
    response = client_for(cast.sponsor).post(
        f"{PAGE}realisation/", {"revision": case.revision + 1, "realisationDate": "soon"}
    )
    assert response.status_code == 422 and "YYYY-MM-DD" in response.content.decode()


def test_minutes_page_records_from_the_template(cast, arrange, client_for):
    arrange("Approved", steering_committee=[{"id": "m", "accountId": cast.sponsor.account_id,
                                              "displayName": "S", "role": "Chair"}])  # fmt: skip
    client = client_for(cast.lead)
    html = client.get(f"{PAGE}minutes/").content.decode()
    assert "No minutes recorded yet" in html and "Sam Sponsor" in html
    response = client.post(
        f"{PAGE}minutes/",
        {"title": "Steerco 1", "heldOn": "2026-01-15", "source": "template",
         "attendees": [cast.sponsor.account_id]},
    )  # fmt: skip
    assert response.status_code == 302
    minutes = SteeringMinutes.objects.get()
    assert minutes.page_id and minutes.attendees == [cast.sponsor.account_id]
    assert BusinessCase.objects.get().first_steerco_held_at is not None
    assert "initiation is complete" in client.get(f"{PAGE}minutes/").content.decode()


URLS = ["", "closeout/", "realisation/", "minutes/"]


@pytest.mark.parametrize(("status", "extra"), SCENARIOS[::2])
def test_pages_have_no_inline_script_style_or_handlers(status, extra, cast, arrange, client_for):
    arrange(
        status,
        close_out=closeout_record(owner=cast.viewer) if extra else None,
        realisation_started_at="2026-01-01T00:00:00Z",
        return_notes=[{"id": "n", "section": "outcome", "ask": "x", "severity": "Minor",
                       "addressed": False}],
    )  # fmt: skip
    for user in (cast.lead, cast.sponsor, cast.viewer):
        for url in URLS:
            response = client_for(user).get(PAGE + url)
            assert response.status_code == 200
            problems = inline_problems(response.content.decode())
            assert problems == [], (url, problems)
    response = client_for(cast.sponsor).get("/waiting/")
    assert inline_problems(response.content.decode()) == []


def test_closeout_page_queries_do_not_grow_with_the_registers(cast, arrange, client_for):
    arrange("Approved", close_out=closeout_record())
    client = client_for(cast.lead)
    WorkPackageFactory(project=cast.project, owner_account_id=cast.editor.account_id)
    RiskFactory(project=cast.project)
    client.get(f"{PAGE}closeout/")

    def count():
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"{PAGE}closeout/").status_code == 200
        return len(queries)

    small = count()
    for _ in range(30):
        WorkPackageFactory(project=cast.project, owner_account_id=cast.editor.account_id)
        RiskFactory(project=cast.project)
    assert count() == small


def test_json_of_the_page_and_the_api_agree_on_acts(cast, arrange, client_for, bearer):
    arrange("Submitted")
    body = client_for(None).get("/api/v1/projects/ALPHA/charter", **bearer(cast.sponsor)).json()
    shown = offered(client_for(cast.sponsor).get(PAGE))
    assert set(body["availableActs"]) == shown == {"return", "approve"}
    assert json.dumps(body)  # serialisable


def test_minutes_page_queries_do_not_grow_with_the_minutes(cast, arrange, client_for):
    from tests.factories import SteeringMinutesFactory

    arrange("Approved")
    client = client_for(cast.viewer)
    SteeringMinutesFactory(project=cast.project, attendees=[cast.lead.account_id])
    client.get(f"{PAGE}minutes/")

    def count():
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"{PAGE}minutes/").status_code == 200
        return len(queries)

    small = count()
    for _ in range(30):
        SteeringMinutesFactory(project=cast.project, attendees=[cast.lead.account_id])
    assert count() == small


def test_a_refused_financial_save_names_each_field_as_the_form_does(cast, arrange, client_for):
    """A yearly line's refusal names the year's input (the lines sent are only the filled
    years, so their index is not the year) and marks it; the models' fields in words."""
    arrange("Draft")
    client = client_for(cast.lead)

    def refused(**fields):
        revision = BusinessCase.objects.get().revision
        sent = {"revision": revision, "mode": "builtin", "currency": "EUR", **fields}
        response = client.post(f"{PAGE}edit/financial/", sent, **HX)
        assert response.status_code == 422
        html = response.content.decode()
        return html, html.split("Please correct:")[1].split("</ul>")[0]

    html, listed = refused(
        currency="EURO",
        discountRatePct="8",
        horizonYears="5",
        **{"line-3-cost": "lots", "line-4-benefit": "-5"},
    )
    assert "<strong>Cost in year 3</strong>" in listed
    assert "<strong>Benefit in year 4</strong>: Must be 0 or more" in listed
    assert "<strong>Financial case, built-in model, currency</strong>" in listed
    assert "lines[" not in listed and "builtin" not in listed
    for name in ("line-3-cost", "line-4-benefit"):
        tag = html.split(f'name="{name}"')[1].split(">")[0]
        assert 'aria-invalid="true"' in tag and 'value="' in tag
    assert 'aria-invalid="true"' not in html.split('name="line-4-cost"')[1].split(">")[0]
    # What was typed is kept.
    assert 'name="line-3-cost" value="lots"' in html
    # A year past the horizon is named as the year.
    _, listed = refused(horizonYears="3", **{"line-5-cost": "10"})
    assert "<strong>Year 5</strong>" in listed and "Cost in year 5" not in listed
