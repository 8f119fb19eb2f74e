"""Atlassian Cloud plumbing shared by the Jira tracker and the Confluence wiki backends: the
HTTP client, the encrypted OAuth grants and the service-account credentials."""
