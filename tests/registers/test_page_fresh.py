"""The register page is rendered for each request from the stored rows: every change of what
it shows is seen at once, each response carries its own CSRF token, and the project's
`registers_revision` is raised by every write of the registers."""

import re

import pytest
from django.core.cache import cache

from governance import permissions
from governance.models import Project
from governance.tracker.local.models import LocalAccount, LocalBrowseGrant
from registers import services
from registers.services.work_packages import mark_issue_link_broken
from tests.factories import RiskFactory, WorkPackageFactory

pytestmark = pytest.mark.django_db

BASE = "/projects/ALPHA/registers"
REGISTERS = ["work-packages", "risks", "decisions", "changes"]


def _caller(cast, user=None):
    return permissions.caller_for(user or cast.lead, cast.project, can_browse=True)


def _revision(cast) -> int:
    return Project.objects.get(pk=cast.project.pk).registers_revision


def _get(client, url):
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def _scrub(html: str) -> str:
    html = re.sub(r'nonce="[^"]+"', "", html)
    return re.sub(r"\b[A-Za-z0-9]{64}\b", "<csrf>", html)


def test_every_response_carries_its_own_csrf_token(cast, client_for):
    WorkPackageFactory.create_batch(2, project=cast.project)
    client = client_for(cast.lead)
    tokens = []
    for _ in range(2):
        page = _get(client, f"{BASE}/work-packages/")
        table = page.split('id="register-table"')[1]
        values = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', table)
        assert values and len(set(values)) == 1 and "<!--csrf-input-->" not in page
        tokens.append(values[0])
    assert tokens[0] != tokens[1]  # masked afresh per response


def test_writes_through_the_services_show_at_once(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Old name")
    client = client_for(cast.lead)
    _get(client, f"{BASE}/work-packages/")
    before = _revision(cast)
    services.work_package_update(caller=_caller(cast), wp_id=wp.pk, data={"name": "New name"})
    assert _revision(cast) != before
    page = _get(client, f"{BASE}/work-packages/")
    assert "New name" in page and "Old name" not in page
    # Another register's write changes this page's tab counts.
    services.risk_create(caller=_caller(cast), data={"title": "Fresh risk"})
    page = _get(client, f"{BASE}/work-packages/")
    assert re.search(r"Risks <span class=\"count\" aria-label=\"1 row\">1</span>", page)
    services.work_package_delete(caller=_caller(cast), wp_id=wp.pk, expected_revision=None)
    page = _get(client, f"{BASE}/work-packages/")
    assert "New name" not in page


def test_bulk_writes_raise_the_revision_too(cast, client_for):
    first = WorkPackageFactory(project=cast.project, name="First", sort_order=1)
    WorkPackageFactory(project=cast.project, name="Second", sort_order=2)
    client = client_for(cast.lead)
    page = _get(client, f"{BASE}/work-packages/")
    assert page.index("First") < page.index("Second")
    services.work_package_move(caller=_caller(cast), wp_id=first.pk, direction="down")
    page = _get(client, f"{BASE}/work-packages/")
    assert page.index("Second") < page.index("First")

    first.refresh_from_db()
    first.linked_issue_keys = ["ALPHA-1"]
    first.save()
    _get(client, f"{BASE}/work-packages/")
    before = _revision(cast)
    mark_issue_link_broken(issue_key="ALPHA-1", reason="deleted", project_key="ALPHA")
    assert _revision(cast) != before


def test_a_revision_never_comes_back(cast):
    """A restored backup written to again must not meet the body cached for other content."""
    seen = {_revision(cast)}
    for n in range(5):
        WorkPackageFactory(project=cast.project, name=f"Row {n}")
        seen.add(_revision(cast))
    assert len(seen) == 6 and all(0 < r < 2**63 for r in seen)


def test_a_hostile_name_cannot_move_the_body(cast, client_for):
    Project.objects.filter(pk=cast.project.pk).update(name="<!--register-body--><!--csrf-input-->")
    WorkPackageFactory(project=cast.project, name="<!--csrf-input--><!--register-body-->")
    client = client_for(cast.lead)
    for _ in range(2):
        page = _get(client, f"{BASE}/work-packages/")
        assert page.count("&lt;!--register-body--&gt;") >= 2  # the name, the row
        assert "<!--register-body-->" not in page and "<!--csrf-input-->" not in page


def test_a_write_that_fails_leaves_the_revision(cast):
    from django.db import transaction

    before = _revision(cast)
    with pytest.raises(RuntimeError), transaction.atomic():
        WorkPackageFactory(project=cast.project)
        raise RuntimeError
    assert _revision(cast) == before


def test_saving_a_project_read_earlier_never_puts_the_revision_back(cast):
    stale = Project.objects.get(pk=cast.project.pk)
    WorkPackageFactory(project=cast.project)
    raised = _revision(cast)
    assert raised != stale.registers_revision
    stale.name = "Renamed"
    stale.save()  # the project's row announces its own change: a new stamp, never the old
    assert _revision(cast) not in (raised, stale.registers_revision)
    assert Project.objects.get(pk=cast.project.pk).name == "Renamed"


def test_a_business_case_change_raises_the_revision(cast):
    from charter.models import BusinessCase

    case, _ = BusinessCase.objects.get_or_create(project=cast.project)
    before = _revision(cast)
    case.plan_baseline = {"version": 1, "workPackages": {}, "totalBudget": "0"}
    case.save()
    assert _revision(cast) != before


def test_a_viewer_never_receives_the_leads_edit_markup(cast, client_for):
    WorkPackageFactory(project=cast.project, name="Shared row")
    lead_page = _get(client_for(cast.lead), f"{BASE}/work-packages/")
    viewer_page = _get(client_for(cast.viewer), f"{BASE}/work-packages/")
    assert "Delete<span" in lead_page and "Add work package" in lead_page
    assert "Delete<span" not in viewer_page and "Add work package" not in viewer_page
    assert "hx-post" not in viewer_page.split('id="register-tabs"')[1]


def test_a_withdrawn_nomination_or_grant_takes_effect_at_once(cast, client_for):
    WorkPackageFactory(project=cast.project, name="Row")
    client = client_for(cast.editor)
    page = _get(client, f"{BASE}/work-packages/")
    assert "Delete<span" in page
    cast.project.editor_nominations.filter(account_id=cast.editor.account_id).delete()
    page = _get(client, f"{BASE}/work-packages/")
    assert "Delete<span" not in page
    LocalBrowseGrant.objects.filter(account__account_id=cast.editor.account_id).delete()
    assert client.get(f"{BASE}/work-packages/").status_code == 404


def test_a_new_display_name_shows_at_once_when_the_people_cache_has_it(cast, client_for):
    from governance import people

    WorkPackageFactory(project=cast.project, name="Owned", owner_account_id=cast.editor.account_id)
    client = client_for(cast.lead)
    page = _get(client, f"{BASE}/work-packages/")
    assert "Eddie Editor" in page
    LocalAccount.objects.filter(account_id=cast.editor.account_id).update(
        display_name="Edwina Editor"
    )
    cache.delete(people._PREFIX + cast.editor.account_id)  # resolved again from the tracker
    page = _get(client, f"{BASE}/work-packages/")
    assert "Edwina Editor" in page and "Eddie Editor" not in page.split('id="register-tabs"')[1]


def test_the_compressed_page_is_the_page(cast, client_for, settings):
    import gzip

    WorkPackageFactory.create_batch(3, project=cast.project)
    client = client_for(cast.lead)
    url = f"{BASE}/work-packages/"
    plain = _get(client, url)
    for level in (1, 6):
        settings.GZIP_LEVEL = level
        for _ in range(2):
            answer = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
            assert answer["Content-Encoding"] == "gzip"
            assert int(answer["Content-Length"]) == len(answer.content)
            html = gzip.decompress(answer.content).decode()
            assert _scrub(html) == _scrub(plain)
            assert len(set(re.findall(r'csrfmiddlewaretoken" value="([^"]+)"', html))) == 2


def test_the_htmx_table_and_the_full_page_are_told_apart(cast, client_for):
    """A filter request (HX-Request) answers the table alone, never the cached full page, and
    both answers say they vary on HX-Request and Accept-Encoding."""
    RiskFactory(project=cast.project, title="Late supplier")
    client = client_for(cast.lead)
    url = f"{BASE}/risks/?q=Late"
    full = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    table = client.get(url, HTTP_HX_REQUEST="true")
    again = client.get(url)
    for response in (full, table, again):
        vary = {v.strip().lower() for v in response["Vary"].split(",")}
        assert {"hx-request", "accept-encoding"} <= vary
    assert table.content.lstrip().startswith(b'<div id="register-table"')
    assert b"Late supplier" in table.content and b"<html" not in table.content
    assert b"<html" in again.content and b"Late supplier" in again.content
