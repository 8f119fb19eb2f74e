from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from oauth2_provider import views as oauth_views

from config.api import api
from governance import auth_views as sign_in
from governance import oauth, views, webhooks
from status import overview

urlpatterns = [
    path("", overview.project_list, name="project-list"),
    path("accounts/login/", sign_in.LoginView.as_view(), name="login"),
    path("accounts/atlassian/login/", sign_in.atlassian_login, name="atlassian-login"),
    path("accounts/atlassian/callback/", sign_in.atlassian_callback, name="atlassian-callback"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("profile/", views.profile, name="profile"),
    path("notifications/", views.notification_list, name="notifications"),
    path("notifications/settings/", views.notification_settings, name="notification-settings"),
    path("profile/tokens/<int:token_id>/revoke/", views.token_revoke, name="token-revoke"),
    path("projects/<str:key>/", overview.project_overview, name="project-overview"),
    path("projects/<str:key>/editors/", views.project_editors, name="project-editors"),
    path("projects/<str:key>/audit/", views.project_audit, name="project-audit"),
    path("projects/<str:key>/registers/", include("registers.urls")),
    path("projects/<str:key>/charter/", include("charter.urls")),
    path("projects/<str:key>/status/", include("status.urls")),
    path("projects/<str:key>/stages/", include("gates.urls")),
    path("", include("charter.urls_site")),
    path("portfolio/", include("portfolio.urls")),
    path("investment/", include("investment.urls")),
    path("", include("agent.urls")),
    path("wiki/pages/<int:page_id>/", views.wiki_page, name="wiki-page"),
    path("outbox/", views.outbox_tasks, name="outbox-tasks"),
    path("outbox/<uuid:task_id>/retry/", views.outbox_retry, name="outbox-retry"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("hooks/jira/", webhooks.receive, name="jira-webhook"),
]

# --- MCP OAuth (governance/oauth.py): discovery at the root, the server under oauth/ ---------
_oauth_metadata = oauth.ServerMetadata.as_view()
_resource_metadata = oauth.ProtectedResourceMetadata.as_view()
urlpatterns += [
    path(".well-known/oauth-protected-resource", _resource_metadata),
    path(".well-known/oauth-protected-resource/mcp", _resource_metadata),
    path(".well-known/oauth-authorization-server", _oauth_metadata),
    path(
        "profile/clients/<int:application_id>/revoke/",
        views.client_revoke,
        name="oauth-client-revoke",
    ),
    path(
        "oauth/",
        include(
            (
                [
                    path("authorize/", oauth.Authorize.as_view(), name="authorize"),
                    path("token/", oauth.Token.as_view(), name="token"),
                    path(
                        "revoke_token/", oauth_views.RevokeTokenView.as_view(), name="revoke-token"
                    ),
                    # Registration only: no RFC 7592 management endpoint (governance/oauth.py).
                    path("register/", oauth.Register.as_view(), name="dcr-register"),
                    path(".well-known/oauth-authorization-server", _oauth_metadata),
                ],
                "oauth2_provider",
            )
        ),
    ),
]

handler500 = "governance.middleware.server_error"
