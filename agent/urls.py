from django.urls import include, path

from agent import views
from agent.mcp_server import mcp_endpoint

proposal_patterns = [
    path("confirm/", views.proposal_confirm, name="assistant-confirm"),
    path("dismiss/", views.proposal_dismiss, name="assistant-dismiss"),
]

assistant_patterns = [
    path("", views.assistant_page, name="assistant"),
    path("clear/", views.assistant_clear, name="assistant-clear"),
    path("actions/<str:name>/", views.action_form, name="assistant-action"),
    path("proposals/<uuid:proposal_id>/", include(proposal_patterns)),
]

urlpatterns = [
    path("mcp", mcp_endpoint, name="mcp"),
    path("assistant/", include(assistant_patterns)),
]
