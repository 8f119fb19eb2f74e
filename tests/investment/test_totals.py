"""The proposals' stored totals (`investment.totals`) the portfolio's rank column reads: the
same totals and ranks as the ranked list derives, read from the stored rows while their keys
hold, derived again after each change a total reads (a score, the business case, a risk, a new
model version), and never kept under a key read after the inputs."""

from decimal import Decimal

import pytest
from django.conf import settings

from charter.models import BusinessCase
from governance import summaries
from governance.models import Project
from investment import columns, selectors, services, totals
from investment.models import StoredTotal
from tests.factories import RiskFactory
from tests.investment.conftest import caller, criterion, make_project, proposal

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(governed):
    """A model of a person criterion (weight 3), the highest open risk and the adoption inputs
    (weight 1 each), and four proposals: AAA, BBB and CCC scored 5, 4 and 3, DDD unscored."""
    services.model_version_create(
        user=governed.site_admin,
        data={
            "why": "Risk counts",
            "criteria": [
                criterion("strategy", weight=3),
                criterion("risk", source="topRiskScore", weight=1),
                criterion("adoption", source="adoptionInputs", weight=1),
            ],
        },
    )
    made = {}
    for key, value in (("AAA", 5), ("BBB", 4), ("CCC", 3), ("DDD", None)):
        project = make_project(key, governed, sponsor=governed.sponsor)
        proposal(project)
        if value is not None:
            _score(governed, project, value)
        made[key] = project
    return made


def _score(governed, project, value):
    services.score_set(
        caller=caller(governed.pmo, project),
        data={"criterion": "strategy", "value": value, "reason": "r"},
    )


def _request(rf, user):
    request = rf.get("/portfolio/")
    request.user = user
    return request


def _columns(rf, user, projects):
    found = columns.values(_request(rf, user), [p.pk for p in projects.values()])
    return {key: (found[p.pk]["score"], found[p.pk]["rank"]) for key, p in projects.items()}


def _ranked_list(rf, user, projects):
    """What the ranked list answers, derived from every input now."""
    ranked = {p.project.pk: p for p in selectors.ranked(selectors.viewer_board(_request(rf, user)))}
    return {
        key: (None if ranked[p.pk].total is None else float(ranked[p.pk].total), ranked[p.pk].rank)
        for key, p in projects.items()
    }


def _stored(projects):
    held = dict(StoredTotal.objects.values_list("project_id", "total"))
    return {key: held.get(p.pk) for key, p in projects.items()}


def test_the_column_stores_the_totals_the_ranked_list_derives_and_reads_them_back(
    board, governed, rf, monkeypatch
):
    expected = _ranked_list(rf, governed.pmo, board)
    assert [expected[k][1] for k in board] == [1, 2, 3, 4]
    assert _columns(rf, governed.pmo, board) == expected
    assert _stored(board) == {
        k: (None if v is None else Decimal(str(v))) for k, (v, _) in expected.items()
    }
    # Read back: nothing derived while every key holds.
    monkeypatch.setattr(selectors, "load", _refused)
    assert _columns(rf, governed.pmo, board) == expected


def _refused(*args, **kwargs):
    raise AssertionError("derived again although every stored total holds")


def _rescore(governed, board, monkeypatch=None):
    _score(governed, board["CCC"], 5)


def _complete_the_adoption_inputs(governed, board, monkeypatch=None):
    case = BusinessCase.objects.get(project=board["DDD"])
    case.adoption_affected = "Every branch"
    case.adoption_kpi = "Weekly use"
    case.change_saturation = "Low"
    case.adoption_owner = {"accountId": governed.lead.account_id}
    case.save()


def _raise_a_risk(governed, board, monkeypatch=None):
    RiskFactory(project=board["AAA"], impact=5, likelihood=5)


def _a_new_model(governed, board, monkeypatch=None):
    services.model_version_create(
        user=governed.site_admin,
        data={"why": "People only", "criteria": [criterion("strategy", weight=1)]},
    )


def _a_new_deploy(governed, board, monkeypatch):
    monkeypatch.setattr(settings, "DEPLOY_VERSION", "a later release")


@pytest.mark.parametrize(
    "change, derived_again",
    [
        (_rescore, ["CCC"]),
        (_complete_the_adoption_inputs, ["DDD"]),
        (_raise_a_risk, ["AAA"]),
        (_a_new_model, ["AAA", "BBB", "CCC", "DDD"]),
        (_a_new_deploy, ["AAA", "BBB", "CCC", "DDD"]),
    ],
)
def test_each_change_a_total_reads_derives_it_again(
    board, governed, rf, monkeypatch, change, derived_again
):
    before = _columns(rf, governed.pmo, board)
    change(governed, board, monkeypatch)
    after = _ranked_list(rf, governed.pmo, board)
    if change is not _a_new_deploy:
        assert after != before  # the change moves a total
    derived = []
    monkeypatch.setattr(totals, "_derive_and_store", _counting(totals._derive_and_store, derived))
    assert _columns(rf, governed.pmo, board) == after
    assert derived == [derived_again]  # that project's (or every) total, the others read back
    assert _stored(board) == {
        k: (None if v is None else Decimal(str(v))) for k, (v, _) in after.items()
    }


def test_a_project_no_longer_a_proposal_has_no_rank_and_the_others_close_up(board, governed, rf):
    _columns(rf, governed.pmo, board)
    case = BusinessCase.objects.get(project=board["AAA"])
    case.approval_status = "Submitted"
    case.save()
    found = columns.values(_request(rf, governed.pmo), [p.pk for p in board.values()])
    assert board["AAA"].pk not in found
    assert [found[board[k].pk]["rank"] for k in ("BBB", "CCC", "DDD")] == [1, 2, 3]


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("change", [_rescore, _raise_a_risk])
def test_a_change_committed_while_totals_are_derived_is_derived_again(
    board, governed, rf, monkeypatch, change, when
):
    """A change that lands while a reader derives totals, before or after it reads their
    inputs: the total it stores stays under the keys it read first, so the next reader derives
    it again (and stores it under the new key) rather than keep a total under a key it was not
    derived at."""
    # The totals' own guarantee, read each time: not the ranks kept for the reader
    # (`governance.summaries`, which a change also makes read again: tests/portfolio).
    monkeypatch.setattr(summaries, "read", lambda request, name, compute, **kw: compute()[0])
    _columns(rf, governed.pmo, board)
    keys_before = _keys(board)
    StoredTotal.objects.all().delete()
    load = selectors.load

    def changed_around_the_load(*args, **kwargs):
        monkeypatch.setattr(selectors, "load", load)
        if when == "before":
            change(governed, board)
        loaded = load(*args, **kwargs)
        if when == "after":
            change(governed, board)
        return loaded

    monkeypatch.setattr(selectors, "load", changed_around_the_load)
    _columns(rf, governed.pmo, board)
    assert _keys(board) == keys_before  # stored under the keys read first
    derived = []
    monkeypatch.setattr(totals, "_derive_and_store", _counting(totals._derive_and_store, derived))
    assert _columns(rf, governed.pmo, board) == _ranked_list(rf, governed.pmo, board)
    assert derived, "a total stored under an old key was read as if it held"
    assert _keys(board) != keys_before


def _keys(board):
    return {
        key: tuple(StoredTotal.objects.filter(project=p).values_list(*totals.KEY_FIELDS)[0])
        for key, p in board.items()
    }


def _counting(function, calls):
    def counted(ids, keys):
        calls.append(sorted(Project.objects.filter(pk__in=ids).values_list("key", flat=True)))
        return function(ids, keys)

    return counted


def test_without_a_proposal_there_is_nothing_to_rank(governed, rf):
    assert totals.of({}) == {}
    assert columns.values(_request(rf, governed.pmo), []) == {}


def test_a_project_deleted_after_the_gate_read_it_is_left_out_not_stored(board, governed, rf):
    """The gate listed it, then it was deleted: no total, nothing stored for it, no error."""
    revisions = dict(Project.objects.filter(key__in=board).values_list("pk", "registers_revision"))
    gone = board["BBB"]
    gone.delete()
    found = totals.of(revisions)
    assert gone.pk not in found and not StoredTotal.objects.filter(project_id=gone.pk).exists()
    assert set(found) == {board[k].pk for k in ("AAA", "CCC", "DDD")}
