"""Django admin lists every register model for site administrators, read-only: register
writes go through the services (validated and audited)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    RiskFactory,
    SteeringMinutesFactory,
    WorkPackageFactory,
)

MODELS = ["workpackage", "risk", "decision", "changerequest", "steeringminutes"]


@pytest.fixture
def rows(cast):
    WorkPackageFactory(project=cast.project, name="Admin visible package")
    RiskFactory(project=cast.project, title="Admin visible risk")
    DecisionFactory(project=cast.project, decision="Admin visible decision")
    ChangeRequestFactory(project=cast.project, summary="Admin visible change")
    SteeringMinutesFactory(project=cast.project, title="Admin visible minutes")


@pytest.mark.parametrize("model", MODELS)
def test_site_admin_lists_every_register_model_read_only(cast, client_for, rows, model):
    client = client_for(cast.site_admin)
    page = client.get(f"/admin/registers/{model}/")
    assert page.status_code == 200
    assert "Admin visible" in page.content.decode() and "ALPHA" in page.content.decode()
    assert client.get(f"/admin/registers/{model}/add/").status_code == 403
    searched = client.get(f"/admin/registers/{model}/?q=ALPHA")
    assert "Admin visible" in searched.content.decode()


def test_register_admin_is_closed_to_non_staff(cast, client_for, rows):
    response = client_for(cast.lead).get("/admin/registers/workpackage/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_work_package_changelist_joins_the_project_once(cast, client_for):
    client = client_for(cast.site_admin)

    def queries() -> int:
        client.get("/admin/registers/workpackage/")
        with CaptureQueriesContext(connection) as ctx:
            client.get("/admin/registers/workpackage/")
        return len(ctx.captured_queries)

    WorkPackageFactory(project=cast.project)
    one = queries()
    WorkPackageFactory.create_batch(30, project=cast.project)
    assert queries() == one
