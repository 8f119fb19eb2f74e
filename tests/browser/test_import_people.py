"""A migrated risk register in a real browser: the Project Lead uploads a CSV whose owners
are written as display names and e-mails under the page's labels, reads the preview, confirms,
and the register shows each owner; a name that matches no one is refused on the preview
naming the row and the column."""

import pytest
from playwright.sync_api import expect

from registers.models import Risk
from tests.browser.axe import assert_accessible

pytestmark = pytest.mark.browser

ROWS = (
    "Title,Description,Owner,Impact,Likelihood,Treatment\n"
    "Vendor late,Supplier slips,Eddie Editor,3,4,Mitigate\n"
    "Budget cut,Funding drops,vera viewer,2,2,Accept\n"
    "Key person leaves,Single expert,sponsor@example.test,4,2,Transfer\n"
)
LABEL = "File (CSV"


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_a_lead_imports_owners_by_name_and_sees_them_set(
    cast, live_server, watched_page, sign_in, tmp_path, width
):
    page = watched_page
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/risks/import/")
    expect(
        page.get_by_text("written as their display name, their e-mail address", exact=False).first
    ).to_be_visible()
    bad = tmp_path / "risks-typo.csv"
    bad.write_text(ROWS.replace("Eddie Editor", "Eddy Editer"), encoding="utf-8")
    page.get_by_label(LABEL, exact=False).set_input_files(str(bad))
    page.get_by_role("button", name="Preview the import").click()
    expect(page.get_by_role("table", name="Refused rows")).to_contain_text(
        "Row 2, Owner: No one in this project is called “Eddy Editer”."
    )
    assert not Risk.objects.exists()
    # The refused preview answers 422, which the browser logs: expected here.
    assert all("422" in problem for problem in page.problems)
    page.problems.clear()

    good = tmp_path / "risks.csv"
    good.write_text(ROWS, encoding="utf-8")
    page.get_by_label(LABEL, exact=False).set_input_files(str(good))
    page.get_by_role("button", name="Preview another file").click()
    preview = page.get_by_role("region", name="Preview of risks.csv")
    expect(preview).to_contain_text("The import would create 3 risks")
    assert_accessible(page, "the preview of risks with owners by name")
    preview.get_by_role("button", name="Import 3 risks").click()
    expect(page.get_by_text("Imported 3 risks")).to_be_visible()
    owners = dict(Risk.objects.values_list("title", "owner_account_id"))
    assert owners == {
        "Vendor late": cast.editor.account_id,
        "Budget cut": cast.viewer.account_id,
        "Key person leaves": cast.sponsor.account_id,
    }
    for title, name in (
        ("Vendor late", "Eddie Editor"),
        ("Budget cut", "Vera Viewer"),
        ("Key person leaves", "Sam Sponsor"),
    ):
        row = page.locator("tbody tr").filter(has_text=title).first
        expect(row).to_be_visible()
        expect(row).to_contain_text(name)
