from django.urls import URLPattern, URLResolver

from investment.views import export, proposals, scenarios

app_name = "investment"
urlpatterns: list[URLPattern | URLResolver] = [
    *proposals.urlpatterns,
    *scenarios.urlpatterns,
    *export.urlpatterns,
]
