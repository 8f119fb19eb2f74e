from django.urls import path

from portfolio import views

urlpatterns = [
    path("portfolio/", views.portfolio_index, name="portfolio"),
    path("portfolio/columns/", views.portfolio_columns, name="portfolio-columns"),
    path("portfolio/export/", views.portfolio_export, name="portfolio-export"),
    path("portfolio/lessons/", views.lessons, name="lessons"),
    path("portfolio/settings/", views.site_settings, name="site-settings"),
]
