from django.urls import path

from portfolio import views

urlpatterns = [
    path("portfolio/", views.portfolio_index, name="portfolio"),
    path("portfolio/settings/", views.site_settings, name="site-settings"),
]
