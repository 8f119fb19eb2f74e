"""A register page shows 100 rows at a time, filtered, searched and sorted in SQL, and walks
its pages by keyset: every row once, in a stable order, whatever is added between two page
loads; the same queries on every page; the work packages' totals over every matching row."""

import html
import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registers.models import Risk, WorkPackage
from registers.paging import PAGE_SIZE
from registers.tables import money
from tests.registers.test_queries import fill

BASE = "/projects/ALPHA/registers"
HX = {"HTTP_HX_REQUEST": "true"}
ANCHORS = {"work-packages": "wp", "risks": "risk", "decisions": "decision", "changes": "change"}


def _page(client, url: str, register: str = "work-packages") -> tuple[list[str], str, str]:
    """The row ids a page shows, in order, and its next and previous links ('' for none)."""
    response = client.get(url)
    assert response.status_code == 200
    text = response.content.decode()
    table = text.split('id="register-table"', 1)[1]
    ids = re.findall(rf'<tr id="{ANCHORS[register]}-([0-9a-f-]{{36}})"', table)
    links = {}
    for rel in ("next", "prev"):
        found = re.search(rf'<a rel="{rel}" href="([^"]+)"', table)
        links[rel] = html.unescape(found.group(1)) if found else ""
    return ids, links["next"], links["prev"]


def _walk(client, register: str, query: str = "") -> list[str]:
    url = f"{BASE}/{register}/{query}"
    seen: list[str] = []
    while True:
        ids, next_link, _ = _page(client, url, register)
        assert len(ids) <= PAGE_SIZE
        seen.extend(ids)
        if not next_link:
            return seen
        assert len(ids) == PAGE_SIZE
        url = f"{BASE}/{register}/{next_link}"


@pytest.mark.parametrize("register", list(ANCHORS))
def test_every_row_once_across_the_pages_in_a_stable_order(cast, client_for, register):
    fill(cast, register, 230)
    model = {"work-packages": WorkPackage, "risks": Risk}.get(register)
    client = client_for(cast.lead)
    seen = _walk(client, register)
    assert len(seen) == len(set(seen))
    if model is not None:
        assert len(seen) == model.objects.filter(project=cast.project).count()
    assert _walk(client, register) == seen  # the same order on every walk


def test_rows_added_between_page_loads_neither_repeat_nor_skip_a_row(cast, client_for):
    fill(cast, "work-packages", 250)
    before = set(WorkPackage.objects.values_list("pk", flat=True))
    client = client_for(cast.lead)
    url = f"{BASE}/work-packages/"
    first, next_link, _ = _page(client, url)
    # New packages that sort before the first page and among the pages still to come.
    WorkPackage.objects.bulk_create(
        WorkPackage(project=cast.project, name=f"Added {n}", sort_order=-1 - n, status="Blocked")
        for n in range(30)
    )
    WorkPackage.objects.bulk_create(
        WorkPackage(project=cast.project, name=f"Later {n}", sort_order=10_000 + n)
        for n in range(5)
    )
    seen = list(first)
    while next_link:
        ids, next_link, _ = _page(client, f"{BASE}/work-packages/{next_link}")
        seen.extend(ids)
    assert len(seen) == len(set(seen))
    assert {str(pk) for pk in before} <= set(seen)
    later = WorkPackage.objects.filter(name__startswith="Later").values_list("pk", flat=True)
    later = {str(pk) for pk in later}
    assert later <= set(seen)  # they sort after the cursor: on the pages still to come


def test_the_previous_page_is_the_page_before(cast, client_for):
    fill(cast, "work-packages", 230)
    client = client_for(cast.lead)
    first, next_link, prev_link = _page(client, f"{BASE}/work-packages/")
    assert not prev_link
    second, _, prev_link = _page(client, f"{BASE}/work-packages/{next_link}")
    assert second and not set(second) & set(first)
    back, _, prev_again = _page(client, f"{BASE}/work-packages/{prev_link}")
    assert back == first and not prev_again


def test_filters_search_and_sort_hold_across_the_pages(cast, client_for):
    fill(cast, "work-packages", 420)
    WorkPackage.objects.filter(name__endswith="7").update(budget=None)
    client = client_for(cast.lead)
    query = "?rag=Red&q=package&sort=budget&dir=desc"
    seen = _walk(client, "work-packages", query)
    expected = WorkPackage.objects.filter(project=cast.project, rag="Red")
    assert len(seen) == len(set(seen)) == expected.count() > PAGE_SIZE
    budgets = [WorkPackage.objects.get(pk=pk).budget for pk in seen]
    present = [b for b in budgets if b is not None]
    assert present == sorted(present, reverse=True)
    assert budgets[len(present) :] == [None] * (len(budgets) - len(present))  # empty last
    # A sort by a person's name, across pages too.
    owners = _walk(client, "work-packages", "?sort=owner")
    assert len(owners) == len(set(owners)) == 420


@pytest.mark.parametrize("descending", [False, True])
def test_amounts_sort_by_value_on_every_database(cast, client_for, descending):
    # SQLite keeps an amount as its digits (text): the sort must still be by value.
    for name, budget in [("a", "100.00"), ("b", "20.00"), ("c", "3.50"), ("d", "-7.00")]:
        WorkPackage.objects.create(project=cast.project, name=name, budget=Decimal(budget))
    query = "?sort=budget&dir=desc" if descending else "?sort=budget"
    ids, _, _ = _page(client_for(cast.lead), f"{BASE}/work-packages/{query}")
    names = dict(WorkPackage.objects.filter(pk__in=ids).values_list("pk", "name"))
    order = [names[pk] for pk in (WorkPackage.objects.get(pk=i).pk for i in ids)]
    assert order == (["a", "b", "c", "d"] if descending else ["d", "c", "b", "a"])


def test_the_page_says_where_it_is_and_the_page_links_are_plain_links(cast, client_for):
    fill(cast, "work-packages", 150)
    client = client_for(cast.lead)
    text = client.get(f"{BASE}/work-packages/").content.decode()
    assert "Showing 100 of 150 work packages, 100 a page." in text
    nav = re.search(r'<nav class="pager".*?</nav>', text, re.S).group(0)
    assert 'aria-label="Pages of work packages"' in nav and "Next page" in nav
    assert 'href="?after=' in nav and "hx-get" in nav  # works without script, swaps with it
    partial = client.get(f"{BASE}/work-packages/", **HX).content.decode()
    assert partial.lstrip().startswith('<div id="register-table"') and "Next page" in partial
    # One page only: no page links at all; nothing at all: the empty state.
    WorkPackage.objects.filter(project=cast.project).exclude(name__endswith="0").delete()
    assert "Next page" not in client.get(f"{BASE}/work-packages/").content.decode()
    WorkPackage.objects.all().delete()
    assert "No work packages yet." in client.get(f"{BASE}/work-packages/").content.decode()


def test_the_totals_are_every_matching_package_not_the_page(cast, client_for):
    fill(cast, "work-packages", 150)
    client = client_for(cast.lead)
    text = client.get(f"{BASE}/work-packages/").content.decode()
    totals = re.search(r"<tfoot[^>]*>.*?</tfoot>", text, re.S).group(0)
    budget = money(Decimal(sum(1000 + i for i in range(150))))
    assert "Total of all 150 work packages, every page" in totals
    assert f'data-label="Budget">{budget}<' in totals
    filtered = client.get(f"{BASE}/work-packages/?rag=Red").content.decode()
    totals = re.search(r"<tfoot[^>]*>.*?</tfoot>", filtered, re.S).group(0)
    red = money(Decimal(sum(1000 + i for i in range(0, 150, 4))))
    assert "Total of the 38 work packages shown by this filter" in totals
    assert f'data-label="Budget">{red}<' in totals


@pytest.mark.parametrize("register", list(ANCHORS))
def test_every_page_runs_the_same_queries(cast, client_for, register):
    fill(cast, register, 120)
    client = client_for(cast.lead)
    _, next_link, _ = _page(client, f"{BASE}/{register}/", register)
    counts = []
    for url in (f"{BASE}/{register}/", f"{BASE}/{register}/{next_link}"):
        client.get(url)  # the session and people caches warm
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        counts.append(len(queries))
    fill(cast, register, 200)
    with CaptureQueriesContext(connection) as queries:
        client.get(f"{BASE}/{register}/{next_link}")
    # The page after a cursor looks the cursor's row up: one query more than the first.
    assert counts[1] == counts[0] + 1 and len(queries) == counts[1]


def test_an_unknown_or_deleted_cursor_starts_at_the_first_page(cast, client_for):
    fill(cast, "work-packages", 120)
    client = client_for(cast.lead)
    first, next_link, _ = _page(client, f"{BASE}/work-packages/")
    for query in ("?after=not-a-row", "?before=00000000-0000-0000-0000-000000000000"):
        assert _page(client, f"{BASE}/work-packages/{query}")[0] == first
    WorkPackage.objects.filter(pk=next_link.split("=")[-1]).delete()
    again = _page(client, f"{BASE}/work-packages/")[0]
    assert _page(client, f"{BASE}/work-packages/{next_link}")[0] == again


# --- a save reads the form before any service writes ----------------------------------------


WRITES = ("INSERT", "UPDATE", "DELETE")


def _register_writes(queries) -> list[str]:
    """The statements that write a register's, the audit's or the project's rows."""
    tables = ('"registers_', '"governance_auditentry"', '"governance_project"')
    return [
        q["sql"]
        for q in queries
        if q["sql"].lstrip().upper().startswith(WRITES) and any(t in q["sql"] for t in tables)
    ]


def test_an_unreadable_number_in_an_edit_writes_nothing_and_keeps_what_was_typed(cast, client_for):
    wp = WorkPackage.objects.create(project=cast.project, name="Build", budget=Decimal(10))
    client = client_for(cast.lead)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"{BASE}/work-packages/{wp.pk}/",
            {"name": "Build faster", "budget": "12k", "status": "Not Started", "revision": "1"},
            **HX,
        )
    assert response.status_code == 422
    assert _register_writes(queries) == []
    text = response.content.decode()
    assert 'value="Build faster"' in text and 'value="12k"' in text and "Write a number" in text
    wp.refresh_from_db()
    assert wp.name == "Build" and wp.budget == Decimal(10)


def test_an_unreadable_number_in_an_add_writes_nothing_and_names_every_error(cast, client_for):
    client = client_for(cast.lead)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"{BASE}/changes/", {"summary": "", "impactBudget": "lots", "reason": "Why"}, **HX
        )
    assert response.status_code == 422
    assert _register_writes(queries) == []
    text = response.content.decode()
    assert "Write a number" in text and "This field is required." in text
    assert 'value="lots"' in text and "Why" in text


def test_a_readable_save_still_writes_once(cast, client_for):
    client = client_for(cast.lead)
    response = client.post(
        f"{BASE}/work-packages/",
        {"name": "Build", "budget": "12,000", "status": "Not Started"},
        **HX,
    )
    assert response.status_code == 201
    assert WorkPackage.objects.get().budget == Decimal(12000)


def test_drag_and_drop_reordering_is_offered_only_when_every_package_is_on_the_page(
    cast, client_for
):
    """A drag and drop sends the whole order, which a page of a longer register cannot."""
    fill(cast, "work-packages", 20)
    client = client_for(cast.lead)
    assert 'id="wp-reorder-form"' in client.get(f"{BASE}/work-packages/").content.decode()
    fill(cast, "work-packages", 100)
    text = client.get(f"{BASE}/work-packages/").content.decode()
    assert 'id="wp-reorder-form"' not in text and "Move" in text  # the move buttons stay


def test_without_script_the_edit_form_of_a_row_on_a_later_page_is_shown(cast, client_for):
    fill(cast, "work-packages", 150)
    client = client_for(cast.lead)
    _, next_link, _ = _page(client, f"{BASE}/work-packages/")
    later, _, _ = _page(client, f"{BASE}/work-packages/{next_link}")
    text = client.get(f"{BASE}/work-packages/{later[-1]}/edit/").content.decode()
    assert f'<tr id="wp-{later[-1]}" class="editing">' in text or (
        f'id="wp-{later[-1]}"' in text and 'class="editing"' in text
    )
