"""The summaries stored per reader under parallel reads and writes, on PostgreSQL (record
0308): readers in several threads store and read their summaries while writers in others
give and take grants, each write raising the revision in its own transaction. No request
fails, and once the writes stop every reader reads the counts the rows give."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import close_old_connections, connection, transaction
from django.test import Client

from governance.models import Project
from governance.tracker.local.models import LocalAccount, LocalProject
from tests.factories import ProjectFactory

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="parallel transactions on PostgreSQL"
)

READERS, ROUNDS = 3, 12


def test_parallel_readers_and_writers_end_on_the_rows_counts(transactional_db, cast):
    admin = cast.site_admin
    for n in range(6):
        ProjectFactory(key=f"PAR{n}", browsers=[admin])
    account = LocalAccount.objects.get(account_id=admin.account_id)
    sessions = []
    for _ in range(READERS):
        client = Client()
        client.force_login(admin)
        sessions.append(client)

    def read(client: Client) -> list[str]:
        wrong = []
        try:
            for _ in range(ROUNDS):
                for url in ("/", "/portfolio/", "/api/v1/portfolio"):
                    status = client.get(url).status_code
                    if status != 200:
                        wrong.append(f"GET {url} -> {status}")
        finally:
            close_old_connections()
            connection.close()
        return wrong

    def write(number: int) -> list[str]:
        try:
            for n in range(ROUNDS):
                tracked = LocalProject.objects.get(key=f"PAR{(number + n) % 6}")
                with transaction.atomic():
                    if n % 2:
                        tracked.browsers.add(account)
                    else:
                        tracked.browsers.remove(account)
        finally:
            connection.close()
        return []

    with ThreadPoolExecutor(max_workers=READERS + 2) as pool:
        readers = [pool.submit(read, client) for client in sessions]
        writers = [pool.submit(write, number) for number in range(2)]
        wrong = [line for job in readers + writers for line in job.result()]
    assert not wrong, wrong[:10]
    browsed = LocalProject.objects.filter(browsers=account).count()
    assert 1 <= browsed <= Project.objects.count()
    for client in sessions:
        response = client.get("/")
        assert response.context["total"] == browsed
        assert client.get("/portfolio/").context["data"].total == browsed


def test_a_writer_holding_a_revision_row_stalls_no_other_writer(transactional_db):
    """A long transaction that raised the revision holds one row; another writer raises
    another at once (no wait, so no deadlock through these rows)."""
    import threading

    from governance.models import SummaryRevision, summaries_changed

    summaries_changed()  # the rows, as migrated (a test before may have emptied the tables)
    held, release = threading.Event(), threading.Event()

    def long_writer():
        try:
            with transaction.atomic():
                summaries_changed()
                held.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=long_writer)
    thread.start()
    try:
        assert held.wait(10)
        before = list(SummaryRevision.objects.order_by("pk").values_list("stamp", flat=True))
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            summaries_changed()  # would raise LockNotAvailable if it waited on the held row
        after = list(SummaryRevision.objects.order_by("pk").values_list("stamp", flat=True))
        assert sum(a != b for a, b in zip(before, after, strict=True)) == 1
    finally:
        release.set()
        thread.join()
