"""People pickers offer only people who can browse the project (and whoever the record
already names), in a constant number of queries."""

from tests.factories import UserFactory, WorkPackageFactory


def options(html: str) -> str:
    return html.split('name="ownerAccountId"', 1)[1].split("</select>", 1)[0]


def test_owner_picker_offers_only_browsers(cast, client_for):
    html = client_for(cast.lead).get("/projects/ALPHA/registers/work-packages/new/").content
    picker = options(html.decode())
    assert "Vera Viewer" in picker and "Lena Lead" in picker
    assert "Otto Outsider" not in picker  # in the directory, cannot browse ALPHA


def test_a_person_the_record_names_stays_offered(cast, client_for):
    former = UserFactory(username="former", display_name="Fiona Former")
    wp = WorkPackageFactory(project=cast.project, owner_account_id=former.account_id)
    html = client_for(cast.lead).get(f"/projects/ALPHA/registers/work-packages/{wp.pk}/edit/")
    assert "Fiona Former" in options(html.content.decode())


def test_seat_search_offers_only_browsers(cast, client_for):
    client = client_for(cast.lead)
    found = client.get("/projects/ALPHA/charter/people/", {"field": "decisionAuthority", "q": "o"})
    html = found.content.decode()
    assert "Otto Outsider" not in html  # Otto Outsider cannot browse ALPHA
    assert "Eddie Editor" in html  # Eddie Editor can
