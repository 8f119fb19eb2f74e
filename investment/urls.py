from django.urls import URLPattern

from investment.views import export, proposals, scenarios

app_name = "investment"
urlpatterns: list[URLPattern] = [
    *proposals.urlpatterns,
    *scenarios.urlpatterns,
    *export.urlpatterns,
]
