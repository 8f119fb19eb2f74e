"""People pickers offer only people who can browse the project (and whoever the record
already names), in a constant number of queries."""

from registers.models import Risk
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


def test_an_owner_not_among_the_projects_people_is_refused(cast, client_for):
    """The picker's rule holds on the server: a person sent who cannot browse the project is
    refused on the field, with the person's other values kept; one the record already names
    may stay."""
    client = client_for(cast.lead)
    response = client.post(
        "/projects/ALPHA/registers/risks/",
        {"title": "Vendor API rate limits", "ownerAccountId": cast.outsider.account_id},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert "Choose one of the people of ALPHA" in html
    assert 'value="Vendor API rate limits"' in html
    assert not Risk.objects.filter(title="Vendor API rate limits").exists()
    former = UserFactory(username="former", display_name="Fiona Former")
    wp = WorkPackageFactory(project=cast.project, owner_account_id=former.account_id)
    response = client.post(
        f"/projects/ALPHA/registers/work-packages/{wp.pk}/",
        {"name": "Renamed", "ownerAccountId": former.account_id, "revision": wp.revision},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200, response.content.decode()[:500]
