"""An app's optional module, found by name: the API's routers and the demo's seeders."""

from importlib import import_module
from types import ModuleType


def optional_module(app: str, name: str) -> ModuleType | None:
    """The module `name` of `app` (e.g. `registers.api`), or None when the app has none; an
    import error inside the module itself is raised."""
    dotted = f"{app}.{name}"
    try:
        return import_module(dotted)
    except ModuleNotFoundError as exc:
        if exc.name != dotted:
            raise
        return None
