from django.urls import path, register_converter

from registers.views import changes, decisions, files, imports, risks, work_packages


class RegisterConverter:
    """One of the four registers, as its URL segment."""

    regex = "work-packages|risks|decisions|changes"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(RegisterConverter, "register")

app_name = "registers"
wp = "work-packages/<uuid:wp_id>/"
risk = "risks/<uuid:risk_id>/"
decision = "decisions/<uuid:decision_id>/"
change = "changes/<uuid:change_id>/"
urlpatterns = [
    path("", files.index, name="index"),
    path("<register:register>/export/", files.export, name="export"),
    path("<register:register>/import/", imports.import_file, name="import"),
    path("<register:register>/template/", imports.template, name="import-template"),
    path("<register:register>/undo/", files.undo_delete, name="undo"),
    # Work packages
    path("work-packages/", work_packages.work_packages, name="work-packages"),
    path("work-packages/new/", work_packages.work_package_new, name="wp-new"),
    path("work-packages/reorder/", work_packages.work_package_reorder, name="wp-reorder"),
    path(wp, work_packages.work_package_detail, name="wp-detail"),
    path(f"{wp}edit/", work_packages.work_package_edit, name="wp-edit"),
    path(f"{wp}delete/", work_packages.work_package_delete, name="wp-delete"),
    path(f"{wp}move/", work_packages.work_package_move, name="wp-move"),
    path(f"{wp}links/", work_packages.work_package_links, name="wp-links"),
    path(
        f"{wp}links/<str:issue_key>/delete/",
        work_packages.work_package_unlink,
        name="wp-unlink",
    ),
    # Risks
    path("risks/", risks.risks, name="risks"),
    path("risks/new/", risks.risk_new, name="risk-new"),
    path(risk, risks.risk_detail, name="risk-detail"),
    path(f"{risk}edit/", risks.risk_edit, name="risk-edit"),
    path(f"{risk}delete/", risks.risk_delete, name="risk-delete"),
    path(f"{risk}record-decision/", risks.risk_record_decision, name="risk-record-decision"),
    # Decisions
    path("decisions/", decisions.decisions, name="decisions"),
    path("decisions/new/", decisions.decision_new, name="decision-new"),
    path(decision, decisions.decision_detail, name="decision-detail"),
    path(f"{decision}edit/", decisions.decision_edit, name="decision-edit"),
    path(f"{decision}notes/", decisions.decision_notes, name="decision-notes"),
    # Change requests
    path("changes/", changes.changes, name="changes"),
    path("changes/new/", changes.change_new, name="change-new"),
    path(change, changes.change_detail, name="change-detail"),
    path(f"{change}edit/", changes.change_edit, name="change-edit"),
    path(f"{change}delete/", changes.change_delete, name="change-delete"),
    path(f"{change}adjudicate/", changes.change_adjudicate, name="change-adjudicate"),
]
