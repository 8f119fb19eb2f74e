from django.urls import path

from portfolio import views

urlpatterns = [
    path("", views.portfolio_index, name="portfolio"),
    path("columns/", views.portfolio_columns, name="portfolio-columns"),
    path("export/", views.portfolio_export, name="portfolio-export"),
    path("lessons/", views.lessons, name="lessons"),
    path("settings/", views.site_settings, name="site-settings"),
]
