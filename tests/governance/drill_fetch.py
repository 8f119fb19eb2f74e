"""Fetch a set of pages and API answers from the database DATABASE_URL names, as the signed-in
people of a backup drill (tests/governance/test_backup_drill.py), and print them as JSON:
{path: [status, body]}, with the per-response CSRF tokens and CSP nonces masked.

Usage: DATABASE_URL=... python -m tests.governance.drill_fetch REQUESTS_JSON"""

import json
import re
import sys

MASKS = [
    (re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]*'), r"\1-"),
    (re.compile(r'("X-CSRFToken": ")[^"]*'), r"\1-"),
    (re.compile(r'(nonce=")[^"]*'), r"\1-"),
]


def mask(body: str) -> str:
    for pattern, replacement in MASKS:
        body = pattern.sub(replacement, body)
    return body


def main(requests: list[dict]) -> dict:
    import django

    django.setup()
    from django.conf import settings
    from django.test import Client

    answers = {}
    for request in requests:
        client = Client()
        headers = {}
        if request.get("session"):
            client.cookies[settings.SESSION_COOKIE_NAME] = request["session"]
        if request.get("token"):
            headers["HTTP_AUTHORIZATION"] = f"Bearer {request['token']}"
        response = client.get(request["path"], **headers)
        answers[request["label"]] = [response.status_code, mask(response.content.decode())]
    return answers


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
