"""The load run's instruments (bench/ceiling.py) measure what they say: the stored page skips
the rendering but not the access gate; the gate-less variant skips both."""

from unittest import mock

import pytest

from bench import ceiling
from governance import permissions
from registers.views import base
from tests.factories import WorkPackageFactory

URL = "/projects/ALPHA/registers/work-packages/"


@pytest.fixture
def instrument(monkeypatch):
    """Install an instrument; the real functions come back after the test."""
    monkeypatch.setattr(base.RegisterPages, "render_page", base.RegisterPages.render_page)
    monkeypatch.setattr(permissions, "project_for", permissions.project_for)
    monkeypatch.setattr(ceiling, "_pages", {})
    monkeypatch.setattr(ceiling, "_gates", {})
    return lambda *, gate: ceiling._patch(gate=gate)


def test_the_stored_page_is_the_rendered_page_and_still_gated(cast, client_for, instrument):
    WorkPackageFactory(project=cast.project, name="Stored build")
    instrument(gate=True)
    lead = client_for(cast.lead)
    with mock.patch.object(ceiling, "_render_page", wraps=ceiling._render_page) as rendered:
        first = lead.get(URL)
        second = lead.get(URL)
    assert rendered.call_count == 1
    assert first.status_code == second.status_code == 200
    assert "Stored build" in first.content.decode() and second.content == first.content
    with mock.patch.object(
        ceiling, "_project_for", wraps=ceiling._project_for
    ) as gate:  # not used by this instrument: the view's own gate runs
        assert client_for(cast.outsider).get(URL).status_code == 404
    assert gate.call_count == 0


def test_without_the_gate_the_first_answer_is_kept(cast, client_for, instrument):
    instrument(gate=False)
    lead = client_for(cast.lead)
    with mock.patch.object(ceiling, "_project_for", wraps=ceiling._project_for) as gate:
        assert lead.get(URL).status_code == 200
        assert lead.get(URL).status_code == 200
    assert gate.call_count == 1
