"""The close-out page refuses a revised return it cannot read, next to the field; the API
keeps the spec's nullable number."""

from charter.models import BusinessCase
from tests.charter.conftest import closeout_record

PAGE = "/projects/ALPHA/charter/closeout/"


def test_unreadable_revised_return_is_refused_next_to_the_field(cast, arrange, client_for):
    case = arrange("Approved", close_out=closeout_record())
    client = client_for(cast.lead)
    for typed, message in (("12k", "Write a number"), ("-5000", "Must not be negative")):
        response = client.post(
            PAGE, {"revision": case.revision, "asBuiltReturnValue": typed, "asBuiltOutcome": "x"}
        )
        assert response.status_code == 422
        html = response.content.decode()
        assert f'<p class="field-error" id="asBuiltReturnValue-err">{message}' in html
        assert f'value="{typed}"' in html
    assert BusinessCase.objects.get().close_out.get("asBuiltOutcome") in (None, "")
    response = client.post(PAGE, {"revision": case.revision, "asBuiltReturnValue": "250,000"})
    assert response.status_code == 302
    assert BusinessCase.objects.get().close_out["asBuiltReturnValue"] == 250000
