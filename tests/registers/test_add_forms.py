"""The add forms start empty: no field shows the text "None", and an add posted exactly as
the empty form would post it saves."""

import re

import pytest

from registers.models import ChangeRequest, Decision, Risk, WorkPackage

BASE = "/projects/ALPHA/registers"
HX = {"HTTP_HX_REQUEST": "true"}


def _form_fields(html: str) -> dict[str, str]:
    """name -> value of every text input and textarea of the add row, as a browser posts."""
    fields = {}
    inputs = r'<input type="(?:text|date)"[^>]*name="(\w+)" value="([^"]*)"'
    for name, value in re.findall(inputs, html):
        fields[name] = value
    for name, value in re.findall(r'<textarea[^>]*name="(\w+)"[^>]*>(.*?)</textarea>', html, re.S):
        fields[name] = value
    return fields


@pytest.mark.parametrize("register", ["work-packages", "risks", "decisions", "changes"])
@pytest.mark.parametrize("htmx", [True, False])
def test_add_form_fields_are_empty(cast, client_for, register, htmx):
    html = client_for(cast.lead).get(f"{BASE}/{register}/new/", **(HX if htmx else {}))
    html = html.content.decode()
    assert not re.search(r'<input[^>]*value="None"', html)
    assert ">None</textarea>" not in html
    fields = _form_fields(html)
    assert fields and all(value == "" for value in fields.values()), fields


@pytest.mark.parametrize(
    "register,first,model",
    [
        ("work-packages", {"name": "Build the portal"}, WorkPackage),
        ("risks", {"title": "Vendor API rate limits"}, Risk),
        ("decisions", {"decision": "Use the managed queue"}, Decision),
        ("changes", {"summary": "Extend pilot"}, ChangeRequest),
    ],
)
def test_the_empty_add_form_as_posted_saves(cast, client_for, register, first, model):
    client = client_for(cast.lead)
    fields = _form_fields(client.get(f"{BASE}/{register}/new/", **HX).content.decode())
    response = client.post(f"{BASE}/{register}/", {**fields, **first}, **HX)
    assert response.status_code == 201, response.content.decode()
    ((field, typed),) = first.items()
    stored = model.objects.filter(project=cast.project).values_list(
        {"name": "name", "title": "title", "decision": "decision", "summary": "summary"}[field],
        flat=True,
    )
    assert list(stored) == [typed]


def test_add_work_package_starts_without_a_rag(cast, client_for):
    html = client_for(cast.lead).get(f"{BASE}/work-packages/new/", **HX).content.decode()
    assert '<option value="None" selected>No RAG</option>' in html
    assert '<option value="Not Started" selected>' in html
