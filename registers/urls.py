from django.urls import path

from governance.not_yet import project_tab

app_name = "registers"
urlpatterns = [
    path(
        "",
        project_tab(
            "registers",
            "Registers",
            "Work packages, risks and opportunities, decisions and change requests.",
        ),
        name="index",
    ),
]
