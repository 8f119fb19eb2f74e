"""The Atlassian integration's two failures, shared by its HTTP client (`http`) and the
sign-in grants it refreshes tokens from (`grants`)."""

from governance.tracker.base import TrackerError


class AtlassianUnavailable(Exception):
    """The Atlassian authorization server could not answer a token refresh."""


class SignInRequired(TrackerError):
    """The person's Atlassian grant is missing, expired beyond refresh, or revoked: they go
    back through sign-in. A TrackerError, so callers that degrade on tracker trouble do."""
