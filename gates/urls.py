from django.urls import include, path

from gates import views

criterion_patterns = [
    path("", views.criterion_add, name="criterion-add"),
    path("<int:criterion_id>/dismiss/", views.criterion_dismiss, name="criterion-dismiss"),
]

review_patterns = [
    path("", views.review_request, name="review-request"),
    path("decision/", views.review_decide, name="review-decide"),
]

app_name = "gates"
urlpatterns = [
    path("", views.plan_page, name="plan"),
    path("create/", views.plan_create, name="plan-create"),
    path("edit/", views.plan_edit, name="plan-edit"),
    path("<uuid:stage_id>/criteria/", include(criterion_patterns)),
    path("review/", include(review_patterns)),
]
