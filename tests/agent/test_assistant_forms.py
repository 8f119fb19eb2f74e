"""The Assistant page without a model: a write's form previews the change (nothing written)
and runs it only on Confirm; Edit goes back with the values kept; a person is picked from the
project's people (and one who is not among them is refused); nothing a person reads carries
backticks or the API's field names."""

import re
from html.parser import HTMLParser

import pytest

from agent import catalogue
from agent.models import Proposal
from governance.labels import _CODE
from governance.models import AuditEntry
from governance.people import forget
from governance.tracker.local.models import LocalAccount
from registers.models import Risk
from tests.agent.conftest import EVERYONE, use_group
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

RISK = {"projectKey": "ALPHA", "title": "Supplier insolvency", "likelihood": "3", "impact": "4"}


def risks():
    return Risk.objects.filter(title="Supplier insolvency").exists()


def post(client, url, data=None):
    return client.post(url, data or {}, HTTP_HX_REQUEST="true")


class _Text(HTMLParser):
    """The text a person reads: text nodes (not scripts or styles) and the attributes that are
    read out or shown (labels, placeholders, titles)."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name in ("aria-label", "placeholder", "title", "alt") and value:
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.parts.append(data.strip())


def read_text(html: str) -> list[str]:
    parser = _Text()
    parser.feed(html)
    return parser.parts


def test_nothing_is_written_before_confirm_and_edit_goes_back_with_the_values(world, client_for):
    use_group(EVERYONE)
    client = client_for(world.lead)
    before = AuditEntry.objects.count()
    data = {**RISK, "ownerAccountId": world.editor.account_id, "mitigation": "Second supplier"}
    preview = post(client, "/assistant/actions/add_risk/", data).content.decode()
    assert "Owner" in preview and "Eddie Editor" in preview  # the person by name
    assert world.editor.account_id not in re.sub(r'name="[^"]*"|value="[^"]*"', "", preview)
    assert AuditEntry.objects.count() == before and not risks()
    proposal = Proposal.objects.get()
    body = post(client, f"/assistant/proposals/{proposal.pk}/dismiss/").content.decode()
    proposal.refresh_from_db()
    assert proposal.state == "Dismissed"
    assert 'value="Supplier insolvency"' in body and "Second supplier" in body
    assert f'<option value="{world.editor.account_id}" selected>' in body
    assert '<option value="ALPHA" selected>' in body
    # A dismissed proposal cannot be confirmed afterwards.
    assert post(client, f"/assistant/proposals/{proposal.pk}/confirm/").status_code == 409
    assert not risks() and AuditEntry.objects.count() == before


def test_confirm_writes_once_and_is_audited(world, client_for):
    use_group(EVERYONE)
    client = client_for(world.lead)
    post(client, "/assistant/actions/add_risk/", RISK)
    proposal = Proposal.objects.get()
    assert post(client, f"/assistant/proposals/{proposal.pk}/confirm/").status_code == 200
    assert post(client, f"/assistant/proposals/{proposal.pk}/confirm/").status_code == 409
    assert Risk.objects.filter(title="Supplier insolvency").count() == 1
    entry = AuditEntry.objects.get(kind="risk.created")
    assert (entry.actor_account_id, entry.client) == (
        world.lead.account_id,
        "assistant page (form)",
    )
    # Someone else cannot confirm a proposal of the lead's.
    post(client, "/assistant/actions/add_risk/", {**RISK, "title": "Second"})
    second = Proposal.objects.get(state="Pending")
    other = client_for(world.editor)
    assert post(other, f"/assistant/proposals/{second.pk}/confirm/").status_code == 404


def test_a_refusal_at_confirm_shows_the_form_again_with_the_values(world, client_for):
    use_group(EVERYONE)
    client = client_for(world.lead)
    post(client, "/assistant/actions/add_risk/", RISK)
    proposal = Proposal.objects.get()
    world.project.approval_status = "Closed"  # the registers freeze in between
    world.project.save(update_fields=["approval_status"])
    body = post(client, f"/assistant/proposals/{proposal.pk}/confirm/").content.decode()
    assert "frozen" in body and 'value="Supplier insolvency"' in body
    assert not risks()
    proposal.refresh_from_db()
    assert proposal.state == "Refused"


def test_the_owner_is_picked_from_the_projects_people(world, client_for):
    use_group(EVERYONE)
    client = client_for(world.lead)
    # Before a project is chosen, the picker waits for it (the lead sees two projects).
    ProjectFactory(key="BETA", name="Beta", lead=world.lead)
    body = client.get("/assistant/actions/add_risk/").content.decode()
    assert "Owner (account id)" not in body and "account id" not in body.lower()
    assert "Choose the project first" in body
    # The project chosen (the page asks again as it changes): its people, by name.
    body = client.get("/assistant/actions/add_risk/?projectKey=ALPHA&title=Kept").content.decode()
    picker = re.search(r'<select id="a-add_risk-ownerAccountId".*?</select>', body, re.S)[0]
    for person, name in (
        (world.lead, "Lena Lead"),
        (world.editor, "Eddie Editor"),
        (world.sponsor, "Sam Sponsor"),
    ):
        assert f'<option value="{person.account_id}">{name}</option>' in picker
    assert world.outsider.account_id not in picker
    assert 'value="Kept"' in body


def test_two_people_of_the_same_name_are_told_apart_by_email(world, client_for):
    use_group(EVERYONE)
    LocalAccount.objects.filter(account_id=world.editor.account_id).update(display_name="Lena Lead")
    forget([world.editor.account_id])
    body = client_for(world.lead).get("/assistant/actions/add_risk/?projectKey=ALPHA")
    body = body.content.decode()
    assert ">Lena Lead (lead@example.test)</option>" in body
    assert ">Lena Lead (editor@example.test)</option>" in body


def test_a_person_not_among_the_projects_people_is_refused(world, client_for):
    use_group(EVERYONE)
    client = client_for(world.lead)
    response = post(
        client,
        "/assistant/actions/add_risk/",
        {**RISK, "ownerAccountId": world.outsider.account_id},
    )
    assert response.status_code == 422
    body = response.content.decode()
    assert "Choose one of the people of ALPHA" in body
    assert 'value="Supplier insolvency"' in body
    assert not Proposal.objects.exists() and not risks()


def test_an_irreversible_write_is_marked_before_confirm(world, client_for):
    use_group(EVERYONE)
    world.reported_exception()
    client = client_for(world.sponsor)
    body = post(
        client,
        "/assistant/actions/decide_project_exception/",
        {"projectKey": "ALPHA", "decision": "AcceptPlan", "comment": "Go on."},
    ).content.decode()
    assert "Cannot be undone" in body
    assert '<button type="submit" class="danger">Confirm</button>' in body
    add = post(client_for(world.lead), "/assistant/actions/add_risk/", RISK).content.decode()
    assert "Cannot be undone" not in add


@pytest.mark.parametrize("who", ["lead", "sponsor"])
def test_no_backticks_or_field_codes_in_what_the_forms_say(world, client_for, who):
    use_group(EVERYONE)
    world.reported_exception()
    user = getattr(world, who)
    client = client_for(user)
    pages = {"/assistant/": client.get("/assistant/").content.decode()}
    request = catalogue.request_for(user)
    for action in catalogue.available(request):
        url = f"/assistant/actions/{action.name}/?projectKey=ALPHA"
        pages[url] = client.get(url).content.decode()
    # A refused form's messages too.
    pages["refused"] = post(
        client, "/assistant/actions/add_risk/", {"projectKey": "ALPHA", "likelihood": "9"}
    ).content.decode()
    for url, html in pages.items():
        for text in read_text(html):
            assert "`" not in text, f"{url}: {text!r}"
            codes = [c for c in _CODE.findall(text) if c not in ("JavaScript",)]
            assert not codes, f"{url}: {codes} in {text!r}"


def test_a_refusal_names_the_fields_by_their_labels():
    from agent.assistant import refusal_in_words

    told = refusal_in_words(
        "The business case cannot be submitted yet. Still needed: adoptionAffected, adoptionKpi.",
        {"ownerAccountId": ["Choose one of the people of ALPHA."]},
    )
    assert "Still needed: adoption affected, adoption KPI." in told
    assert "(Owner: Choose one of the people of ALPHA.)" in told
    assert not _CODE.search(told) and "`" not in told


def test_past_the_choices_the_project_is_typed_and_its_people_follow(
    world, client_for, monkeypatch
):
    """A person who views more projects than a choice lists types the key; the people picker
    then offers the typed project's people, in any case the key is typed, and none for a key
    they cannot view or one no project can have."""
    from agent import views

    use_group(EVERYONE)
    client = client_for(world.lead)
    ProjectFactory(key="BETA", name="Beta", lead=world.lead)
    listed = client.get("/assistant/actions/add_risk/").content.decode()
    assert '<select id="a-add_risk-projectKey"' in listed and "ALPHA: " in listed
    monkeypatch.setattr(views, "PROJECT_CHOICES", 1)
    typed = client.get("/assistant/actions/add_risk/").content.decode()
    field = re.search(r'<input id="a-add_risk-projectKey"[^>]*>', typed)[0]
    assert 'type="text"' in field and "required" in field and 'hx-trigger="change"' in field
    assert "ALPHA: " not in typed and "Type the project" in typed
    assert "Choose the project first" in typed
    body = client.get("/assistant/actions/add_risk/?projectKey=alpha").content.decode()
    picker = re.search(r'<select id="a-add_risk-ownerAccountId".*?</select>', body, re.S)[0]
    assert f'<option value="{world.editor.account_id}">Eddie Editor</option>' in picker
    assert 'value="alpha"' in body
    for key in ("OTHER", "NOPE", "x" * 300, "A B"):  # the outsider's, none, none can be
        body = client.get("/assistant/actions/add_risk/", {"projectKey": key})
        assert body.status_code == 200
        assert "Choose the project first" in body.content.decode(), key
    # Hostile keys: a character no text holds is refused at the door, as in every form; a
    # bad byte, 5,000 digits or 200 KB name no project, and nobody is offered.
    for typed, status in (
        ("A%EF%BF%BE", 422),
        ("A%00B", 422),
        ("%ED%A0%80", 200),
        ("9" * 5000, 200),
        ("A" * 200_000, 200),
    ):
        body = client.get(f"/assistant/actions/add_risk/?projectKey={typed}")
        assert body.status_code == status, typed[:12]
        assert status == 422 or "Choose the project first" in body.content.decode()
    refused = post(client, "/assistant/actions/add_risk/", {**RISK, "projectKey": "AL\x00PHA"})
    assert refused.status_code == 422 and not Proposal.objects.exists()
    # The typed key runs as a chosen one: previewed, then written on Confirm.
    answer = post(client, "/assistant/actions/add_risk/", {**RISK, "projectKey": "ALPHA"})
    assert answer.status_code == 200
    assert Proposal.objects.get().arguments["projectKey"] == "ALPHA"


def test_an_action_form_reads_the_same_queries_at_3_and_40_projects(world, client_for):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    use_group(EVERYONE)
    client = client_for(world.lead)

    def queries(url):
        client.get(url)
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    ProjectFactory(key="BETA", lead=world.lead)  # two projects: none is chosen for the lead
    urls = ["/assistant/actions/add_risk/", "/assistant/actions/find_projects/"]
    few = [queries(url) for url in urls]
    for n in range(40):
        ProjectFactory(key=f"P{n:02}", lead=world.lead, browsers=[world.editor])
    assert [queries(url) for url in urls] == few


def test_a_stranger_is_refused_whatever_case_or_former_key_names_the_project(world, client_for):
    """The people check reads the project as the action will: a typed key in any case, or a
    key the project had before, names the same project and the same people."""
    from governance.tracker.local.models import LocalProject

    use_group(EVERYONE)
    client = client_for(world.lead)
    stranger = {"ownerAccountId": world.outsider.account_id}
    for key in ("alpha", " Alpha "):
        response = post(
            client, "/assistant/actions/add_risk/", {**RISK, **stranger, "projectKey": key}
        )
        assert response.status_code == 422, key
        assert "Choose one of the people of ALPHA" in response.content.decode()
    tracked = LocalProject.objects.get(key="ALPHA")
    tracked.key = "ALPHA2"
    tracked.save()
    response = post(client, "/assistant/actions/add_risk/", {**RISK, **stranger})
    assert response.status_code == 422
    assert "Choose one of the people of ALPHA2" in response.content.decode()
    body = client.get("/assistant/actions/add_risk/?projectKey=ALPHA").content.decode()
    picker = re.search(r'<select id="a-add_risk-ownerAccountId".*?</select>', body, re.S)[0]
    assert f'<option value="{world.editor.account_id}">Eddie Editor</option>' in picker
    assert not Proposal.objects.exists() and not risks()
