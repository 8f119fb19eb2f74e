from django.urls import path

from charter.acts import ACTS
from charter.views import baseline, case, closeout, lifecycle, minutes, realisation

app_name = "charter"
urlpatterns = [
    path("", case.index, name="index"),
    *(
        path(f"edit/{part}/", case.edit, {"part": part}, name=f"edit-{part}")
        for part in case.EDITED_PARTS
    ),
    path("checklist/", case.checklist, name="checklist"),
    path("people/", case.people_search, name="people"),
    path("seats/", case.seat, name="seat"),
    path("wiki/", case.wiki_search, name="wiki"),
    path("links/", case.links, name="links"),
    path("links/template/", case.link_template, name="link-template"),
    path("return-notes/<str:note_id>/", case.return_note, name="return-note"),
    path("closeout/", closeout.closeout, name="closeout"),
    path("realisation/", realisation.realisation, name="realisation"),
    path("minutes/", minutes.minutes, name="minutes"),
    path(
        "changes/<uuid:change_id>/apply-to-baseline/",
        baseline.apply_to_baseline,
        name="change-apply-to-baseline",
    ),
    # One URL per lifecycle act, so each carries its own actor in the permission matrix.
    *(path(f"acts/{name}/", lifecycle.act, {"act": name}, name=f"act-{name}") for name in ACTS),
]
