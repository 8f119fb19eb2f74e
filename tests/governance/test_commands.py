"""`manage.py local_tracker` (docs/api.md) and `manage.py seed_demo` are idempotent."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from governance.models import AuditEntry, EditorNomination, Project, User
from governance.tracker import get_tracker
from governance.tracker.local.models import LocalAccount, LocalBrowseGrant, LocalGroup, LocalIssue


def run(*args) -> list[str]:
    out = StringIO()
    call_command("local_tracker", *args, stdout=out)
    return out.getvalue().strip().splitlines()


def signs_in(username: str, password: str) -> bool:
    """Through the sign-in page (the throttled path a person takes)."""
    client = Client()
    client.post("/accounts/login/", {"username": username, "password": password})
    return "_auth_user_id" in client.session


def test_user_prints_the_same_account_id_on_every_run(db):
    first = run("user", "kim", "--display-name", "Kim Kay", "--password", "pw-12345")[-1]
    second = run("user", "kim")[-1]
    assert first == second == User.objects.get(username="kim").account_id
    assert LocalAccount.objects.get(name="kim").display_name == "Kim Kay"
    assert signs_in("kim", "pw-12345")


def test_admin_flag_makes_a_site_admin_and_is_never_undone(db):
    account_id = run("user", "root", "--admin")[-1]
    run("user", "root")
    assert get_tracker().is_site_admin(account_id)
    assert User.objects.get(username="root").is_superuser


def test_project_issue_and_group(db):
    run("user", "lead")
    run("user", "reader")
    run("project", "ZED", "--name", "Zed", "--lead", "lead", "--browser", "reader")
    run("project", "ZED", "--name", "Zed renamed", "--lead", "lead", "--browser", "reader")
    assert LocalBrowseGrant.objects.filter(project__key="ZED").count() == 2
    assert get_tracker().get_project("ZED").name == "Zed renamed"
    assert run("issue", "ZED-1", "--summary", "Build")[-1] == "ZED-1"
    run("issue", "ZED-1", "--summary", "Build it", "--type", "Story")
    issue = LocalIssue.objects.get(key="ZED-1")
    assert (issue.summary, issue.issue_type) == ("Build it", "Story")
    run("group", "pmo", "--member", "lead", "--member", "reader")
    run("group", "pmo", "--member", "lead")
    assert LocalGroup.objects.get(name="pmo").members.count() == 2


def test_token_prints_a_working_token_alone_on_the_last_line(db):
    run("user", "bot")
    token = run("token", "bot")[-1]
    assert token.startswith("gov_") and " " not in token
    response = Client().get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200


@pytest.mark.parametrize(
    "args",
    [
        ("project", "ZED", "--name", "Zed", "--lead", "ghost"),
        ("issue", "NOPE-1", "--summary", "x"),
        ("issue", "BAD", "--summary", "x"),
        ("token", "ghost"),
        ("group", "g", "--member", "ghost"),
    ],
)
def test_errors_are_clear(db, args):
    with pytest.raises(CommandError):
        run(*args)


def test_seed_demo_is_idempotent(demo):
    counts = (
        User.objects.count(),
        Project.objects.count(),
        EditorNomination.objects.count(),
        AuditEntry.objects.count(),
        LocalIssue.objects.count(),
    )
    call_command("seed_demo", stdout=StringIO())
    again = (
        User.objects.count(),
        Project.objects.count(),
        EditorNomination.objects.count(),
        AuditEntry.objects.count(),
        LocalIssue.objects.count(),
    )
    assert counts == again
    assert counts[1] >= 6
    assert signs_in("lena", "governance-demo")


def test_a_browser_without_an_account_stops_the_project_and_grants_nothing(db):
    run("user", "lead")
    run("user", "reader")
    with pytest.raises(CommandError, match="ghost"):
        run(
            "project",
            "ZED",
            "--name",
            "Zed",
            "--lead",
            "lead",
            "--browser",
            "reader",
            "--browser",
            "ghost",
        )
    assert not LocalBrowseGrant.objects.exists()
    assert not get_tracker().get_project("ZED")
    run("project", "ZED", "--name", "Zed", "--lead", "lead", "--browser", "reader")
    run("project", "ZED", "--name", "Zed", "--lead", "lead", "--browser", "reader")
    assert sorted(LocalBrowseGrant.objects.values_list("account__name", flat=True)) == [
        "lead",
        "reader",
    ]
