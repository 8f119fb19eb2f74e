"""The house's arrows run one way: kernel <- registers <- charter <- status <- gates <- portfolio
<- agent <- config (the site).

An app may import from the apps below it, never from one above. Every import statement counts,
including those inside functions (a deferred import is still an upward dependency). The site
above them all (`config/`: settings, URLs, the API's mounting, the demo command) names the apps;
the kernel names none of them, not even as strings.
"""

import ast
import re
from pathlib import Path

import pytest

from config.layers import APPS

ROOT = Path(__file__).resolve().parent.parent

# Lowest first. The kernel includes its tracker and wiki backends; the site (`config`: settings,
# URLs, the API's mounting, the demo command) is above every app, and no app imports it.
LAYERS = [*APPS, "config"]


def _rank(module: str) -> int | None:
    top = module.split(".", 1)[0]
    return LAYERS.index(top) if top in LAYERS else None


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def upward_imports(app: str) -> list[str]:
    rank = LAYERS.index(app)
    found = []
    folder = ROOT / app
    if not folder.is_dir():
        return found
    for path in sorted(folder.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for lineno, module in _imports(path):
            other = _rank(module)
            if other is not None and other > rank:
                found.append(f"{path.relative_to(ROOT)}:{lineno} imports {module}")
    return found


@pytest.mark.parametrize("app", LAYERS)
def test_no_app_imports_an_app_above_it(app):
    assert upward_imports(app) == []


def test_the_scan_sees_an_upward_import(tmp_path):
    """The check itself fails on an upward import (so a green run means something)."""
    fake_root = tmp_path
    (fake_root / "registers").mkdir()
    (fake_root / "registers" / "x.py").write_text("def f():\n    from portfolio import views\n")
    global ROOT
    saved, ROOT = ROOT, fake_root
    try:
        assert upward_imports("registers") == ["registers/x.py:2 imports portfolio"]
    finally:
        ROOT = saved


# --- one writer per register -----------------------------------------------------------------

REGISTER_MODELS = {"WorkPackage", "Risk", "Decision", "ChangeRequest"}
WRITES = {
    "select_for_update",
    "update",
    "create",
    "get_or_create",
    "update_or_create",
    "bulk_create",
    "bulk_update",
    "delete",
}


def register_writes_outside(app: str) -> list[str]:
    """Query chains on a register's model that write or lock for a write, in an app other than
    the registers (the demo's seed data aside)."""
    found = []
    for path in sorted((ROOT / app).rglob("*.py")):
        if "migrations" in path.parts or path.name == "demo.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr in WRITES):
                continue
            chain = node.value
            while isinstance(chain, ast.Call | ast.Attribute):
                chain = chain.func if isinstance(chain, ast.Call) else chain.value
            if isinstance(chain, ast.Name) and chain.id in REGISTER_MODELS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {chain.id} .{node.attr}")
    return found


@pytest.mark.parametrize("app", [a for a in LAYERS if a != "registers"])
def test_only_the_registers_write_register_rows(app):
    """One answer to "who writes a work package": the business case's acts call the registers'
    services (`work_packages_baseline`, `change_apply`, ...) instead of writing the rows."""
    assert register_writes_outside(app) == []


def test_the_writer_check_sees_a_write(tmp_path, monkeypatch):
    fake_root = tmp_path
    (fake_root / "charter").mkdir()
    (fake_root / "charter" / "x.py").write_text(
        "def f(p):\n    return WorkPackage.objects.select_for_update().filter(project=p)\n"
    )
    monkeypatch.setitem(globals(), "ROOT", fake_root)
    assert register_writes_outside("charter") == ["charter/x.py:2 WorkPackage .select_for_update"]


# --- the kernel holds no upper app's vocabulary -----------------------------------------------

UPPER_KIND_PREFIXES = (
    "change.",
    "decision.",
    "risk.",
    "work_package.",
    "minutes.",
    "charter.",
    "closeout.",
    "realisation.",
    "maintenance.",
    "status.",
    "status_report.",
)
# Business-case states only the charter knows (Draft, Approved... are words the kernel's
# project mirror stores as they come).
UPPER_STATES = {"ClosingSubmitted", "InRealisation", "Realised", "NotRealised", "InMaintenance"}


def kernel_vocabulary() -> list[str]:
    found = []
    for path in sorted((ROOT / "governance").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value
            if text in UPPER_STATES or (
                text.startswith(UPPER_KIND_PREFIXES) and " " not in text and "/" not in text
            ):
                found.append((str(path.relative_to(ROOT)), node.lineno, repr(text)))
    return [f"{where}:{line} {what}" for where, line, what in sorted(found)]


def test_the_kernel_holds_no_upper_apps_phrases_states_or_labels():
    """Audit phrases, state and field labels, task labels and the frozen states come from the
    apps (their `vocabulary.register()` and handlers, in AppConfig.ready())."""
    assert kernel_vocabulary() == []


def test_the_vocabulary_check_sees_an_upper_apps_words(tmp_path, monkeypatch):
    (tmp_path / "governance").mkdir()
    (tmp_path / "governance" / "x.py").write_text(
        'PHRASES = {"charter.approved": "approved"}\nSTATES = {"InRealisation": "x"}\n'
        'URLS = "charter.urls"\n'
    )
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert kernel_vocabulary() == [
        "governance/x.py:1 'charter.approved'",
        "governance/x.py:2 'InRealisation'",
        "governance/x.py:3 'charter.urls'",
    ]


# --- the kernel names no app above it -------------------------------------------------------

UPPER_APPS = set(LAYERS[1:])
# Calls whose argument names an app (an app label or a module): the site's wiring, not the
# kernel's.
NAMING_CALLS = {"import_module", "include", "get_model", "get_app_config", "is_installed"}


def _names_an_app(text: str) -> bool:
    return text.split(".", 1)[0] in UPPER_APPS and bool(re.fullmatch(r"\w+(\.\w+)*", text))


def kernel_names() -> list[str]:
    """Where the kernel names an app above it: a module path ("charter.urls"), a list of apps
    (the API's or the demo's), an app label given to the app registry or to `include`."""
    found = []
    for path in sorted((ROOT / "governance").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if "." in text and _names_an_app(text):
                    found.append((where, node.lineno, repr(text)))
            elif isinstance(node, ast.List | ast.Tuple | ast.Set):
                apps = [
                    e.value
                    for e in node.elts
                    if isinstance(e, ast.Constant) and e.value in UPPER_APPS
                ]
                if len(apps) >= 2:
                    found.append((where, node.lineno, f"the apps {apps}"))
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name not in NAMING_CALLS:
                    continue
                for arg in node.args[:1]:
                    if isinstance(arg, ast.Constant) and arg.value in UPPER_APPS:
                        found.append((where, node.lineno, f"{name}({arg.value!r})"))
                    elif isinstance(arg, ast.JoinedStr):
                        found.append((where, node.lineno, f"{name}(<a computed app name>)"))
    return [f"{where}:{line} {what}" for where, line, what in sorted(found)]


def test_the_kernel_names_no_app_above_it():
    """The site's wiring (URLs including every app, the API's mounting, the demo command, the
    installed apps) lives in `config/`, above the apps; the kernel knows none of them."""
    assert kernel_names() == []


def test_the_names_check_sees_the_wiring(tmp_path, monkeypatch):
    (tmp_path / "governance").mkdir()
    (tmp_path / "governance" / "x.py").write_text(
        "from django.urls import include\n"
        'URLS = [include("portfolio.urls")]\n'
        'APPS = ["registers", "charter"]\n'
        "def f(app):\n"
        '    apps.get_model("status", "StatusReport")\n'
        '    return import_module(f"{app}.api")\n'
        'FIELDS = ["summary", "status"]\n'
    )
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert kernel_names() == [
        "governance/x.py:2 'portfolio.urls'",
        "governance/x.py:3 the apps ['registers', 'charter']",
        "governance/x.py:5 get_model('status')",
        "governance/x.py:6 import_module(<a computed app name>)",
    ]


# --- no circles of imports -------------------------------------------------------------------


def _app_modules(root: Path) -> dict[str, Path]:
    """Every app module by its dotted name (a package by its own name), migrations aside."""
    modules = {}
    for app in LAYERS:
        for path in sorted((root / app).rglob("*.py")) if (root / app).is_dir() else []:
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    """Which app module imports which (with the line of the first import): every import
    statement, those inside functions included, so that a circle closed by a deferred import
    is still a circle. `from package import module` names the module, not the package.
    Imports under `if TYPE_CHECKING:` are left out: they never run, so they close no circle
    (a mixin's `self` typed as the class it is mixed into is one)."""
    modules = _app_modules(root)

    def typing_only(tree: ast.AST) -> set[ast.AST]:
        found: set[ast.AST] = set()
        for node in ast.walk(tree):
            test = node.test if isinstance(node, ast.If) else None
            name = getattr(test, "id", None) or getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for statement in node.body:  # type: ignore[attr-defined]
                    found.update(ast.walk(statement))
        return found

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges = graph.setdefault(module, {})
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skipped = typing_only(tree)
        for node in ast.walk(tree):
            if node in skipped:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, base] if base else parts)
                wanted = [f"{base}.{alias.name}" for alias in node.names]
                names = [name for name in wanted if name in modules]
                if len(names) < len(wanted):
                    names.append(base)
            else:
                continue
            for name in names:
                target = owner(name)
                if target is not None and target != module:
                    edges.setdefault(target, node.lineno)
    return graph


def import_circles(root: Path) -> list[str]:
    """Each circle of imports among app modules, as "a:line -> b:line -> ... -> a"."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, {}):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    circles = []
    for component in sorted(components):
        members = set(component)
        # One circle through the component's first module, walked along its own edges.
        path, seen, node = [], set(), component[0]
        while node not in seen:
            seen.add(node)
            following = next(m for m in sorted(graph[node]) if m in members)
            path.append(f"{node}:{graph[node][following]}")
            node = following
        start = next(n for n, step in enumerate(path) if step.startswith(f"{node}:"))
        circles.append(" -> ".join([*path[start:], node]))
    return circles


def test_no_circle_of_imports_among_app_modules():
    """The import graph of every app module (imports inside functions included: a deferred
    import that closes a circle is still one) has no circle; the shared piece of two
    modules that need each other lives in a lower module both import."""
    assert import_circles(ROOT) == []


def test_the_circle_check_sees_a_circle(tmp_path, monkeypatch):
    (tmp_path / "governance").mkdir()
    (tmp_path / "governance" / "__init__.py").write_text("")
    (tmp_path / "governance" / "a.py").write_text("from governance import b\n")
    (tmp_path / "governance" / "b.py").write_text(
        "import os\n\n\ndef f():\n    from governance.c import x\n"
    )
    (tmp_path / "governance" / "c.py").write_text("from governance.a import y\n")
    (tmp_path / "governance" / "d.py").write_text("from governance import a, b\n")
    # A type-only import back (a mixin typed as its class) never runs: no circle.
    (tmp_path / "governance" / "e.py").write_text("from governance import f\n")
    (tmp_path / "governance" / "f.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from governance import e\n"
    )
    assert import_circles(tmp_path) == [
        "governance.a:1 -> governance.b:5 -> governance.c:1 -> governance.a"
    ]


def test_every_app_of_the_one_list_is_installed_type_checked_and_measured():
    """config.layers.APPS is the one list of the project's apps: the settings install each,
    mypy checks each and coverage measures each (pyproject.toml cannot import it)."""
    import tomllib

    from django.conf import settings

    assert [app for app in settings.INSTALLED_APPS if app in APPS] == list(APPS)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert set(pyproject["tool"]["mypy"]["files"]) == {"config", *APPS}
    covered = pyproject["tool"]["coverage"]["run"]["source"]
    assert set(covered) | {"agent"} == set(APPS)
