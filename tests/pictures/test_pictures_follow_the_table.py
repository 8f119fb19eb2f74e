"""A register's pictures show the rows its table shows: drawn again, out of band, with every
table swap (a filter, a sort, a page) and after every write from the register's page."""

import datetime as dt
from decimal import Decimal

import pytest

from governance.formatting import money
from registers.models import WorkPackage
from tests.factories import ChangeRequestFactory, RiskFactory, WorkPackageFactory

BASE = "/projects/ALPHA/registers"
HX = {"HTTP_HX_REQUEST": "true"}
OOB = '<template><div id="register-pictures" hx-swap-oob="true">'


def shown_at(url):
    """An HTMX request made from the page at `url` (the address the table's swaps push)."""
    return {**HX, "HTTP_HX_CURRENT_URL": f"http://testserver{url}"}


def packages(project):
    dates = {"planned_start_date": dt.date(2026, 1, 5), "planned_end_date": dt.date(2026, 3, 5)}
    red = WorkPackageFactory(project=project, name="Redwood", rag="Red", **dates)
    green = WorkPackageFactory(project=project, name="Greenfield", rag="Green", **dates)
    return red, green


def pictures_of(html):
    """The pictures drawn again, out of band (their template element alone)."""
    assert html.count('id="register-pictures"') == 1
    return html.split(OOB)[1].split("</template>")[0]


def test_the_page_draws_its_pictures_in_their_frame(cast, client_for):
    packages(cast.project)
    html = client_for(cast.viewer).get(f"{BASE}/work-packages/").content.decode()
    assert '<div id="register-pictures">' in html and "hx-swap-oob" not in html
    assert 'id="wp-timeline"' in html


def test_a_filter_swap_draws_the_timeline_of_the_rows_it_shows(cast, client_for):
    packages(cast.project)
    client = client_for(cast.viewer)
    html = client.get(f"{BASE}/work-packages/?rag=Green", **HX).content.decode()
    timeline = pictures_of(html)
    assert "Greenfield" in timeline and "Redwood" not in timeline
    # A history restore answers the whole page, its pictures drawn once, in place.
    page = client.get(
        f"{BASE}/work-packages/?rag=Green", HTTP_HX_HISTORY_RESTORE_REQUEST="true", **HX
    ).content.decode()
    assert page.count('id="register-pictures"') == 1 and OOB not in page


def test_a_delete_from_the_page_draws_the_pictures_of_the_page_shown(cast, client_for):
    red, green = packages(cast.project)
    client = client_for(cast.lead)
    response = client.post(
        f"{BASE}/work-packages/{red.pk}/delete/",
        {"revision": "1"},
        **shown_at(f"{BASE}/work-packages/?sort=name"),
    )
    assert response.status_code == 200
    timeline = pictures_of(response.content.decode())
    assert "Greenfield" in timeline and "Redwood" not in timeline
    # The page shown was filtered: its pictures are of its rows.
    WorkPackageFactory(project=cast.project, name="Redline", rag="Red")
    response = client.post(
        f"{BASE}/work-packages/{green.pk}/delete/",
        {"revision": "1"},
        **shown_at(f"{BASE}/work-packages/?rag=Red"),
    )
    timeline = pictures_of(response.content.decode())
    assert "Redline" in timeline and "Greenfield" not in timeline


def test_no_pictures_where_nothing_changed_or_the_page_shown_is_another(cast, client_for):
    red, _ = packages(cast.project)
    client = client_for(cast.lead)
    WorkPackage.objects.filter(pk=red.pk).update(revision=5)
    stale = client.post(
        f"{BASE}/work-packages/{red.pk}/delete/",
        {"revision": "1"},
        **shown_at(f"{BASE}/work-packages/"),
    )
    assert stale.status_code == 412 and "register-pictures" not in stale.content.decode()
    elsewhere = client.post(
        f"{BASE}/work-packages/{red.pk}/delete/",
        {"revision": "5"},
        **shown_at(f"{BASE}/work-packages/{red.pk}/"),
    )
    assert elsewhere.status_code == 200 and "register-pictures" not in elsewhere.content.decode()
    # A register without pictures answers without them.
    change = ChangeRequestFactory(project=cast.project)
    answer = client.post(
        f"{BASE}/changes/{change.pk}/delete/",
        {"revision": str(change.revision)},
        **shown_at(f"{BASE}/changes/"),
    )
    assert answer.status_code == 200 and "register-pictures" not in answer.content.decode()


def test_a_risk_deleted_from_the_page_leaves_its_matrices(cast, client_for):
    gone = RiskFactory(project=cast.project, title="Vendor exit", impact=5, likelihood=5)
    RiskFactory(project=cast.project, title="Data loss", impact=1, likelihood=1)
    client = client_for(cast.lead)
    before = client.get(f"{BASE}/risks/", **HX).content.decode()
    response = client.post(
        f"{BASE}/risks/{gone.pk}/delete/",
        {"revision": str(gone.revision)},
        **shown_at(f"{BASE}/risks/"),
    )
    assert response.status_code == 200
    after = pictures_of(response.content.decode())
    assert pictures_of(before) != after
    assert "Vendor exit" not in after


def test_an_edit_from_the_page_draws_the_totals_again(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build", budget=1000)
    WorkPackageFactory(project=cast.project, name="Run", budget=500)
    client = client_for(cast.lead)
    response = client.post(
        f"{BASE}/work-packages/{wp.pk}/",
        {"name": "Build", "budget": "4000", "revision": str(wp.revision)},
        **shown_at(f"{BASE}/work-packages/"),
    )
    assert response.status_code == 200
    html = response.content.decode()
    # Out of band, inside a template element (the only way a table part swaps so).
    foot = html.split('<template>\n  <tfoot id="wp-totals" hx-swap-oob="true">')[1]
    foot = foot.split("</tfoot></template>")[0]
    assert "Total of all 2 work packages" in foot and money(Decimal(4500)) in foot
    # The risks have no foot.
    risk = RiskFactory(project=cast.project, title="Vendor exit", impact=2, likelihood=2)
    answer = client.post(
        f"{BASE}/risks/{risk.pk}/delete/",
        {"revision": str(risk.revision)},
        **shown_at(f"{BASE}/risks/"),
    ).content.decode()
    assert "register-pictures" in answer and "<tfoot" not in answer


def test_a_change_decided_from_the_page_draws_the_approved_variations_again(cast, client_for):
    change = ChangeRequestFactory(
        project=cast.project,
        summary="More budget",
        proposer_account_id=cast.lead.account_id,
        impact_budget=Decimal(2500),
        impact_schedule_days=10,
        dimensions=["Budget", "Schedule"],
    )
    sponsor = client_for(cast.sponsor)
    page = sponsor.get(f"{BASE}/changes/").content.decode()
    assert "leave the budget as it is" in page.split('<div id="change-variations">')[1]
    approved = sponsor.post(
        f"{BASE}/changes/{change.pk}/adjudicate/",
        {"outcome": "Approved", "revision": str(change.revision)},
        **shown_at(f"{BASE}/changes/"),
    )
    assert approved.status_code == 200
    html = approved.content.decode()
    line = html.split('<template><div id="change-variations" hx-swap-oob="true">')[1]
    line = line.split("</div></template>")[0]
    assert f"add {money(Decimal(2500))} to the budget" in line
    assert "add 10 days to the schedule" in line


def test_a_save_from_the_register_s_edit_page_draws_the_matrices_again(cast, client_for):
    """The edit page is the register with the row's form open: its matrices follow too."""
    risk = RiskFactory(project=cast.project, title="Vendor exit", impact=2, likelihood=2)
    client = client_for(cast.lead)
    response = client.post(
        f"{BASE}/risks/{risk.pk}/",
        {"title": "Vendor exit", "impact": "5", "likelihood": "5", "revision": "1"},
        **shown_at(f"{BASE}/risks/{risk.pk}/edit/"),
    )
    assert response.status_code == 200
    matrices = pictures_of(response.content.decode())
    assert "impact 5 and likelihood 5" in matrices


def test_a_page_of_another_project_is_not_drawn_for(cast, client_for):
    red, _ = packages(cast.project)
    answer = client_for(cast.lead).post(
        f"{BASE}/work-packages/{red.pk}/delete/",
        {"revision": "1"},
        **shown_at("/projects/OTHER/registers/work-packages/"),
    )
    assert answer.status_code == 200 and "register-pictures" not in answer.content.decode()


@pytest.mark.parametrize(
    "current",
    [
        "http://[bad/projects/ALPHA/registers/work-packages/",
        "http://testserver/projects/ALPHA/registers/work-packages/?q=%00",
        "http://testserver/projects/ALPHA/registers/work-packages/?q=%EF%BF%BE",
        "http://testserver/projects/ALPHA/registers/work-packages/?" + "a&" * 1100,
        "not a url at all \ud800",
    ],
)
def test_a_hostile_page_address_leaves_the_write_s_answer_as_it_is(cast, client_for, current):
    """The page's address is the client's header, read after the write committed: one a page
    would be refused for draws nothing, and the write's own answer stands."""
    red, _ = packages(cast.project)
    answer = client_for(cast.lead).post(
        f"{BASE}/work-packages/{red.pk}/delete/",
        {"revision": "1"},
        **{**HX, "HTTP_HX_CURRENT_URL": current},
    )
    assert answer.status_code == 200 and "register-pictures" not in answer.content.decode()
    assert not WorkPackage.objects.filter(pk=red.pk).exists()


def test_a_move_on_a_filtered_page_answers_that_page_s_table_and_timeline(cast, client_for):
    red, _ = packages(cast.project)
    WorkPackageFactory(project=cast.project, name="Redline", rag="Red")
    response = client_for(cast.lead).post(
        f"{BASE}/work-packages/{red.pk}/move/",
        {"direction": "down"},
        **shown_at(f"{BASE}/work-packages/?rag=Red"),
    )
    assert response.status_code == 200
    html = response.content.decode()
    table, timeline = html.split(OOB)
    assert "Redline" in table and "Greenfield" not in table
    assert "Redline" in timeline and "Greenfield" not in timeline
    # The table's links keep the filter.
    assert "rag=Red" in table


def test_a_delete_on_a_full_page_answers_the_page_s_table_again(cast, client_for):
    """The row after the page's last takes the deleted one's place in the table and on the
    timeline alike, and the pager counts again."""
    WorkPackage.objects.bulk_create(
        WorkPackage(
            project=cast.project,
            name=f"Package {n:03}",
            planned_start_date=dt.date(2026, 1, 5),
            planned_end_date=dt.date(2026, 3, 5),
        )
        for n in range(102)
    )
    first = WorkPackage.objects.get(name="Package 000")
    response = client_for(cast.lead).post(
        f"{BASE}/work-packages/{first.pk}/delete/",
        {"revision": "1"},
        **shown_at(f"{BASE}/work-packages/?sort=name"),
    )
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#register-table" and response["HX-Reswap"] == "outerHTML"
    html = response.content.decode()
    table = html.split(OOB)[0]
    timeline = pictures_of(html)
    assert '<div id="register-table"' in table and '<nav id="register-tabs"' not in table
    assert "Package 100" in table and "Package 000" not in table
    assert "Package 100" in timeline and "Package 000" not in timeline
    assert "Showing 100 of 101 work packages" in table
    assert "Deleted the work package “Package 000”." in html.split('<nav id="register-tabs"')[1]
    # Drawn once, from the table's own rows: the write's redraw does not read the page again.
    assert html.count(OOB) == 1
