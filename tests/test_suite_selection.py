"""`make test` runs every test once on SQLite, and on PostgreSQL the tests that reach the
database (`--database-tests-only`): a test that reaches none asserts the same on both."""

import ast
import subprocess
from pathlib import Path

import pytest
from django.test import SimpleTestCase, TestCase, TransactionTestCase

from tests.conftest import DATABASE_FIXTURES, reaches_database

ROOT = Path(__file__).resolve().parent.parent


class _Item:
    def __init__(self, fixturenames=(), marker=None, cls=None):
        self.fixturenames = list(fixturenames)
        self._marker = marker
        self.cls = cls

    def get_closest_marker(self, name):
        return self._marker if name == "django_db" else None


def test_a_test_reaches_the_database_through_the_mark_or_a_database_fixture():
    assert reaches_database(_Item(marker=pytest.mark.django_db))
    for name in DATABASE_FIXTURES:
        assert reaches_database(_Item(["settings", name]))
    # Every test has pytest-django's blocker (an autouse fixture asks for it); it alone
    # opens nothing.
    assert not reaches_database(_Item(["settings", "django_db_blocker", "tmp_path"]))


def test_a_django_test_case_reaches_it_through_its_databases():
    """pytest-django sets a Django test case's database up while it runs: no mark, no
    fixture the collection sees."""
    assert reaches_database(_Item(["django_db_blocker"], cls=TestCase))
    assert reaches_database(_Item(["django_db_blocker"], cls=TransactionTestCase))
    assert not reaches_database(_Item(["django_db_blocker"], cls=SimpleTestCase))
    assert not reaches_database(_Item(["django_db_blocker"], cls=_Item))


@pytest.mark.django_db
def test_this_one_reaches_it(request):
    assert reaches_database(request.node)


def test_this_one_does_not(request):
    assert not reaches_database(request.node)


def test_a_fixture_that_opens_the_database_itself_asks_for_its_set_up():
    """A fixture given pytest-django's blocker (to open the database outside a test's own)
    would reach the configured database rather than the test one, and the selection would
    not see it: each asks for `django_db_setup` too."""
    found = []
    for path in ROOT.joinpath("tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef) or not any(
                "fixture" in ast.unparse(d) for d in node.decorator_list
            ):
                continue
            names = {a.arg for a in node.args.args + node.args.kwonlyargs}
            if "django_db_blocker" in names:
                found.append(node.name)
                assert "django_db_setup" in names, f"{path}: {node.name}"
    assert {"demo_rows", "module_db", "generated"} <= set(found)


def test_make_test_gives_postgresql_the_database_tests_and_sqlite_all():
    recipe = subprocess.run(
        ["make", "-n", "--no-print-directory", "test", "STAMP=Makefile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    sqlite = next(line for line in recipe.splitlines() if "env -u DATABASE_URL" in line)
    postgres = next(line for line in recipe.splitlines() if "DATABASE_URL=postgres" in line)
    assert "pytest" in sqlite and "--database-tests-only" not in sqlite
    assert "--database-tests-only" in postgres
