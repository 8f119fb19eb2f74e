"""The demo flows with TRACKER_BACKEND=jira and WIKI_BACKEND=confluence, every Jira and
Confluence call answered by the Prism mocks (request validation on): a person signs in with
Atlassian, then walks My projects, the project's governance home, the four registers (add,
inline edit, detail, the issue picker, export), the business case (seats, the wiki picker,
create from template, submit), the status page, the portfolio, the audit log, the assistant,
the failed-calls page and the JSON API list and create calls of each register. No answer may
be a 5xx, and every page must show its own content, not an error page.

Runs under `make contract-prism` (which starts and stops the mocks); skipped otherwise.

Prism answers with Atlassian's examples, so the walk uses them: the signed-in person is the
examples' accountId (Mia Krystof, 5b10a2844c20165700ede21g), lead of the example project EX,
and the wiki space is the v2 example's key. What is not Prism's:
- Atlassian's authorization server (token endpoint, accessible-resources) is not in the
  documents: `responses` fakes that one host and lets every Prism call through.
- `getMyPermissions`' example is keyed `EDIT_ISSUES` whatever permission is asked; a real Jira
  keys its answer by the permission asked. The request still goes to Prism (and is validated
  there); its example entry is handed back under the asked key (tests/atlassian/prism.py), so
  the person may browse EX and is a site administrator.
- Prism's user/bulk example answers Mia whoever is asked, and a sponsor must be somebody
  else: the business-case walk puts a second person of the examples in the app's name cache.
The people pickers of a project ask findUsersWithAllPermissions, whose example lists Mia and
Emma Richards: the editors' search offers Emma (Mia leads), and so does the seat picker.
"""

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from django.core.cache import cache
from django.test import Client

from governance import outbox
from governance.models import AtlassianGrant, OutboundTask, TrackerFieldState
from governance.services import token_create
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from tests.atlassian.conftest import API_URL, AUTH_URL
from tests.atlassian.prism import (
    CONFLUENCE_V1,
    CONFLUENCE_V2,
    JIRA,
    needs_prism,
    relabelled_permissions,
)

pytestmark = [pytest.mark.prism, pytest.mark.django_db, needs_prism]

SITE = "https://your-domain.atlassian.net"
MIA = "5b10a2844c20165700ede21g"  # the accountId of Atlassian's examples
KEY = "EX"  # the project key of Atlassian's examples; its lead is MIA
SPACE = "string"  # the space key of the Confluence v2 example
HX = {"HTTP_HX_REQUEST": "true"}
ERROR_PAGE = re.compile(r"<h1>(Not found|Not allowed|Jira is not answering|That could not be done)")


@pytest.fixture
def prism(atlassian_settings):
    s = atlassian_settings
    s.WIKI_BACKEND = "confluence"
    s.ATLASSIAN_SITE_URL = SITE
    s.ATLASSIAN_JIRA_URL = JIRA
    s.ATLASSIAN_CONFLUENCE_URL = CONFLUENCE_V1
    s.ATLASSIAN_CONFLUENCE_V2_URL = CONFLUENCE_V2
    s.ATLASSIAN_RETRIES = 0
    s.WIKI_SPACE_KEY = SPACE
    # Write-backs queue in the outbox; the walk runs them itself, against Prism.
    s.OUTBOX_RUN_ON_COMMIT = False
    return s


@pytest.fixture
def atlassian(prism):
    """Atlassian's authorization server faked; every Jira and Confluence call to Prism."""
    seen = {"token": 0}

    def token(request):
        seen["token"] += 1
        return (
            200,
            {"Content-Type": "application/json"},
            json.dumps(
                {
                    "access_token": "prism-access-token",
                    "refresh_token": "prism-refresh-token",
                    "expires_in": 3600,
                    "token_type": "Bearer",
                    "scope": "read:jira-work read:jira-user write:jira-work offline_access",
                }
            ),
        )

    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add_callback(responses.POST, AUTH_URL + "/oauth/token", callback=token)
        mock.add(
            responses.GET,
            API_URL + "/oauth/token/accessible-resources",
            json=[{"id": "cloud-ex", "name": "your-domain", "url": SITE, "scopes": []}],
        )
        mock.add_callback(
            responses.GET,
            re.compile(re.escape(JIRA) + r"/rest/api/3/mypermissions\b.*"),
            callback=relabelled_permissions,
        )
        for base in (JIRA, CONFLUENCE_V2, CONFLUENCE_V1):
            mock.add_passthru(base)
        yield seen


class Walk:
    """Each request of the walk, its status, and what the page must show."""

    def __init__(self, client: Client):
        self.client = client
        self.steps: list[tuple[str, str, int]] = []

    def __call__(self, method, url, *, data=None, expect=200, shows=(), htmx=False, **extra):
        headers = {**(HX if htmx else {}), **extra}
        if method == "GET":
            response = self.client.get(url, data or {}, **headers)
        elif isinstance(data, str):
            response = self.client.generic(
                method, url, data, content_type="application/json", **headers
            )
        else:
            response = self.client.post(url, data or {}, **headers)
        label = f"{method} {url}{' (htmx)' if htmx else ''}"
        self.steps.append((label, response.status_code))
        print(f"{response.status_code}  {label}")
        assert response.status_code < 500, f"{label}: {response.status_code}"
        # An export streams: its body is read from the stream.
        body = (
            b"".join(response.streaming_content) if response.streaming else response.content
        ).decode()
        assert response.status_code == expect, (
            f"{label}: expected {expect}, got {response.status_code}\n" + body[:2000]
        )
        if response.get("Content-Type", "").startswith("text/html"):
            assert not ERROR_PAGE.search(body), f"{label} rendered an error page"
        for text in shows:
            assert text in body, f"{label}: {text!r} not on the page"
        return response


@pytest.fixture
def walk(atlassian) -> Walk:
    """A person signed in through the Atlassian dance: the app's own login and callback
    views, Jira's /myself from Prism."""
    client = Client()
    go = Walk(client)
    start = go("GET", "/accounts/atlassian/login/", expect=302)
    state = parse_qs(urlsplit(start["Location"]).query)["state"][0]
    done = go(
        "GET", "/accounts/atlassian/callback/", data={"code": "c0de", "state": state}, expect=302
    )
    assert done["Location"] == "/"
    grant = AtlassianGrant.objects.get()
    assert grant.account_id == MIA and grant.cloud_id == "cloud-ex"
    # The 'Work Package' field as a worker left it for EX (Prism's example field list does
    # not contain it, so finding it there is left to test_prism).
    TrackerFieldState.objects.create(
        name="Work Package", field_id="customfield_10101", projects={KEY: "10000"}
    )
    return go


def _new_id(model, **filters) -> str:
    return str(model.objects.filter(**filters).order_by("-pk").values_list("pk", flat=True)[0])


def test_pages_of_the_demo_flow(walk):
    walk("GET", "/", shows=["Example", KEY])
    walk("GET", f"/projects/{KEY}/", shows=["Example", "Mia Krystof"])
    walk("GET", f"/projects/{KEY}/editors/", shows=["Mia Krystof"])
    walk("GET", f"/projects/{KEY}/editors/", data={"q": "mia"}, htmx=True, shows=["Emma Richards"])
    walk("GET", f"/projects/{KEY}/status/", shows=["Example"])
    walk("GET", f"/projects/{KEY}/audit/", shows=["Example"])
    walk("GET", "/portfolio/", shows=[KEY])
    walk("GET", "/portfolio/lessons/")
    walk("GET", "/waiting/")
    walk("GET", "/assistant/")
    walk("GET", "/outbox/")
    walk("GET", "/profile/")
    walk("GET", "/notifications/")


REGISTERS = {
    # register: (model, create form, inline edit form, text the new row shows)
    "work-packages": (
        WorkPackage,
        {"name": "Build the portal"},
        {"name": "Build the portal (phase 1)", "status": "In Progress", "progress": "40"},
        "Build the portal",
    ),
    "risks": (
        Risk,
        {"title": "Supplier slips", "direction": "Risk", "status": "Open", "impact": "4",
         "likelihood": "3", "treatment": "Mitigate"},
        {"title": "Supplier slips a quarter", "direction": "Risk", "status": "Open",
         "impact": "4", "likelihood": "4", "treatment": "Mitigate"},
        "Supplier slips",
    ),
    "decisions": (
        Decision,
        {"decision": "Use the managed database"},
        {"decision": "Use the managed database service"},
        "Use the managed database",
    ),
    "changes": (
        ChangeRequest,
        {"summary": "Add the mobile app", "reason": "Customers asked"},
        {"summary": "Add the mobile app (iOS first)", "reason": "Customers asked"},
        "Add the mobile app",
    ),
}  # fmt: skip


@pytest.mark.parametrize("register", REGISTERS)
def test_register_pages_add_and_inline_edit(walk, register):
    model, create, edit, shown = REGISTERS[register]
    base = f"/projects/{KEY}/registers/{register}/"
    walk("GET", f"/projects/{KEY}/registers/", expect=302)
    walk("GET", base, shows=["Example"])
    walk("GET", f"{base}new/", htmx=True)
    walk("POST", base, data=create, htmx=True, expect=201, shows=[shown])
    pk = _new_id(model)
    walk("GET", f"{base}{pk}/edit/", htmx=True, shows=['name="revision" value="1"'])
    walk("POST", f"{base}{pk}/", data={**edit, "revision": "1"}, htmx=True, shows=[shown])
    walk("GET", f"{base}{pk}/", shows=[shown])
    walk("GET", f"{base}export/", data={"format": "csv"}, shows=[shown])
    walk("GET", base, shows=[shown])


def test_work_package_links_and_write_back_through_jira(walk):
    base = f"/projects/{KEY}/registers/work-packages/"
    walk("GET", base, shows=["Example"])
    # A package already linked to EX-1 (the issue of Atlassian's examples is ED-1, so a new
    # link to EX-1 is refused as unknown: the picker and the refusal are walked too).
    wp = WorkPackage.objects.create(
        project_id=_project_pk(), name="Payments", linked_issue_keys=[f"{KEY}-1"]
    )
    walk("GET", f"{base}{wp.pk}/", shows=["Payments", f"{KEY}-1"])
    walk("GET", f"{base}{wp.pk}/links/", htmx=True, shows=['name="q"'])
    walk("GET", f"{base}{wp.pk}/links/", data={"q": "bug"}, htmx=True)
    walk(
        "POST",
        f"{base}{wp.pk}/links/",
        data={"issue_key": f"{KEY}-2", "revision": "1"},
        htmx=True,
        expect=422,
        shows=[f"The tracker has no issue {KEY}-2."],
    )
    walk("POST", f"{base}{wp.pk}/", data={"name": "Payments hub", "revision": "1"}, htmx=True)
    walk("POST", f"{base}{wp.pk}/links/{KEY}-1/delete/", htmx=True)
    # The rename and the unlink each queued a write-back of EX-1's 'Work Package' field; the
    # worker delivers them to Jira (editIssue, through Prism).
    tasks = OutboundTask.objects.filter(name="registers.work_package_field")
    assert tasks.count() == 2, list(tasks.values_list("name", "payload"))
    outbox.run_due()
    assert set(tasks.values_list("state", "last_error")) == {(OutboundTask.State.DONE, "")}
    walk("GET", "/outbox/", shows=["No failed calls"])


def _project_pk():
    from governance.models import Project

    return Project.objects.get(key=KEY).pk


def _seed_name(account_id: str, name: str) -> None:
    """Prism's user/bulk example answers Mia whoever is asked: a second person of the
    examples is put in the app's name cache, as an earlier page would have resolved them."""
    cache.set(
        "person:v1:" + account_id,
        {"account_id": account_id, "display_name": name, "avatar_url": "", "known": True},
        None,
    )


def test_business_case_flow(walk):
    will = "5b10a0effa615349cb016cd8"  # "Will" of the getUsersFromGroup example
    _seed_name(will, "Will")
    page = f"/projects/{KEY}/charter/"
    walk("GET", page, shows=["Example"])
    walk(
        "POST",
        f"{page}edit/thesis/",
        data={"businessProblem": "Claims take weeks", "revision": "1"},
        htmx=True,
        shows=["Claims take weeks"],
    )
    # The people picker: people who may browse EX (findUsersWithAllPermissions's example).
    walk(
        "GET",
        f"{page}people/",
        data={"field": "decisionAuthority", "q": "will"},
        htmx=True,
        shows=["Emma Richards"],
    )
    walk("POST", f"{page}seats/", data={"field": "adoptionOwner", "account_id": MIA}, htmx=True)
    walk(
        "POST",
        f"{page}seats/",
        data={"field": "decisionAuthority", "account_id": will},
        htmx=True,
        shows=["Will"],
    )
    walk(
        "POST",
        f"{page}edit/adoption/",
        data={
            "adoptionAffected": "Claims handlers in 12 offices",
            "adoptionKpi": "90% of claims through the portal by Q4",
            "changeSaturation": "Modest",
            "revision": str(_case().revision),
        },
        htmx=True,
    )
    walk("GET", f"{page}checklist/", htmx=True)
    # The wiki picker: Prism cannot generate the CQL search answer (its schema is
    # recursive), so the picker says the wiki could not be searched.
    walk("GET", f"{page}wiki/", data={"q": "board paper"}, htmx=True, shows=["could not be"])
    walk("POST", f"{page}links/", data={"action": "pick", "page_id": "123"}, htmx=True)
    walk("POST", f"{page}links/template/", data={"templateKind": "boardPaper"}, htmx=True)
    # Prism's createPage example names the new page "string", not a page id Confluence would
    # give: the board paper the nudge comments on is named in the financial case instead.
    walk(
        "PATCH",
        f"/api/v1/projects/{KEY}/charter",
        data=json.dumps({"financialCase": {"boardPaperPageId": "123"}}),
        HTTP_IF_MATCH=f'"{_case().revision}"',
    )
    walk(
        "POST",
        f"{page}acts/submit/",
        data={"page": "case", "revision": str(_case().revision)},
        expect=302,
    )
    assert _case().approval_status == "Submitted"
    walk("GET", page, shows=["Submitted"])
    walk("GET", "/waiting/")
    # The approval nudge: a footer comment on the board paper, to Confluence through Prism.
    outbox.run_due()
    nudge = OutboundTask.objects.get(name="charter.approval_nudge")
    assert nudge.state == OutboundTask.State.DONE, nudge.last_error
    walk("GET", f"/projects/{KEY}/audit/", shows=["submitted"])


def _case():
    from charter.models import BusinessCase

    return BusinessCase.objects.get(project__key=KEY)


def test_json_api_of_the_demo_flow(walk):
    from governance.models import User

    _, token = token_create(user=User.objects.get(account_id=MIA), name="script")
    api = Walk(Client(HTTP_AUTHORIZATION=f"Bearer {token}"))
    base = f"/api/v1/projects/{KEY}"
    api("GET", "/api/v1/me", shows=[MIA])
    api("GET", "/api/v1/projects", shows=[KEY])
    api("GET", base, shows=['"canEdit": true'])
    bodies = {
        "work-packages": {"name": "Migrate the data", "plannedStartDate": "2026-01-05"},
        "risks": {"title": "Data loss", "direction": "Risk", "impact": 5, "likelihood": 2},
        "decisions": {"decision": "Freeze the schema"},
        "changes": {"summary": "Move go-live", "reason": "Supplier slip"},
    }
    for register, body in bodies.items():
        api("GET", f"{base}/{register}")
        created = api("POST", f"{base}/{register}", data=json.dumps(body), expect=201).json()
        one = api("GET", f"{base}/{register}/{created['id']}")
        field = next(iter(body))
        api(
            "PATCH",
            f"{base}/{register}/{created['id']}",
            data=json.dumps({field: body[field] + " (edited)"}),
            HTTP_IF_MATCH=one["ETag"],
            shows=["(edited)"],
        )
        api("GET", f"{base}/{register}", shows=["(edited)"])
    api("GET", f"{base}/charter")
    api("GET", f"{base}/status")
    api("GET", f"{base}/audit")
    api("GET", f"{base}/minutes")
    api("GET", "/api/v1/portfolio", shows=[KEY])
    api("GET", "/api/v1/site-settings")
