from django.urls import path

from governance.not_yet import project_tab

app_name = "charter"
urlpatterns = [
    path(
        "",
        project_tab(
            "charter",
            "Business case",
            "The investment thesis, its approval lifecycle, close-out and benefits realisation.",
        ),
        name="index",
    ),
]
