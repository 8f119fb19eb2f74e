"""Every page form reads the revision it was rendered at through one function
(governance.http.form_revision). A revision it cannot read (letters, a superscript or
Arabic-Indic digit, a sign, a fraction, more digits than a 64-bit column holds) is refused as
stale, in its place after the caller's 403: the write is never applied unchecked."""

import re
from pathlib import Path

import pytest
from django.http import QueryDict

from charter.models import BusinessCase
from config.layers import APPS
from governance.http import UNREADABLE_REVISION, form_revision
from registers.models import Risk, WorkPackage
from status.models import ProjectStatus
from tests.factories import RiskFactory, WorkPackageFactory

ROOT = Path(__file__).resolve().parents[2]
UNREADABLE = ["abc", "²", "٣", "-1", "+2", "1.0", "1e3", " 1", "0x1", "9" * 25, "1\x00"]
HX = {"HTTP_HX_REQUEST": "true"}


def _post(raw: str | None) -> QueryDict:
    post = QueryDict(mutable=True)
    if raw is not None:
        post["revision"] = raw
    return post


def test_what_the_function_reads():
    assert form_revision(_post(None)) is None  # a create sends none
    assert form_revision(_post("")) is None
    assert form_revision(_post("7")) == 7
    assert form_revision(_post("0007")) == 7
    for raw in UNREADABLE:
        assert form_revision(_post(raw)) == UNREADABLE_REVISION, raw


def test_no_other_module_reads_a_forms_revision():
    """The one reader: no view or form module reads `revision` from a POST itself."""
    pattern = re.compile(r"""(?:POST|post)(?:\.get\(|\[)\s*["']revision["']""")
    found = []
    for folder in APPS:
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "http.py" and path.parent.name == "governance":
                continue
            if pattern.search(path.read_text()):
                found.append(str(path.relative_to(ROOT)))
    assert not found, found


def _status(cast):
    ProjectStatus.objects.get_or_create(project=cast.project)
    return ProjectStatus.objects.get(project=cast.project)


FORMS = {
    # name: (setup(cast) -> record, url(record), form data, the field the write would change)
    "status edit": (
        _status,
        lambda r: "/projects/ALPHA/status/edit/",
        {"overallRag": "Red"},
        lambda r: ProjectStatus.objects.get(pk=r.pk).overall_rag,
    ),
    "work package row": (
        lambda cast: WorkPackageFactory(project=cast.project, name="Build"),
        lambda r: f"/projects/ALPHA/registers/work-packages/{r.pk}/",
        {"name": "Rebuilt"},
        lambda r: WorkPackage.objects.get(pk=r.pk).name,
    ),
    "risk delete": (
        lambda cast: RiskFactory(project=cast.project, title="Outage"),
        lambda r: f"/projects/ALPHA/registers/risks/{r.pk}/delete/",
        {},
        lambda r: Risk.objects.filter(pk=r.pk).exists(),
    ),
    "business case thesis": (
        lambda cast: BusinessCase.objects.create(project=cast.project, approval_status="Draft"),
        lambda r: "/projects/ALPHA/charter/edit/thesis/",
        {"businessProblem": "Claims are slow"},
        lambda r: BusinessCase.objects.get(pk=r.pk).business_problem,
    ),
}


@pytest.mark.parametrize("name", sorted(FORMS))
@pytest.mark.parametrize("raw", UNREADABLE[:4] + UNREADABLE[-2:])
def test_an_unreadable_revision_writes_nothing(name, raw, cast, client_for):
    setup, url, data, read = FORMS[name]
    record = setup(cast)
    before = read(record)
    response = client_for(cast.lead).post(url(record), {**data, "revision": raw}, **HX)
    # (a control character is refused for itself, 422, before any form reads it)
    expected = (422,) if "\x00" in raw else (409, 412)
    assert response.status_code in expected, (response.status_code, response.content[:300])
    assert read(record) == before


def test_a_viewer_with_an_unreadable_revision_hears_403(cast, client_for):
    status = _status(cast)
    response = client_for(cast.viewer).post(
        "/projects/ALPHA/status/edit/", {"overallRag": "Red", "revision": "abc"}, **HX
    )
    assert response.status_code == 403
    assert ProjectStatus.objects.get(pk=status.pk).overall_rag == status.overall_rag
