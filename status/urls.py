from django.urls import path

from status import views

app_name = "status"
urlpatterns = [
    path("", views.status_index, name="index"),
    path("edit/", views.status_edit, name="edit"),
    path("initiation/", views.initiation, name="initiation"),
    path("exception/", views.exception_page, name="exception"),
    path("exception/report/", views.exception_report, name="exception-report"),
    path("exception/decision/", views.exception_decision, name="exception-decision"),
    path("exception/ask/", views.exception_ask, name="exception-ask"),
    path("reports/", views.report_create, name="report-create"),
    path("reports/<uuid:report_id>/", views.report_detail, name="report"),
    path("reports/<uuid:report_id>/publish/", views.report_publish, name="report-publish"),
    path("reports/<uuid:report_id>/delete/", views.report_delete, name="report-delete"),
]
