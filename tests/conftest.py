"""The standard cast: lead, editor, viewer, sponsor, outsider, site_admin, pmo (a member of
the governance group), on project ALPHA."""

import copy
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.core import serializers
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, transaction
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations
from django.test import Client, override_settings

from governance import gatelist
from governance.models import Project, SiteSettings, User
from governance.services import token_create
from governance.tracker.local import scripting
from tests.factories import ProjectFactory, UserFactory, nominate

ROLES = ["anonymous", "outsider", "viewer", "editor", "lead", "sponsor", "site_admin", "pmo"]
PMO_GROUP = "pmo"


def _flush_by_delete(self, style, tables, *, reset_sequences=False, allow_cascade=False):
    """PostgreSQL's flush as one DELETE a table instead of one TRUNCATE of them all. A
    transactional test (a live server, a browser, threads that commit) is flushed after it;
    TRUNCATE makes every table's files anew, about 3 s for this schema's 70 tables of a few
    rows, where DELETE takes a twentieth of a second. Both leave every table empty and the
    sequences where they were; the foreign keys are deferrable (Django's), so the order of the
    tables does not matter. A flush that restarts the sequences stays TRUNCATE's."""
    if reset_sequences or not tables:
        return _truncate_flush(
            self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
    return [
        "SET CONSTRAINTS ALL DEFERRED;",
        *(f"DELETE FROM {self.quote_name(table)};" for table in tables),
    ]


_truncate_flush = PostgresOperations.sql_flush


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete_on_postgresql():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PostgresOperations, "sql_flush", _flush_by_delete)
        yield


# Every test's settings: a fast password hasher, the outbox run when a write commits.
TEST_SETTINGS = {
    "PASSWORD_HASHERS": ["django.contrib.auth.hashers.MD5PasswordHasher"],
    "OUTBOX_RUN_ON_COMMIT": True,
}


@pytest.fixture(autouse=True)
def _fast_and_isolated(settings):
    for name, value in TEST_SETTINGS.items():
        setattr(settings, name, copy.deepcopy(value))
    cache.clear()
    yield
    cache.clear()


@contextmanager
def built_and_rolled_back(django_db_blocker):
    """Rows built outside a test, with the tests' settings, in a transaction rolled back when
    the block ends (whatever it returns or yields is read inside it)."""
    with django_db_blocker.unblock(), override_settings(**TEST_SETTINGS), transaction.atomic():
        cache.clear()
        try:
            yield
        finally:
            transaction.set_rollback(True)
    cache.clear()


class _Answering:
    """The live server's application, counting the requests it is still answering. A browser
    test can end while the server is answering the page's last request (a form sent, a
    navigation under way); the database is flushed after the test, and a flush of SQLite's
    in-memory database that the server thread shares fails while that request reads it."""

    def __init__(self, app):
        self.app = app
        self.count = 0
        self.changed = threading.Condition()

    def __call__(self, environ, start_response):
        with self.changed:
            self.count += 1
        try:
            return _Answer(self.app(environ, start_response), self._done)
        except BaseException:
            self._done()
            raise

    def _done(self):
        with self.changed:
            self.count -= 1
            self.changed.notify_all()

    def wait(self, seconds: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.count == 0, timeout=seconds)


class _Answer:
    """A response's body, telling the counter when the server has closed it (WSGI's close)."""

    def __init__(self, body, done):
        self.body, self.done, self.closed = body, done, False

    def __iter__(self):
        return iter(self.body)

    def close(self):
        if self.closed:
            return
        self.closed = True
        try:
            if hasattr(self.body, "close"):
                self.body.close()
        finally:
            self.done()


@pytest.fixture(autouse=True)
def _live_server_answered(request):
    """After a test with the live server, wait until the server has answered every request
    it took, before the test's database is flushed."""
    if "live_server" not in request.fixturenames:
        yield
        return
    # Set up before the server is watched, so torn down (flushed) after the wait below.
    request.getfixturevalue("transactional_db")
    server = request.getfixturevalue("live_server").thread.httpd
    app = server.get_app()
    if not isinstance(app, _Answering):
        app = _Answering(app)
        server.set_app(app)
    yield
    assert app.wait(30), "the live server was still answering a request 30 s after the test"


# --- the demo, seeded once per session ------------------------------------------------------


@pytest.fixture(scope="session")
def demo_rows(django_db_setup, django_db_blocker) -> str:
    """The demo portfolio (`seed_demo`), seeded once per test session (per xdist worker) and
    kept as serialized rows; the seeding is rolled back, so the database stays empty."""
    with built_and_rolled_back(django_db_blocker):
        call_command("seed_demo", stdout=StringIO())
        return connection.creation.serialize_db_to_string()


@pytest.fixture(scope="session", autouse=True)
def _demo_seeded_before_any_flush(request):
    """`demo_rows` seeds the demo on the database as the migrations left it (the default
    stages are a data migration's rows). A transactional test's flush empties every table, so
    a worker whose first demo test came after one would seed on a site without them; when the
    run holds a test that loads the demo, it is seeded before this worker's first test."""
    if any("demo_rows" in item.fixturenames for item in request.session.items):
        request.getfixturevalue("demo_rows")


def load_rows(data: str) -> None:
    """Rows serialized by `serialize_db_to_string`, loaded as `deserialize_db_from_string`
    loads them (raw: each field's value as serialized, no `auto_now`, no default; a row whose
    key is already stored is saved over it as that does) but a model's new rows inserted a
    model at a time (`_insert_raw`): one `executemany` a model instead of an UPDATE and an
    INSERT a row (the demo's 2,700 rows: 5,400 statements, 2 to 4 s a test on PostgreSQL)."""
    objects = list(serializers.deserialize("json", data))
    by_model: dict[type, list] = {}
    for deserialized in objects:
        by_model.setdefault(type(deserialized.object), []).append(deserialized)
    with transaction.atomic(), connection.constraint_checks_disabled():
        for model, rows in by_model.items():
            stored = set(model._base_manager.values_list("pk", flat=True))
            new = [row.object for row in rows if row.object.pk not in stored]
            for row in rows:
                if row.object.pk in stored:
                    row.save()  # as `deserialize_db_from_string` does: its m2m too
            _insert_raw(model, new)
            for row in rows:
                if row.object.pk not in stored:
                    for name, values in row.m2m_data.items():
                        getattr(row.object, name).set(values)
        connection.check_constraints(table_names={model._meta.db_table for model in by_model})


def _insert_raw(model, objects) -> None:
    """`objects` inserted as a raw save inserts them (each field's value as it stands: no
    `pre_save`, so no `auto_now`), in one `executemany` through Django's cursor."""
    if not objects:
        return
    fields = [f for f in model._meta.local_concrete_fields if not f.generated]
    quote = connection.ops.quote_name
    sql = "INSERT INTO {} ({}) VALUES ({})".format(
        quote(model._meta.db_table),
        ", ".join(quote(f.column) for f in fields),
        ", ".join(["%s"] * len(fields)),
    )
    rows = [
        [field.get_db_prep_save(getattr(row, field.attname), connection) for field in fields]
        for row in objects
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


@pytest.fixture
def demo(db, demo_rows) -> None:
    """The demo's rows, loaded in this test's own transaction: rolled back after it like any
    other write, so no test sees what another wrote."""
    # After a transactional test's flush, migrate's signal makes the content types and
    # permissions again under new ids; the demo's rows carry the ids they were seeded with.
    Permission.objects.all().delete()
    ContentType.objects.all().delete()
    load_rows(demo_rows)
    ContentType.objects.clear_cache()
    # Rows loaded with their ids: the sequences go past them (PostgreSQL does not by itself).
    statements = connection.ops.sequence_reset_sql(no_style(), apps.get_models())
    if statements:
        with connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)


@dataclass
class Cast:
    lead: User
    editor: User
    viewer: User
    sponsor: User
    outsider: User
    site_admin: User
    pmo: User
    project: Project

    def user(self, role: str) -> User | None:
        return None if role == "anonymous" else getattr(self, role)


def build_cast() -> Cast:
    lead = UserFactory(username="lead", display_name="Lena Lead")
    editor = UserFactory(username="editor", display_name="Eddie Editor")
    viewer = UserFactory(username="viewer", display_name="Vera Viewer")
    sponsor = UserFactory(username="sponsor", display_name="Sam Sponsor")
    outsider = UserFactory(username="outsider", display_name="Otto Outsider")
    site_admin = UserFactory(username="site_admin", display_name="Ada Admin", admin=True)
    pmo = UserFactory(username="pmo", display_name="Priya PMO")
    project = ProjectFactory(
        key="ALPHA",
        name="Alpha programme",
        lead=lead,
        browsers=[editor, viewer, sponsor, site_admin, pmo],
    )
    nominate(project, editor)
    project.sponsor_account_id = sponsor.account_id
    project.save(update_fields=["sponsor_account_id"])
    scripting.ensure_group(PMO_GROUP, members=["pmo"])
    # The outsider browses a project of their own, so "no access" is about ALPHA, not emptiness.
    ProjectFactory(key="OTHER", name="Other project", lead=outsider)
    return Cast(lead, editor, viewer, sponsor, outsider, site_admin, pmo, project)


@pytest.fixture
def cast(db) -> Cast:
    return build_cast()


# The cast's roles, as `Cast` names them.
ROLES = ["lead", "editor", "sponsor", "viewer", "outsider", "site_admin", "pmo"]


def roles_told_apart(cast: Cast) -> Cast:
    """The cast's ALPHA and OTHER, and projects that tell the rules apart: BETA, whose
    steering committee seats the viewer and the outsider (who does not browse it); GAMMA,
    which the site administrator and the governance group's member do not browse; DELTA, led
    by the editor, with the sponsor its nominated editor and the viewer (who does not browse
    it) its sponsor."""
    beta = ProjectFactory(key="BETA", lead=cast.lead, browsers=[cast.viewer, cast.site_admin])
    beta.steering_account_ids = [cast.viewer.account_id, cast.outsider.account_id]
    beta.save(update_fields=["steering_account_ids"])
    ProjectFactory(key="GAMMA", lead=cast.sponsor, browsers=[cast.viewer])
    delta = ProjectFactory(key="DELTA", lead=cast.editor, browsers=[cast.sponsor, cast.pmo])
    nominate(delta, cast.sponsor, by=cast.editor)
    delta.sponsor_account_id = cast.viewer.account_id
    delta.save(update_fields=["sponsor_account_id"])
    return cast


# --- what a module's tests read, built once for the module ----------------------------------


@pytest.fixture(scope="module")
def module_db(django_db_setup, django_db_blocker):
    """A transaction held open across a test module, for data that many of its tests read
    and none keeps: a module-scoped fixture that asks for this one builds its rows inside it,
    once (per xdist worker), instead of once a test. Each test's own transaction (the `db`
    fixture) is a savepoint inside this one and is rolled back after the test as always, so
    no test sees what another wrote; the module's rows are rolled back after its last test.
    This is Django's `setUpTestData` for pytest: hand each test a `copy.deepcopy` of the
    objects built (`fresh`), as Django does, so a test that changes one in memory does not
    change it for the next. Not for a module with transactional tests (a live server,
    threads that commit): they cannot run inside a transaction."""
    with built_and_rolled_back(django_db_blocker):
        yield


def fresh(built):
    """A test's own copy of what a module-scoped fixture built (see `module_db`)."""
    return copy.deepcopy(built)


def set_governance_group(name: str) -> None:
    site = SiteSettings.load()
    site.governance_group = name
    site.save()


@pytest.fixture
def client_for():
    """A logged-in test client for a user (anonymous when None)."""

    def make(user: User | None, **kwargs) -> Client:
        client = Client(**kwargs)
        if user is not None:
            client.force_login(user)
        return client

    return make


@pytest.fixture
def bearer():
    """Authorization headers with a fresh API token for a user."""
    return bearer_headers


def bearer_headers(user: User) -> dict:
    _, raw = token_create(user=user, name="test")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


# What gives a test the database: pytest-django refuses every other test's queries, so a test
# with none of these (nor a Django test case class that names its `databases`) reaches no
# database. A fixture that opens the database itself (takes `django_db_blocker`) asks for
# `django_db_setup`, which also points it at the test database rather than the configured one.
DATABASE_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_setup",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "live_server",
    }
)


def reaches_database(item) -> bool:
    return (
        item.get_closest_marker("django_db") is not None
        or not DATABASE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))
        # django.test.TestCase and TransactionTestCase: pytest-django sets their database up
        # while they run, without a mark or a fixture the collection sees.
        or bool(getattr(getattr(item, "cls", None), "databases", None))
    )


def pytest_addoption(parser):
    parser.addoption(
        "--database-tests-only",
        action="store_true",
        help="run only the tests that reach the database: `make test` runs the others once, "
        "on SQLite, and the second database takes these",
    )


def is_browser_test(item) -> bool:
    """A test that drives the browser: Playwright's sync API runs its event loop in the test
    thread, and the session's Playwright stays started after it."""
    callspec = getattr(item, "callspec", None)
    return item.get_closest_marker("browser") is not None or (
        callspec is not None and "browser_name" in callspec.params
    )


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    # The browser tests run last, each worker's after every other test it runs (xdist hands
    # a worker the tests in this order). pytest groups the tests of one session-scoped
    # parameter (Playwright's `browser_name`) where the first of them stands, which put the
    # browser tests, transactional ones, among the others: a test after them met a database
    # flushed of its migrations' rows (the site's default stages) and a thread whose event
    # loop Playwright marks running (the MCP endpoint through the test client answered "You
    # cannot use AsyncToSync in the same thread as an async event loop"). The sort is stable:
    # pytest-django's order of the others (transactional after the rest) stays.
    items.sort(key=is_browser_test)
    if config.getoption("--database-tests-only"):
        reached = {item: reaches_database(item) for item in items}
        config.hook.pytest_deselected(items=[item for item in items if not reached[item]])
        items[:] = [item for item in items if reached[item]]
    # Playwright's sync API runs an event loop in the test thread; Django's ORM calls from
    # browser tests are still synchronous, so allow them there.
    if any(item.get_closest_marker("browser") for item in items):
        os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def run_async(main):
    """`anyio.run(main)` in a thread of its own, so it also runs where a loop is marked
    running in the main thread: after a browser test in the same process (Playwright's loop;
    the browser tests run last, `pytest_collection_modifyitems`), a second loop cannot start
    there."""
    import anyio

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, main).result()


@pytest.fixture
def callers_read(monkeypatch) -> list[str]:
    """The keys of the projects whose callers are made (`gatelist.page_callers`), in order:
    what a page across projects read of them."""
    read: list[str] = []
    page_callers = gatelist.page_callers

    def spy(request, projects):
        read.extend(project.key for project in projects)
        return page_callers(request, projects)

    monkeypatch.setattr(gatelist, "page_callers", spy)
    return read
