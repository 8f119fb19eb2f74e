"""The fault run's verdict (tools/faults.py): what it counts per phase and what fails it."""

from tools.faults import report


def _record(phase, status, title=None, kind="api write"):
    return {"phase": phase, "kind": kind, "status": status, "title": title}


def test_a_clean_run_passes_and_counts_per_phase():
    records = [
        _record("outage", 503, "a"),
        _record("outage", 503, kind="api read"),
        _record("after", 201, "b"),
        _record("after", "dropped", "c"),
    ]
    phases, failures = report(records, {"b": 1, "c": 1}, {"postgres": 0.3})
    assert failures == []
    assert phases["outage"]["statuses"] == {"503": 2}
    assert phases["outage"]["refused"] == 1 and phases["outage"]["refusedFound"] == 0
    assert phases["after"]["acknowledgedFound"] == 1
    assert phases["after"]["dropped"] == 1 and phases["after"]["droppedFound"] == 1
    assert phases["after"]["auditRowsPerWrite"] == {"1": 2}


def test_every_fault_fails_the_run():
    records = [
        _record("p", 201, "lost"),
        _record("p", 503, "stored anyway"),
        _record("p", 500, kind="page read"),
        _record("p", 201, "two audits"),
    ]
    _, failures = report(records, {"stored anyway": 1, "two audits": 2}, {"redis": 2.5, "pg": None})
    text = "\n".join(failures)
    assert "acknowledged write lost was lost" in text
    assert "refused write stored anyway (503) was stored" in text
    assert "500 on page read" in text
    assert "two audits has 2 audit rows" in text
    assert "redis: recovery took 2.5 s" in text and "pg: recovery took None s" in text
