from django.urls import path

from portfolio import views

urlpatterns = [
    path("portfolio/", views.portfolio_index, name="portfolio"),
    path("portfolio/export/", views.portfolio_export, name="portfolio-export"),
    path("portfolio/lessons/", views.lessons, name="lessons"),
    path("portfolio/settings/", views.site_settings, name="site-settings"),
]
