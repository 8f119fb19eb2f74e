from django.urls import path

from gates import views

app_name = "gates"
urlpatterns = [
    path("", views.plan_page, name="plan"),
    path("create/", views.plan_create, name="plan-create"),
    path("edit/", views.plan_edit, name="plan-edit"),
    path("<uuid:stage_id>/criteria/", views.criterion_add, name="criterion-add"),
    path(
        "<uuid:stage_id>/criteria/<int:criterion_id>/dismiss/",
        views.criterion_dismiss,
        name="criterion-dismiss",
    ),
    path("review/", views.review_request, name="review-request"),
    path("review/decision/", views.review_decide, name="review-decide"),
]
