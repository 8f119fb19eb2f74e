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


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("12k", "Write a number"),
        ("abc", "Write a number"),
        ("-5000", "Must not be negative."),
        ("12,00", "is a decimal comma"),
        ("$12000", "not this site&#x27;s currency (EUR)"),
    ],
)
def test_a_budget_the_page_cannot_read_is_refused_next_to_the_field(cast, client_for, typed, said):
    response = client_for(cast.lead).post(
        f"{BASE}/work-packages/", {"name": "Build", "budget": typed, "status": "Not Started"}, **HX
    )
    assert response.status_code == 422
    html = response.content.decode()
    field = re.search(r'<div class="field[^"]*has-error">.*?</div>', html, re.S).group(0)
    assert 'name="budget"' in field and f'value="{typed}"' in field
    assert said in field
    assert not WorkPackage.objects.exists()


@pytest.mark.parametrize(
    "typed,stored",
    [
        ("12000", 12000),
        ("12,500.50", 12500.5),
        ("€12000", 12000),
        ("12 000 EUR", 12000),
        ("", None),
    ],
)
def test_readable_budgets_save(cast, client_for, typed, stored):
    response = client_for(cast.lead).post(
        f"{BASE}/work-packages/", {"name": "Build", "budget": typed, "status": "Not Started"}, **HX
    )
    assert response.status_code == 201
    assert WorkPackage.objects.get().budget == stored


def test_change_impacts_the_page_cannot_read_are_refused(cast, client_for):
    response = client_for(cast.lead).post(
        f"{BASE}/changes/",
        {"summary": "Extend", "impactBudget": "5k", "impactScheduleDays": "2.5"},
        **HX,
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert "Write a number" in html and "Write a whole number of days" in html
    assert not ChangeRequest.objects.exists()


def test_the_api_keeps_the_nullable_number_rule(cast, bearer):
    from django.test import Client

    response = Client().post(
        "/api/v1/projects/ALPHA/work-packages",
        {"name": "Build", "budget": "12k"},
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 201, response.content
    assert WorkPackage.objects.get().budget is None
