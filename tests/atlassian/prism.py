"""What the Prism runs share: where the mocks are (set by `make contract-prism`), and the one
liberty taken with their answers.

`getMyPermissions`' example in Atlassian's document is keyed `EDIT_ISSUES` whatever
permission is asked; a real Jira keys its answer by the permission asked. `relabelled_permissions`
sends the request to Prism unchanged (so Prism still validates it) and hands the example's
entry back under each permission asked for. `getBulkPermissions`' example likewise answers
`ADMINISTER` and `EDIT_ISSUES` in project 10001 whatever is asked; `granted_bulk_permissions`
forwards the request unchanged and answers that every permission asked is held (a service
account set up as docs/atlassian.md asks)."""

import json
import os
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest

JIRA = os.environ.get("PRISM_JIRA_URL", "")
CONFLUENCE_V2 = os.environ.get("PRISM_CONFLUENCE_V2_URL", "")
CONFLUENCE_V1 = os.environ.get("PRISM_CONFLUENCE_URL", "")

needs_prism = pytest.mark.skipif(not JIRA, reason="needs the Prism mocks: make contract-prism")


def forward(request) -> tuple[int, dict]:
    """Send a request `responses` intercepted to the mock it was meant for, outside
    `requests` (so `responses` does not catch it again). Returns (status, JSON body)."""
    data = request.body.encode() if isinstance(request.body, str) else request.body
    sent = urllib.request.Request(
        request.url, data=data, headers=dict(request.headers), method=request.method
    )
    try:
        with urllib.request.urlopen(sent, timeout=10) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        status, raw = refused.code, refused.read()
    return status, (json.loads(raw) if raw else None)


def relabelled_permissions(request):
    status, body = forward(request)
    if status == 200:
        asked = parse_qs(urlsplit(request.url).query).get("permissions", [""])[0].split(",")
        example = next(iter((body.get("permissions") or {}).values()))
        body["permissions"] = {p: {**example, "key": p} for p in asked if p}
    return status, {"Content-Type": "application/json"}, json.dumps(body)


def granted_bulk_permissions(request):
    status, body = forward(request)
    if status == 200:
        asked = json.loads(request.body)
        body = {
            "globalPermissions": list(asked.get("globalPermissions") or []),
            "projectPermissions": [
                {"permission": p, "projects": list(w.get("projects") or []), "issues": []}
                for w in asked.get("projectPermissions") or []
                for p in w.get("permissions") or []
            ],
        }
    return status, {"Content-Type": "application/json"}, json.dumps(body)
