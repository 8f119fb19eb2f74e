"""Project status and status reports."""

from django.utils import timezone

from status.models import ProjectException, StatusReport
from tests.permission_matrix import EDIT, LEAD_ONLY, READ, SPONSOR_ONLY


def setup(world):
    world.status_report = StatusReport.objects.create(
        project=world.project, title="Matrix draft", created_by_account_id="someone"
    )
    # An open exception: the lead reports on it, the sponsor decides it.
    ProjectException.objects.create(project=world.project, opened_at=timezone.now())


RESOLVERS = {"report_id": lambda world, user: world.status_report.pk}

CELLS = {
    # HTML
    "GET projects/<str:key>/status/": READ,
    "GET projects/<str:key>/status/edit/": EDIT,
    "POST projects/<str:key>/status/edit/": EDIT,
    "POST projects/<str:key>/status/initiation/": EDIT,
    "POST projects/<str:key>/status/reports/": EDIT,
    "GET projects/<str:key>/status/reports/<uuid:report_id>/": READ,
    "POST projects/<str:key>/status/reports/<uuid:report_id>/": EDIT,
    "POST projects/<str:key>/status/reports/<uuid:report_id>/publish/": EDIT,
    "POST projects/<str:key>/status/reports/<uuid:report_id>/delete/": EDIT,
    "GET projects/<str:key>/status/exception/": READ,
    "POST projects/<str:key>/status/exception/report/": LEAD_ONLY,
    "POST projects/<str:key>/status/exception/decision/": SPONSOR_ONLY,
    "POST projects/<str:key>/status/exception/ask/": SPONSOR_ONLY,
    # API
    "GET api/v1/projects/<key>/status": READ,
    "PATCH api/v1/projects/<key>/status": EDIT,
    "POST api/v1/projects/<key>/status/initiation/dismiss": EDIT,
    "POST api/v1/projects/<key>/status/initiation/restore": EDIT,
    "POST api/v1/projects/<key>/status/initiation/acknowledge": EDIT,
    "GET api/v1/projects/<key>/status/reports": READ,
    "POST api/v1/projects/<key>/status/reports": EDIT,
    "GET api/v1/projects/<key>/status/reports/<report_id>": READ,
    "PATCH api/v1/projects/<key>/status/reports/<report_id>": EDIT,
    "DELETE api/v1/projects/<key>/status/reports/<report_id>": EDIT,
    "POST api/v1/projects/<key>/status/reports/<report_id>/publish": EDIT,
    "GET api/v1/projects/<key>/exception": READ,
    "GET api/v1/projects/<key>/exceptions": READ,
    "PUT api/v1/projects/<key>/exception/report": LEAD_ONLY,
    "POST api/v1/projects/<key>/exception/decision": SPONSOR_ONLY,
}
