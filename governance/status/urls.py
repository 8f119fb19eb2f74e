from django.urls import path

from governance.not_yet import project_tab

app_name = "status"
urlpatterns = [
    path(
        "",
        project_tab(
            "status",
            "Status",
            "Project status with derived cost, schedule, scope and risk RAG, and status reports.",
        ),
        name="index",
    ),
]
