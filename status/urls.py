from django.urls import include, path

from status import views

exception_patterns = [
    path("", views.exception_page, name="exception"),
    path("report/", views.exception_report, name="exception-report"),
    path("decision/", views.exception_decision, name="exception-decision"),
    path("ask/", views.exception_ask, name="exception-ask"),
]

report_patterns = [
    path("", views.report_detail, name="report"),
    path("publish/", views.report_publish, name="report-publish"),
    path("delete/", views.report_delete, name="report-delete"),
]

app_name = "status"
urlpatterns = [
    path("", views.status_index, name="index"),
    path("edit/", views.status_edit, name="edit"),
    path("initiation/", views.initiation, name="initiation"),
    path("exception/", include(exception_patterns)),
    path("reports/", views.report_create, name="report-create"),
    path("reports/<uuid:report_id>/", include(report_patterns)),
]
