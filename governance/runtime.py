"""How a worker process runs the app: garbage collection tuned for serving pages.

CPython's collector runs its youngest generation every 700 allocations and, now and then, a
full collection that walks every object in the process: Django, the URL configuration, the
apps, the compiled templates. A page of a thousand portfolio rows allocates some hundred
thousand objects (decoded JSON, strings), so a request paid for several full walks of
objects that live as long as the process. `tune_gc` (called by `config.wsgi` once the
app is loaded, and by the benchmarks at the same point) moves what is alive at start-up out
of the collector's reach (`gc.freeze`) and collects the youngest generation every
GC_YOUNG_THRESHOLD allocations. Reference cycles are still collected; measured in
docs/decisions/0211 ("Start-up objects frozen")."""

import gc

GC_YOUNG_THRESHOLD = 10_000
GC_OLDER_THRESHOLDS = (20, 100)


def tune_gc() -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *GC_OLDER_THRESHOLDS)
