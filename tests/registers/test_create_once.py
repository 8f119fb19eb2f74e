"""A register's create form creates once: it carries a one-time token, and the same form sent
again (a double click, a resend, three tabs) is answered with the record the first one
created. Sequentially on every database; three parallel posts on PostgreSQL."""

import re
import threading

import pytest
from django.db import connection, connections
from django.test import Client

from governance.models import AuditEntry
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from tests.factories import DecisionFactory, RiskFactory

BASE = "/projects/ALPHA/registers"
HX = {"HTTP_HX_REQUEST": "true"}
FORMS = {
    "risks": (Risk, {"title": "Supplier fails", "status": "Open", "impact": "3",
                     "likelihood": "2", "direction": "Risk", "treatment": "Mitigate"}),
    "work-packages": (WorkPackage, {"name": "Build", "status": "Not Started", "progress": "0"}),
    "decisions": (Decision, {"decision": "Pick the vendor"}),
    "changes": (ChangeRequest, {"summary": "More budget", "dimensions": "Budget",
                                "impactBudget": "1000", "reason": "Because"}),
}  # fmt: skip


def _token(client: Client, register: str) -> str:
    html = client.get(f"{BASE}/{register}/new/", **HX).content.decode()
    match = re.search(r'name="form_token" value="([^"]+)"', html)
    assert match, html[:500]
    return match.group(1)


@pytest.mark.parametrize("register", sorted(FORMS))
def test_the_same_form_sent_twice_creates_once(register, cast, client_for):
    model, data = FORMS[register]
    client = client_for(cast.lead)
    token = _token(client, register)
    first = client.post(f"{BASE}/{register}/", {**data, "form_token": token}, **HX)
    assert first.status_code == 201, first.content[:500]
    again = client.post(f"{BASE}/{register}/", {**data, "form_token": token}, **HX)
    assert again.status_code == 200, again.content[:500]
    assert "was added once, not twice" in again.content.decode()
    assert model.objects.count() == 1
    record = model.objects.get()
    assert str(record.pk) in again.content.decode()
    assert AuditEntry.objects.filter(target_id=str(record.pk)).count() == 1
    # Without JavaScript the repeat lands on the record, with the same word.
    page = client.post(f"{BASE}/{register}/", {**data, "form_token": token})
    assert page.status_code == 302 and page["Location"].endswith(str(record.pk))
    assert model.objects.count() == 1


def test_a_new_form_creates_again(cast, client_for):
    model, data = FORMS["risks"]
    client = client_for(cast.lead)
    for _ in range(2):
        token = _token(client, "risks")
        response = client.post(f"{BASE}/risks/", {**data, "form_token": token}, **HX)
        assert response.status_code == 201
    assert model.objects.count() == 2


def test_a_refused_form_keeps_its_token_for_the_corrected_one(cast, client_for):
    model, data = FORMS["risks"]
    client = client_for(cast.lead)
    token = _token(client, "risks")
    refused = client.post(f"{BASE}/risks/", {**data, "title": "", "form_token": token}, **HX)
    assert refused.status_code == 422
    saved = client.post(f"{BASE}/risks/", {**data, "form_token": token}, **HX)
    assert saved.status_code == 201
    assert model.objects.count() == 1


def test_someone_elses_token_creates_nothing(cast, client_for):
    model, data = FORMS["risks"]
    token = _token(client_for(cast.lead), "risks")
    client_for(cast.lead).post(f"{BASE}/risks/", {**data, "form_token": token}, **HX)
    other = client_for(cast.editor).post(f"{BASE}/risks/", {**data, "form_token": token}, **HX)
    assert other.status_code == 409
    assert "already sent" in other.content.decode()
    assert model.objects.count() == 1


def test_a_form_without_a_token_creates_as_before(cast, client_for):
    model, data = FORMS["risks"]
    client = client_for(cast.lead)
    for _ in range(2):
        assert client.post(f"{BASE}/risks/", data, **HX).status_code == 201
    assert model.objects.count() == 2


@pytest.mark.skipif(connection.vendor != "postgresql", reason="parallel writes: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_three_parallel_posts_of_one_form_create_one_risk(cast):
    _, data = FORMS["risks"]
    client = Client()
    client.force_login(cast.lead)
    token = _token(client, "risks")
    cookies = client.cookies
    barrier = threading.Barrier(3)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def send() -> None:
        try:
            mine = Client()
            mine.cookies = cookies
            barrier.wait(timeout=10)
            response = mine.post(f"{BASE}/risks/", {**data, "form_token": token}, **HX)
            statuses.append(response.status_code)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert sorted(statuses) == [200, 200, 201], statuses
    assert Risk.objects.filter(title=data["title"]).count() == 1


def test_recording_the_treating_decision_twice_records_once(cast, client_for):
    risk = RiskFactory(project=cast.project, title="Outage", materialised=True)
    client = client_for(cast.lead)
    html = client.get(f"{BASE}/risks/{risk.pk}/record-decision/", **HX).content.decode()
    token = re.search(r'name="form_token" value="([^"]+)"', html).group(1)
    data = {"decision": "Buy a second line", "form_token": token}
    url = f"{BASE}/risks/{risk.pk}/record-decision/"
    assert client.post(url, data, **HX).status_code == 201
    again = client.post(url, data, **HX)
    assert again.status_code == 200 and "recorded once, not twice" in again.content.decode()
    assert Decision.objects.filter(treated_risk_id=str(risk.pk)).count() == 1


@pytest.mark.parametrize("htmx", [True, False])
def test_a_decision_note_sent_twice_is_added_once(htmx, cast, client_for):
    decision = DecisionFactory(project=cast.project, decision="Pick vendor")
    client = client_for(cast.lead)
    url = f"{BASE}/decisions/{decision.pk}/notes/"
    form = client.get(url, **HX) if htmx else client.get(f"{BASE}/decisions/{decision.pk}/")
    token = re.search(r'name="form_token" value="([^"]+)"', form.content.decode()).group(1)
    headers = HX if htmx else {}
    data = {"text": "Vendor confirmed in writing.", "form_token": token}
    first = client.post(url, data, **headers)
    assert first.status_code == (200 if htmx else 302)
    again = client.post(url, data, **headers)
    assert again.status_code == (200 if htmx else 302)
    if htmx:
        assert "added once, not twice" in again.content.decode()
    decision.refresh_from_db()
    assert [n["text"] for n in decision.notes] == ["Vendor confirmed in writing."]
