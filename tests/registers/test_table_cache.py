"""The rendered register table is cached under a digest of everything it shows, so a second
view is served without rendering the rows again, and any change shows at once."""

import re
from unittest import mock

import pytest

from governance.tracker.local.models import LocalAccount
from registers import services
from registers.views import base
from tests.factories import ChangeRequestFactory, DecisionFactory, RiskFactory, WorkPackageFactory

BASE = "/projects/ALPHA/registers"
HX = {"HTTP_HX_REQUEST": "true"}
REGISTERS = ["work-packages", "risks", "decisions", "changes"]


def _fill(cast):
    WorkPackageFactory(
        project=cast.project, name="Alpha build", owner_account_id=cast.lead.account_id
    )
    RiskFactory(project=cast.project, title="Alpha risk")
    DecisionFactory(project=cast.project, decision="Alpha decision")
    ChangeRequestFactory(project=cast.project, summary="Alpha change")


def _renders(client, url, **extra):
    """The response and how many times the table partial was rendered for it."""
    with mock.patch.object(base, "render_to_string", wraps=base.render_to_string) as render:
        response = client.get(url, **extra)
    assert response.status_code == 200
    tables = [c for c in render.call_args_list if c.args[0].endswith("#table")]
    return response.content.decode(), len(tables)


CSRF_INPUT = '<input type="hidden" name="csrfmiddlewaretoken" value="[^"]+">'


def _csrf_values(html: str) -> list[str]:
    return re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)


@pytest.mark.parametrize("register", REGISTERS)
def test_the_second_view_comes_from_the_cache_and_reads_the_same(cast, client_for, register):
    _fill(cast)
    client = client_for(cast.lead)
    first, rendered_first = _renders(client, f"{BASE}/{register}/")
    second, rendered_second = _renders(client, f"{BASE}/{register}/")
    assert (rendered_first, rendered_second) == (1, 0)
    scrub = lambda html: re.sub(r"\b[A-Za-z0-9]{64}\b", "<csrf>", html)  # noqa: E731
    assert scrub(first) == scrub(second)
    partial, rendered_partial = _renders(client, f"{BASE}/{register}/", **HX)
    assert rendered_partial == 0
    assert scrub(partial).strip() in scrub(second)


def test_each_response_carries_its_own_csrf_token_in_the_forms_rows_submit(cast, client_for):
    WorkPackageFactory.create_batch(3, project=cast.project)
    client = client_for(cast.lead)
    first, _ = _renders(client, f"{BASE}/work-packages/")
    second, rendered = _renders(client, f"{BASE}/work-packages/")
    assert rendered == 0
    assert "<!--csrf-input-->" not in second
    table = second[second.index('<div id="register-table"') :]
    tokens = _csrf_values(table)
    # The rows' move and delete buttons submit the table's shared forms, which carry it.
    assert len(tokens) >= 2
    for form in ("wp-move-form", "wp-row-post"):
        assert re.search(rf'<form id="{form}"[^>]*>{CSRF_INPUT}', table)
        assert table.count(f'form="{form}"') >= 3
    assert len(set(tokens)) == 1
    assert tokens[0] not in _csrf_values(first)
    # The token works: a move posted with it from the cached page is accepted.
    wp_id = re.search(r'<tr id="wp-([0-9a-f-]{36})"', second).group(1)
    client.handler.enforce_csrf_checks = True
    moved = client.post(
        f"{BASE}/work-packages/{wp_id}/move/",
        {"direction": "down", "csrfmiddlewaretoken": tokens[0]},
        **HX,
    )
    assert moved.status_code == 200


def test_an_edit_shows_at_once(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Old name")
    client = client_for(cast.lead)
    _renders(client, f"{BASE}/work-packages/")
    services.work_package_update(
        caller=_caller(cast),
        wp_id=wp.pk,
        data={"name": "New name"},
    )
    page, rendered = _renders(client, f"{BASE}/work-packages/")
    assert rendered == 1
    assert "New name" in page and "Old name" not in page


def test_a_reorder_without_other_changes_shows_at_once(cast, client_for):
    first = WorkPackageFactory(project=cast.project, name="First", sort_order=1)
    WorkPackageFactory(project=cast.project, name="Second", sort_order=2)
    client = client_for(cast.lead)
    page, _ = _renders(client, f"{BASE}/work-packages/")
    assert page.index("First") < page.index("Second")
    services.work_package_move(caller=_caller(cast), wp_id=first.pk, direction="down")
    page, rendered = _renders(client, f"{BASE}/work-packages/")
    assert rendered == 1
    assert page.index("Second") < page.index("First")


def test_a_new_display_name_shows_once_resolved_again(cast, client_for):
    from django.core.cache import cache

    WorkPackageFactory(project=cast.project, name="Owned", owner_account_id=cast.editor.account_id)
    client = client_for(cast.lead)
    page, _ = _renders(client, f"{BASE}/work-packages/")
    assert "Eddie Editor" in page
    LocalAccount.objects.filter(account_id=cast.editor.account_id).update(
        display_name="Edwina Editor"
    )
    cache.clear()  # the people cache expires (PEOPLE_CACHE_SECONDS); the table goes with it
    page, rendered = _renders(client, f"{BASE}/work-packages/")
    assert "Edwina Editor" in page and rendered == 1


def test_viewer_and_lead_never_share_a_table(cast, client_for):
    WorkPackageFactory(project=cast.project, name="Shared row")
    lead_page, _ = _renders(client_for(cast.lead), f"{BASE}/work-packages/")
    viewer_page, rendered = _renders(client_for(cast.viewer), f"{BASE}/work-packages/")
    assert rendered == 1
    assert "Delete<span" in lead_page and "Delete<span" not in viewer_page


def test_filters_and_sorting_are_tables_of_their_own(cast, client_for):
    WorkPackageFactory(project=cast.project, name="Blocked one", status="Blocked", progress=20)
    WorkPackageFactory(project=cast.project, name="Open one", status="In Progress", progress=50)
    client = client_for(cast.viewer)
    _renders(client, f"{BASE}/work-packages/")
    filtered, rendered = _renders(client, f"{BASE}/work-packages/?status=Blocked", **HX)
    assert rendered == 1
    assert "Blocked one" in filtered and "Open one" not in filtered


def _caller(cast):
    from governance import permissions

    return permissions.caller_for(cast.lead, cast.project, can_browse=True)


def _pictures_drawn(client, url):
    """The response and how many times the register's pictures were rendered for it."""
    with mock.patch.object(base, "render_to_string", wraps=base.render_to_string) as render:
        response = client.get(url)
    assert response.status_code == 200
    drawn = [c for c in render.call_args_list if c.args[0] == "charts/_pictures.html"]
    return response.content.decode(), len(drawn)


@pytest.mark.parametrize("register", ["work-packages", "risks"])
def test_the_pictures_are_drawn_once_and_shared_by_every_reader(cast, client_for, register):
    _fill(cast)
    lead_page, drawn_first = _pictures_drawn(client_for(cast.lead), f"{BASE}/{register}/")
    viewer_page, drawn_again = _pictures_drawn(client_for(cast.viewer), f"{BASE}/{register}/")
    assert (drawn_first, drawn_again) == (1, 0)
    pictures = lambda html: html.split('<section class="pictures"')[1].split("</section>")[0]  # noqa: E731
    assert pictures(lead_page) == pictures(viewer_page)
    # Filters narrow the table, not the pictures (drawn from every record): the same drawing.
    filtered, drawn = _pictures_drawn(client_for(cast.lead), f"{BASE}/{register}/?q=nothing")
    assert drawn == 0 and pictures(filtered) == pictures(lead_page)


def test_an_edit_redraws_the_pictures_at_once(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Alpha build")
    client = client_for(cast.lead)
    before, _ = _pictures_drawn(client, f"{BASE}/risks/")
    RiskFactory(project=cast.project, title="Alpha risk", impact=5, likelihood=4)
    after, drawn = _pictures_drawn(client, f"{BASE}/risks/")
    assert drawn == 1 and before != after
    services.work_package_update(
        caller=_caller(cast),
        wp_id=wp.pk,
        data={"plannedStartDate": "2026-01-05", "plannedEndDate": "2026-03-01"},
    )
    page, drawn = _pictures_drawn(client, f"{BASE}/work-packages/")
    assert drawn == 1 and "5 Jan 2026" in page.split('<section class="pictures"')[1]


def test_a_new_day_redraws_the_pictures(cast, client_for):
    import datetime as dt

    WorkPackageFactory(project=cast.project, name="Alpha build")
    client = client_for(cast.lead)
    _, drawn = _pictures_drawn(client, f"{BASE}/work-packages/")
    assert drawn == 1
    tomorrow = base.timezone.localdate() + dt.timedelta(days=1)
    with mock.patch.object(base.timezone, "localdate", return_value=tomorrow):
        _, drawn = _pictures_drawn(client, f"{BASE}/work-packages/")
    assert drawn == 1


def test_readers_with_other_rights_share_the_drawing_of_a_materialised_risk(cast, client_for):
    """The pictures' key holds the stored values only: a risk whose decision the lead may
    record (a value derived for the reader) still gives every reader the same drawing."""
    RiskFactory(project=cast.project, title="Alpha risk", materialised=True, impact=4)
    lead_page, drawn = _pictures_drawn(client_for(cast.lead), f"{BASE}/risks/")
    viewer_page, drawn_again = _pictures_drawn(client_for(cast.viewer), f"{BASE}/risks/")
    assert (drawn, drawn_again) == (1, 0)
    pictures = lambda html: html.split('<section class="pictures"')[1].split("</section>")[0]  # noqa: E731
    assert pictures(lead_page) == pictures(viewer_page)


def test_a_table_swap_draws_no_pictures(cast, client_for):
    _fill(cast)
    client = client_for(cast.lead)
    with mock.patch.object(base, "render_to_string", wraps=base.render_to_string) as render:
        response = client.get(f"{BASE}/risks/?q=Alpha", **HX)
    assert response.status_code == 200
    assert not [c for c in render.call_args_list if c.args[0] == "charts/_pictures.html"]
    assert 'class="pictures"' not in response.content.decode()


def test_a_work_package_shown_again_unchanged_is_not_derived_again(cast, settings, monkeypatch):
    from registers import selectors, tables

    monkeypatch.setattr(tables, "_DISPLAY", {})
    WorkPackageFactory.create_batch(3, project=cast.project)
    spec = tables.SPECS["work-packages"]
    derive = mock.Mock(wraps=spec.decorate)
    monkeypatch.setattr(spec, "decorate", derive)

    def decorated():
        records = selectors.work_packages(cast.project)
        tables.decorate("work-packages", records, {}, None, {"plan": None}, "/wp/")
        return records

    first = decorated()
    second = decorated()  # fresh instances, the same stored values: from the memo
    assert derive.call_count == 3
    for a, b in zip(first, second, strict=True):
        assert (a.planned_text, a.budget_text, a.url) == (b.planned_text, b.budget_text, b.url)
        assert tables.derived_text(a) == tables.derived_text(b) is not None
    # A stored value changed: that row is derived again, the others are not.
    changed = second[0]
    type(changed).objects.filter(pk=changed.pk).update(budget=123456)
    again = {r.pk: r for r in decorated()}
    assert derive.call_count == 4 and "123,456" in again[changed.pk].budget_text
    # The same instance decorated twice is derived as is, with no kept text.
    tables.decorate("work-packages", [again[changed.pk]], {}, None, {"plan": None}, "/wp/")
    assert derive.call_count == 5 and tables.derived_text(again[changed.pk]) is None
    # Another `extra` or date format: derived again.
    tables.decorate("work-packages", selectors.work_packages(cast.project), {}, None, {}, "/")
    assert derive.call_count == 8
    settings.DATE_FORMAT = "Y-m-d"
    assert tables._DISPLAY == {}


def test_the_process_keeps_the_tables_it_served_under_the_same_keys(cast, client_for):
    _fill(cast)
    client = client_for(cast.lead)
    first, rendered = _renders(client, f"{BASE}/work-packages/")
    assert rendered == 1
    real_get = base.shared_cache.get
    with mock.patch.object(base.shared_cache, "get", wraps=real_get) as shared_get:
        second, rendered = _renders(client, f"{BASE}/work-packages/")
    assert rendered == 0 and not any(
        c.args[0].startswith("registers:table:") for c in shared_get.call_args_list
    )
    scrub = lambda html: re.sub(r"\b[A-Za-z0-9]{64}\b", "<csrf>", html)  # noqa: E731
    assert scrub(first) == scrub(second)
    # Bounded: a table over the bound is not kept; reaching it empties the memo.
    base._keep_table("big", "x" * (base._TABLES_MAX_CHARS + 1))
    assert "big" not in base._TABLES and base._TABLES == {}
