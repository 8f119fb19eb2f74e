"""The worker's garbage-collection policy (governance/runtime.py), applied by config.wsgi."""

import gc
import importlib
import sys

from governance import runtime


def test_tune_gc_freezes_what_is_loaded_and_collects_the_young_less_often():
    before = gc.get_threshold()
    try:
        runtime.tune_gc()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (runtime.GC_YOUNG_THRESHOLD, *runtime.GC_OLDER_THRESHOLDS)
        assert gc.isenabled()  # cycles are still collected
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_wsgi_entry_point_tunes_the_collector(monkeypatch):
    called = []
    monkeypatch.setattr(runtime, "tune_gc", lambda: called.append(True))
    monkeypatch.delitem(sys.modules, "config.wsgi", raising=False)
    wsgi = importlib.import_module("config.wsgi")
    assert called == [True]
    assert callable(wsgi.application)
