"""A preview answers only for its own import: its digest is tied to the project, the
register and the person (a digest from another one is 409 in words that say which), at
every door that commits with one (the API, the assistant's plan import; the page keeps its
digest server-side under the person's token). The page keeps a bounded number of previews
per person in the shared cache, and says so when a replaced one is confirmed."""

import re

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from agent import catalogue
from governance.errors import Conflict
from registers.models import Decision, WorkPackage
from registers.services import imports
from registers.views.imports import PREVIEWS_PER_PERSON
from tests.agent.conftest import EVERYONE, PLAN_XML, use_group
from tests.factories import ProjectFactory, nominate

pytestmark = pytest.mark.django_db

CSV = b"name\nSurvey\n"


@pytest.fixture
def beta(cast):
    project = ProjectFactory(key="BETA", name="Beta", lead=cast.lead, browsers=[cast.editor])
    nominate(project, cast.editor)
    return project


def _post(bearer, user, key, register, content, name="f.csv", **data):
    query = "?dryRun=true" if data.pop("dry", False) else ""
    return Client().post(
        f"/api/v1/projects/{key}/{register}/import{query}",
        {"file": SimpleUploadedFile(name, content), **data},
        **bearer(user),
    )


def _digest(bearer, user, key, register, content, name="f.csv") -> str:
    answer = _post(bearer, user, key, register, content, name, dry=True)
    assert answer.status_code == 200, answer.content
    return answer.json()["previewDigest"]


def test_a_digest_from_another_project_register_or_person_is_refused_saying_which(
    cast, beta, bearer
):
    mine = _digest(bearer, cast.lead, "ALPHA", "work-packages", CSV)
    assert re.fullmatch(r"[0-9a-f]{64}", mine)
    cases = [
        (_digest(bearer, cast.lead, "BETA", "work-packages", CSV), "in another project"),
        (_digest(bearer, cast.editor, "ALPHA", "work-packages", CSV), "by another person"),
        (
            _digest(bearer, cast.lead, "ALPHA", "risks", b"title\nSurvey\n"),
            "for another register",
        ),
    ]
    for digest, words in cases:
        answer = _post(bearer, cast.lead, "ALPHA", "work-packages", CSV, previewDigest=digest)
        assert answer.status_code == 409, answer.content
        message = answer.json()["error"]["message"]
        assert f"is of a preview made {words}" in message
        assert "ALPHA's work-packages" in message and "Nothing was imported" in message
    # A made-up digest, or one of the same file since changed, is the stale preview.
    for digest in ("0" * 64, mine[:-1] + ("1" if mine[-1] != "1" else "2"), "é" * 64):
        answer = _post(bearer, cast.lead, "ALPHA", "work-packages", CSV, previewDigest=digest)
        assert answer.status_code == 409
        assert "would now differ from the preview you checked" in answer.json()["error"]["message"]
    assert not WorkPackage.objects.exists()
    done = _post(bearer, cast.lead, "ALPHA", "work-packages", CSV, previewDigest=mine)
    assert done.status_code == 201


def test_the_assistants_plan_import_refuses_a_digest_of_another_project_or_person(
    cast, beta, bearer
):
    from governance.tracker.local import scripting

    scripting.ensure_group(EVERYONE, members=["lead", "editor"])
    use_group(EVERYONE)
    plan = PLAN_XML.encode()
    other_project = _digest(bearer, cast.lead, "BETA", "work-packages", plan, "p.xml")
    other_person = _digest(bearer, cast.editor, "ALPHA", "work-packages", plan, "p.xml")
    ctx = catalogue.Context(request=catalogue.request_for(cast.lead), client="test")
    for digest, words in (
        (other_project, "in another project"),
        (other_person, "by another person"),
    ):
        with pytest.raises(Conflict) as refused:
            catalogue.run(
                ctx,
                "import_project_plan",
                {"projectKey": "ALPHA", "xml": PLAN_XML, "previewDigest": digest},
            )
        assert f"made {words}" in refused.value.message
    assert not WorkPackage.objects.exists()
    own = catalogue.run(ctx, "import_project_plan", {"projectKey": "ALPHA", "xml": PLAN_XML})
    done = catalogue.run(
        ctx,
        "import_project_plan",
        {"projectKey": "ALPHA", "xml": PLAN_XML, "previewDigest": own["previewDigest"]},
    )
    assert done["created"] == own["create"]


def test_the_service_digest_names_the_same_parts(cast, beta):
    from governance.permissions import caller_for

    here, there = caller_for(cast.lead, cast.project), caller_for(cast.lead, beta)
    outcome = "a" * 64
    mine = imports.preview_digest(outcome, here, "risks")
    assert imports.preview_digest(outcome, here, "risks") == mine
    refusal = imports.digest_refusal(
        imports.preview_digest(outcome, there, "risks"), mine, here, "risks"
    )
    assert "in another project" in refusal.message


# --- the page's previews, bounded per person --------------------------------------------------


def _page_preview(client, number: int) -> str:
    answer = client.post(
        "/projects/ALPHA/registers/decisions/import/",
        {"file": SimpleUploadedFile("d.csv", f"decision\nUse plan {number}\n".encode())},
    )
    assert answer.status_code == 200
    html = answer.content.decode()
    assert f"at most {PREVIEWS_PER_PERSON} previews at a time" in html
    return re.search(r'name="token" value="([^"]+)"', html)[1]


def test_a_person_keeps_a_bounded_number_of_previews_and_is_told_when_one_was_replaced(
    cast, client_for
):
    cache.clear()
    client = client_for(cast.lead)
    tokens = [_page_preview(client, n) for n in range(PREVIEWS_PER_PERSON + 2)]
    kept = [k for k in cache._cache if ":import-preview:" in k]  # locmem in tests
    assert len(kept) == PREVIEWS_PER_PERSON
    for token in tokens[:2]:
        refused = client.post("/projects/ALPHA/registers/decisions/import/", {"token": token})
        assert refused.status_code == 422
        assert "replaced by a newer one" in refused.content.decode()
        assert f"at most {PREVIEWS_PER_PERSON} import previews" in refused.content.decode()
    assert not Decision.objects.exists()
    # Another person's previews are their own: the lead's are not touched.
    other = client_for(cast.editor)
    _page_preview(other, 99)
    done = client.post("/projects/ALPHA/registers/decisions/import/", {"token": tokens[-1]})
    assert done.status_code == 302
    assert list(Decision.objects.values_list("decision", flat=True)) == [
        f"Use plan {PREVIEWS_PER_PERSON + 1}"
    ]
    # The editor cannot confirm the lead's token, whatever slot it names.
    for token in (tokens[-2], "0-x", "9-x", "x" * 200, "-", ""):
        refused = other.post("/projects/ALPHA/registers/decisions/import/", {"token": token})
        assert refused.status_code in (200, 422)
    assert Decision.objects.count() == 1
