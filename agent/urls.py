from django.urls import path

from agent import views
from agent.mcp_server import mcp_endpoint

urlpatterns = [
    path("mcp", mcp_endpoint, name="mcp"),
    path("assistant/", views.assistant_page, name="assistant"),
    path("assistant/clear/", views.assistant_clear, name="assistant-clear"),
    path("assistant/actions/<str:name>/", views.action_form, name="assistant-action"),
    path(
        "assistant/proposals/<uuid:proposal_id>/confirm/",
        views.proposal_confirm,
        name="assistant-confirm",
    ),
    path(
        "assistant/proposals/<uuid:proposal_id>/dismiss/",
        views.proposal_dismiss,
        name="assistant-dismiss",
    ),
]
