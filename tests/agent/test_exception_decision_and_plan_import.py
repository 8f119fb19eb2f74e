"""Two writes of the catalogue that call a service of their own app: the sponsor's decision on
a reported exception (`status.exceptions.exception_decide`) and the import of a Microsoft
Project plan into the work packages (`registers.services.import_preview` / `import_file`).
Run through the catalogue's runner (`catalogue.run`, the door every client uses): the
service's answers and refusals, the gates in the house order, and the same outcome as the
JSON API for the same file."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from agent import catalogue
from agent.mcp_server import tool_for
from charter.services import charter_approve
from governance.errors import Conflict, Forbidden, Frozen, NotFound, Stale, ValidationFailed
from governance.models import AuditEntry, Project
from registers import mspdi, uploads
from registers.models import ChangeRequest, WorkPackage
from status.models import ProjectException
from tests.agent.conftest import EVERYONE, PLAN_XML, use_group
from tests.charter.conftest import arrange, as_  # noqa: F401
from tests.status.test_exceptions import REPORT, slip, wp  # noqa: F401

pytestmark = pytest.mark.django_db


def run(user, name, arguments):
    ctx = catalogue.Context(request=catalogue.request_for(user), client="test")
    return catalogue.run(ctx, name, arguments)


@pytest.fixture
def everyone(cast):
    from governance.tracker.local import scripting

    scripting.ensure_group(
        EVERYONE, members=["lead", "editor", "viewer", "sponsor", "outsider", "site_admin"]
    )
    use_group(EVERYONE)
    return cast


# --- the sponsor's decision on an exception -------------------------------------------------


@pytest.fixture
def reported(everyone, arrange, as_, wp):  # noqa: F811
    """ALPHA approved with tolerances, 30 days late (in exception), the lead's report written
    through the assistant."""
    cast = everyone
    arrange("Submitted")
    charter_approve(
        caller=as_(cast.sponsor), data={"toleranceDays": 10, "toleranceCostPercent": 10}
    )
    slip(cast, as_, wp, 30)
    written = run(cast.lead, "write_exception_report", {"projectKey": "ALPHA", **REPORT})
    assert written["state"] == "Reported"
    return written


def test_the_sponsor_accepts_the_plan_and_the_answer_is_the_exception_body(everyone, reported):
    cast = everyone
    answer = run(
        cast.sponsor,
        "decide_project_exception",
        {
            "projectKey": "alpha",
            "decision": "AcceptPlan",
            "comment": "Go on.",
            "expectedRevision": reported["revision"],
        },
    )
    assert answer["done"] == "exception.decided"
    assert answer["projectKey"] == "ALPHA"
    assert answer["inException"] is False and answer["exception"] is None
    assert answer["link"].endswith("/projects/ALPHA/status/exception/")
    decided = answer["decided"]
    assert (decided["state"], decided["decision"]) == ("Decided", "AcceptPlan")
    assert decided["decidedByAccountId"] == cast.sponsor.account_id
    assert answer["revision"] == decided["revision"] == reported["revision"] + 1
    assert ChangeRequest.objects.get(pk=decided["changeRequestId"]).status == "Approved"
    entry = AuditEntry.objects.get(kind="exception.decided")
    assert (entry.channel, entry.actor_account_id) == ("agent", cast.sponsor.account_id)


def test_killing_needs_the_reason_and_takes_the_kill_act(everyone, reported):
    cast = everyone
    arguments = {"projectKey": "ALPHA", "decision": "Kill"}
    with pytest.raises(ValidationFailed) as refused:
        run(cast.sponsor, "decide_project_exception", arguments)
    assert refused.value.fields == {"comment": ["Give the reason for killing the project."]}
    assert ProjectException.objects.get().state == "Reported"
    answer = run(
        cast.sponsor, "decide_project_exception", {**arguments, "comment": "No longer viable."}
    )
    assert answer["decided"]["decision"] == "Kill"
    assert answer["decided"]["decisionComment"] == "No longer viable."
    case = cast.project.business_case
    case.refresh_from_db()
    assert (case.approval_status, case.terminal_disposition) == ("Archived", "killed")


def test_only_the_sponsor_decides_and_an_outsider_is_not_told_the_project(everyone, reported):
    cast = everyone
    arguments = {"projectKey": "ALPHA", "decision": "AcceptPlan"}
    for who in (cast.lead, cast.editor, cast.viewer, cast.site_admin):
        with pytest.raises(Forbidden) as refused:
            run(who, "decide_project_exception", arguments)
        assert refused.value.message == (
            "Only the sponsor decides on an exception, and not on a report they wrote."
        )
    with pytest.raises(NotFound) as hidden:
        run(cast.outsider, "decide_project_exception", arguments)
    assert "Alpha programme" not in json.dumps(hidden.value.body())
    assert ProjectException.objects.get().state == "Reported"


def test_a_sponsor_who_leads_the_project_does_not_decide_on_their_own_report(
    everyone,
    arrange,  # noqa: F811
    as_,  # noqa: F811
    wp,  # noqa: F811
):
    cast = everyone
    arrange("Submitted")
    charter_approve(caller=as_(cast.sponsor), data={"toleranceDays": 10})
    Project.objects.filter(pk=cast.project.pk).update(sponsor_account_id=cast.lead.account_id)
    slip(cast, as_, wp, 30)
    run(cast.lead, "write_exception_report", {"projectKey": "ALPHA", **REPORT})
    with pytest.raises(Forbidden):
        run(cast.lead, "decide_project_exception", {"projectKey": "ALPHA", "decision": "Kill"})
    # The gate says so before the body too.
    with pytest.raises(Forbidden):
        run(cast.lead, "decide_project_exception", {"projectKey": "ALPHA", "decision": "No"})


def test_the_decision_refuses_a_bad_body_a_stale_revision_and_waits_for_the_report(
    everyone,
    arrange,  # noqa: F811
    as_,  # noqa: F811
    wp,  # noqa: F811
):
    cast = everyone
    arrange("Submitted")
    charter_approve(caller=as_(cast.sponsor), data={"toleranceDays": 10})
    with pytest.raises(NotFound):  # no open exception
        run(cast.sponsor, "decide_project_exception", {"projectKey": "ALPHA", "decision": "Kill"})
    slip(cast, as_, wp, 30)
    key = {"projectKey": "ALPHA"}
    with pytest.raises(ValidationFailed) as refused:
        run(cast.sponsor, "decide_project_exception", {**key, "decision": "Postpone"})
    assert set(refused.value.fields) == {"decision"}
    with pytest.raises(ValidationFailed) as refused:
        run(cast.sponsor, "decide_project_exception", {**key, "verdict": "Kill"})
    assert refused.value.fields == {
        "decision": ["This field is required."],
        "verdict": ["Unknown field."],
    }
    with pytest.raises(Conflict) as waiting:
        run(cast.sponsor, "decide_project_exception", {**key, "decision": "AcceptPlan"})
    assert "has not reported" in waiting.value.message
    record = run(cast.lead, "write_exception_report", {**key, **REPORT})
    stale = {**key, "decision": "AcceptPlan", "expectedRevision": record["revision"] - 1}
    with pytest.raises(Stale):
        run(cast.sponsor, "decide_project_exception", stale)
    with pytest.raises(Stale):  # before the body's refusal
        run(cast.sponsor, "decide_project_exception", {**stale, "decision": "Postpone"})
    assert ProjectException.objects.get().state == "Reported"


def test_the_decision_is_offered_to_the_sponsor_and_marked_not_undoable(everyone, client_for):
    cast = everyone
    for who, offered in ((cast.sponsor, True), (cast.viewer, False), (cast.lead, False)):
        names = {a.name for a in catalogue.available(catalogue.request_for(who))}
        assert ("decide_project_exception" in names) is offered, who
    # The sponsor edits nothing: the other writes stay hidden from them.
    sponsor = {a.name for a in catalogue.available(catalogue.request_for(cast.sponsor))}
    assert not sponsor & {"add_risk", "import_project_plan", "write_exception_report"}
    hints = tool_for(catalogue.get("decide_project_exception")).annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
        False,
        True,
        False,
    )


# --- the plan import ------------------------------------------------------------------------

PLAN = {"projectKey": "ALPHA", "xml": PLAN_XML}


def _api_dry_run(user, content: bytes, level: int | None = None) -> dict:
    client = Client()
    client.force_login(user)
    query = "?dryRun=true" + (f"&outlineLevel={level}" if level else "")
    answer = client.post(
        f"/api/v1/projects/ALPHA/work-packages/import{query}",
        data={"file": SimpleUploadedFile("plan.xml", content)},
    )
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_the_preview_answers_what_the_api_dry_run_answers_and_stores_nothing(everyone):
    cast = everyone
    for level in (None, 2):
        arguments = {**PLAN, **({"outlineLevel": level} if level else {})}
        preview = run(cast.editor, "import_project_plan", arguments)
        api = _api_dry_run(cast.editor, PLAN_XML.encode(), level)
        assert preview["dryRun"] is True
        assert preview["createRows"] == api["createRows"]
        assert preview["createRows"]  # a plan with packages to create
        for name in ("register", "create", "rows", "errors", "warnings", "previewDigest"):
            assert preview[name] == api[name], name
        assert preview["link"].endswith("/projects/ALPHA/registers/work-packages/")
    assert preview["create"] == 18
    assert not WorkPackage.objects.filter(project=cast.project).exists()
    assert not AuditEntry.objects.filter(kind__startswith="work_package").exists()


def test_the_digest_commits_all_the_rows(everyone):
    cast = everyone
    preview = run(cast.lead, "import_project_plan", PLAN)
    names = [row["values"]["name"] for row in preview["createRows"]]
    done = run(
        cast.lead, "import_project_plan", {**PLAN, "previewDigest": preview["previewDigest"]}
    )
    assert done["done"] == "work_packages.imported"
    assert (done["created"], done["warnings"]) == (2, preview["warnings"])
    stored = WorkPackage.objects.filter(project=cast.project).order_by("sort_order")
    assert list(stored.values_list("name", flat=True)) == names
    entries = AuditEntry.objects.filter(kind="work_package.created")
    assert entries.count() == 2 and {e.channel for e in entries} == {"agent"}
    # A digest of the API's dry run of the same file commits too: the same pipeline.
    api = _api_dry_run(cast.lead, PLAN_XML.encode(), 2)
    done = run(
        cast.lead,
        "import_project_plan",
        {**PLAN, "outlineLevel": 2, "previewDigest": api["previewDigest"]},
    )
    assert done["created"] == 18


def test_a_changed_file_or_register_refuses_the_digest_and_imports_nothing(everyone):
    cast = everyone
    digest = run(cast.lead, "import_project_plan", PLAN)["previewDigest"]
    changed = PLAN_XML.replace("1. Discovery", "1. Discovery again")
    assert changed != PLAN_XML
    for arguments in (
        {**PLAN, "xml": changed},
        {**PLAN, "outlineLevel": 2},
        {**PLAN, "previewDigest": "0" * 64},
    ):
        with pytest.raises(Conflict) as refused:
            run(cast.lead, "import_project_plan", {"previewDigest": digest, **arguments})
        assert "would now differ from the preview you checked" in refused.value.message
    assert not WorkPackage.objects.filter(project=cast.project).exists()


def test_only_editors_import_and_an_outsider_is_not_told_the_project(everyone):
    cast = everyone
    for who in (cast.viewer, cast.sponsor, cast.site_admin):
        with pytest.raises(Forbidden) as refused:
            run(who, "import_project_plan", PLAN)
        assert "Project Lead and the editors they nominate" in refused.value.message
    with pytest.raises(NotFound) as hidden:
        run(cast.outsider, "import_project_plan", PLAN)
    assert "Alpha programme" not in json.dumps(hidden.value.body())
    cast.project.approval_status = "Archived"
    cast.project.save(update_fields=["approval_status"])
    with pytest.raises(Frozen):  # frozen registers (409), before the file is read
        run(cast.lead, "import_project_plan", {**PLAN, "xml": "not a plan"})


@pytest.mark.parametrize(
    "xml, message",
    [
        ("name,plannedStartDate\nBuild,2027-01-04\n", "not well-formed XML"),
        ("<Project><Tasks/></Project>", mspdi.NOT_MSPDI),
        # An .mpp read as text, byte for byte (Latin-1) or with its undecodable bytes replaced.
        ((mspdi.OLE2_MAGIC + b"\0" * 40).decode("latin-1"), mspdi.MPP_MESSAGE),
        ((mspdi.OLE2_MAGIC + b"\0" * 40).decode("utf-8", "replace"), mspdi.MPP_MESSAGE),
    ],
)
def test_what_is_not_a_plan_is_refused_in_the_importers_words(everyone, xml, message):
    with pytest.raises(ValidationFailed) as refused:
        run(everyone.lead, "import_project_plan", {**PLAN, "xml": xml})
    assert list(refused.value.fields) == ["xml"]
    assert message in refused.value.fields["xml"][0]
    with pytest.raises(Forbidden):  # the gates first
        run(everyone.viewer, "import_project_plan", {**PLAN, "xml": xml})


def test_the_arguments_are_checked_and_the_size_is_the_importers(everyone, monkeypatch):
    lead = everyone.lead
    for arguments, field in (
        ({**PLAN, "outlineLevel": 0}, "outlineLevel"),
        ({**PLAN, "outlineLevel": "2"}, "outlineLevel"),
        ({**PLAN, "previewDigest": "yes"}, "previewDigest"),
        ({**PLAN, "xml": ""}, "xml"),
        ({"projectKey": "ALPHA"}, "xml"),
        ({**PLAN, "file": "plan.xml"}, "file"),
    ):
        with pytest.raises(ValidationFailed) as refused:
            run(lead, "import_project_plan", arguments)
        assert field in refused.value.fields, arguments
    schema = catalogue.get("import_project_plan").schema["properties"]["xml"]
    assert schema["maxLength"] == uploads.MAX_BYTES
    # Over the limit in characters: refused without the text sent back.
    with pytest.raises(ValidationFailed) as refused:
        run(lead, "import_project_plan", {**PLAN, "xml": "<" + "x" * uploads.MAX_BYTES})
    assert refused.value.fields == {"xml": [f"At most {uploads.MAX_BYTES:,} characters."]}
    # Within it in characters but over it in UTF-8 bytes: the importer's own refusal.
    monkeypatch.setattr(uploads, "MAX_BYTES", len(PLAN_XML.encode()) - 1)
    with pytest.raises(ValidationFailed) as refused:
        run(lead, "import_project_plan", PLAN)
    assert refused.value.fields == {"xml": ["At most 0 MB per file."]}


# --- hostile values over the new arguments ----------------------------------------------------


@pytest.mark.parametrize(
    "xml",
    ["<Project>\ud800</Project>", "<Project>\x00</Project>", "<Project>\ufffe</Project>"],
    ids=["lone surrogate", "NUL", "non-character"],
)
def test_a_plan_text_holding_a_hostile_character_is_refused_naming_xml(everyone, xml):
    with pytest.raises(ValidationFailed) as refused:
        run(everyone.lead, "import_project_plan", {**PLAN, "xml": xml})
    assert list(refused.value.fields) == ["xml"]
    assert not WorkPackage.objects.filter(project=everyone.project).exists()


@pytest.mark.parametrize(
    "level", [2**31, 2**63, 10**400, float("nan"), float("inf"), -1, 1.5, True, None]
)
def test_a_hostile_outline_level_is_refused_naming_it(everyone, level):
    with pytest.raises(ValidationFailed) as refused:
        run(everyone.lead, "import_project_plan", {**PLAN, "outlineLevel": level})
    assert "outlineLevel" in refused.value.fields


@pytest.mark.parametrize("comment", ["a\ud800", "x" * 10_000_000], ids=["lone surrogate", "10 MB"])
def test_a_hostile_decision_comment_is_refused_naming_it(everyone, reported, comment):
    with pytest.raises(ValidationFailed) as refused:
        run(
            everyone.sponsor,
            "decide_project_exception",
            {
                "projectKey": "ALPHA",
                "decision": "Kill",
                "comment": comment,
                "expectedRevision": reported["revision"],
            },
        )
    assert "comment" in refused.value.fields
    assert ProjectException.objects.get().state == "Reported"
