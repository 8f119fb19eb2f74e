"""Each rendered register row is kept by the process under every input of the table but its
rows and the row's own values: after a change of one row the table is rendered again from the
other rows' kept HTML, and what each row shows is still what a fresh rendering shows."""

import re
from unittest import mock

import pytest
from django.core.cache import cache as shared_cache

from governance import people
from governance.tracker.local.models import LocalAccount
from registers.revision import bump_registers_revision
from registers.views import base
from tests.factories import ChangeRequestFactory, DecisionFactory, RiskFactory, WorkPackageFactory

BASE = "/projects/ALPHA/registers"
FACTORIES = {
    "work-packages": (WorkPackageFactory, "name"),
    "risks": (RiskFactory, "title"),
    "decisions": (DecisionFactory, "decision"),
    "changes": (ChangeRequestFactory, "summary"),
}


@pytest.fixture(autouse=True)
def _empty_process_caches():
    base._ROWS.clear()
    base._TABLES.clear()
    base._BODIES.clear()


def _rows_rendered(client, url):
    """The page and how many rows were rendered for it (not taken from the row cache)."""
    real = base.make_context
    counted = []

    def counting(*args, **kwargs):
        context = real(*args, **kwargs)
        push = context.push

        def counted_push(*a, **k):
            if "r" in k:
                counted.append(k["r"])
            return push(*a, **k)

        context.push = counted_push
        return context

    with mock.patch.object(base, "make_context", counting):
        response = client.get(url)
    assert response.status_code == 200
    return response.content.decode(), len(counted)


def _tbody(html: str) -> str:
    """The register table's rows."""
    table = html[html.index('<div id="register-table"') :]
    return table[table.index("<tbody") : table.index("</tbody>")]


@pytest.mark.parametrize("register", list(FACTORIES))
def test_after_a_change_of_one_row_only_that_row_is_rendered(cast, client_for, register):
    factory, field = FACTORIES[register]
    records = [factory(project=cast.project, **{field: f"Row {n:02d}"}) for n in range(12)]
    client = client_for(cast.lead)
    _, rendered = _rows_rendered(client, f"{BASE}/{register}/")
    assert rendered == 12
    type(records[3]).objects.filter(pk=records[3].pk).update(**{field: "Row changed"})
    bump_registers_revision(project_ids=[cast.project.pk])
    second, rendered = _rows_rendered(client, f"{BASE}/{register}/")
    assert rendered == 1
    assert "Row changed" in second and "Row 03" not in second
    # The same table as a rendering with no row kept.
    base._ROWS.clear()
    base._TABLES.clear()
    base._BODIES.clear()
    shared_cache.clear()
    bump_registers_revision(project_ids=[cast.project.pk])
    fresh, rendered = _rows_rendered(client, f"{BASE}/{register}/")
    assert rendered == 12
    scrub = lambda html: re.sub(r"\b[A-Za-z0-9]{64}\b", "<csrf>", html)  # noqa: E731
    assert scrub(_tbody(second)) == scrub(_tbody(fresh))


def test_a_viewer_never_gets_the_rows_a_lead_was_shown(cast, client_for):
    WorkPackageFactory.create_batch(3, project=cast.project)
    lead_page, rendered = _rows_rendered(client_for(cast.lead), f"{BASE}/work-packages/")
    assert rendered == 3 and "Delete<span" in _tbody(lead_page)
    viewer_page, rendered = _rows_rendered(client_for(cast.viewer), f"{BASE}/work-packages/")
    assert rendered == 3
    assert "Delete<span" not in _tbody(viewer_page)
    assert "hx-get" not in _tbody(viewer_page)


def test_a_changed_display_name_renders_the_rows_that_show_it(cast, client_for):
    WorkPackageFactory(project=cast.project, name="Owned", owner_account_id=cast.lead.account_id)
    WorkPackageFactory(project=cast.project, name="Unowned", owner_account_id=None)
    client = client_for(cast.viewer)
    first, _ = _rows_rendered(client, f"{BASE}/work-packages/")
    LocalAccount.objects.filter(account_id=cast.lead.account_id).update(display_name="Renamed Lead")
    people.forget([cast.lead.account_id])
    bump_registers_revision(project_ids=[cast.project.pk])
    second, _ = _rows_rendered(client, f"{BASE}/work-packages/")
    assert "Renamed Lead" in _tbody(second)
    assert "Renamed Lead" not in _tbody(first)


def test_a_row_being_edited_is_neither_kept_nor_read(cast, client_for):
    package = WorkPackageFactory(project=cast.project, name="Being edited")
    client = client_for(cast.lead)
    _rows_rendered(client, f"{BASE}/work-packages/")
    kept = dict(base._ROWS)
    response = client.get(f"{BASE}/work-packages/{package.pk}/edit/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert kept == base._ROWS
