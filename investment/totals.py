"""The proposals' totals as the portfolio's rank column reads them: stored per project
(`StoredTotal`) with what each was derived at: the project's registers revision (raised in the
transaction of every change of its business case and registers: the financial case, the
adoption inputs and the risks every data criterion reads, `registers.revision`), the scoring
model's newest version number, the project's newest score and the code deployed
(`settings.DEPLOY_VERSION`, as the stored health rows' basis has it: new rules derive every
total again). A stored total is read only while all four are still the project's; the others
are derived now, by the rules (`selectors.load` without money, `selectors.score_proposal`), and
stored for the next reader. A write of those facts that does not announce itself
(`signals.project_facts_changed`) leaves the total behind, as it leaves the register summary.

Each key is read before the inputs it guards (the projects' revisions with the projects, the
model's number and the newest scores before `load`): a change committed in between leaves the
total stored under the older key, so it is derived again, never kept under the newer one.
Scores of one project are written one at a time (`services.score_set` locks the project), so
its newest score's id grows with each. Two readers deriving at once both store (the last one
wins, with the key it read): a total is never kept under a key it was not derived at, at worst
derived once more. A new model version makes every total stale at once; the next readers
derive the whole board, as every reader did before the totals were stored.

What it buys (record 0305, bench/results/2026-11-30-the-proposals-stored-totals.md): the
rank column places every viewable proposal on each portfolio page and API answer; it reads
their stored totals (three small statements) instead of each one's business case, scores and
health row derived into a total."""

from collections.abc import Mapping, Sequence
from decimal import Decimal

from django.conf import settings
from django.db.models import F, Max

from governance.models import Project
from governance.sql import AnyOf
from investment import selectors
from investment.models import ModelVersion, Score, StoredTotal

# The registers revision, the model's newest version number, the newest score, the code deployed.
Key = tuple[int, int | None, int | None, str]
KEY_FIELDS = ("revision", "model_number", "last_score_id", "deployed")


def of(revisions: Mapping[int, int]) -> dict[int, Decimal | None]:
    """Each project's total (None: not scored), by id, of the projects named with their
    registers revision as read before this call ({id: revision}): three queries when every
    stored total holds; otherwise the projects read, `load`'s (about six) and the upsert
    besides."""
    if not revisions:
        return {}
    ids = list(revisions)
    number = ModelVersion.objects.aggregate(newest=Max("number"))["newest"]
    newest = dict(
        Score.objects.filter(AnyOf(F("project_id"), ids))
        .order_by()
        .values("project_id")
        .annotate(newest=Max("pk"))
        .values_list("project_id", "newest")
    )
    keys: dict[int, Key] = {
        pk: (revision, number, newest.get(pk), settings.DEPLOY_VERSION)
        for pk, revision in revisions.items()
    }
    found: dict[int, Decimal | None] = {}
    for pk, total, *key in StoredTotal.objects.filter(AnyOf(F("project_id"), ids)).values_list(
        "project_id", "total", *KEY_FIELDS
    ):
        if keys[pk] == tuple(key):
            found[pk] = total
    stale = [pk for pk in ids if pk not in found]
    if stale:
        found.update(_derive_and_store(stale, keys))
    return found


def _derive_and_store(ids: Sequence[int], keys: dict[int, Key]) -> dict[int, Decimal | None]:
    # Read after their keys (a health row missing is derived from the project's fields).
    projects = list(Project.objects.filter(AnyOf(F("pk"), list(ids))))
    board = selectors.load(projects, money=False)
    derived = {p.pk: selectors.score_proposal(board, p.pk).total for p in projects}
    rows = [
        StoredTotal(
            project_id=pk, total=derived[pk], **dict(zip(KEY_FIELDS, keys[pk], strict=True))
        )
        for pk in sorted(derived)  # one order of locks for every writer
    ]
    StoredTotal.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["project"],
        update_fields=["total", *KEY_FIELDS],
    )
    return derived
