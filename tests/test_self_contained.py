"""The repository speaks only of itself: no tracked file points outside it for what a user or
contributor needs (the API reference, the product rules, the requirements and the Atlassian
contracts live in docs/ and contracts/)."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".git", ".venv", "node_modules", "staticfiles", "__pycache__", "results"}

# Written in pieces so this file does not match itself.
OUTSIDE = re.compile(
    "|".join(
        [
            r"\.\./" + "shared",
            "/work/" + "shared",
            r"seed/000_",
            r"(?<![\w/])(?:PRODUCT|DESIGN|API)\.md",
        ]
    )
)
IN_REPO = ["docs/api.md", "docs/product.md", "docs/requirements.md", "contracts/README.md"]


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
        return [ROOT / name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [
            path
            for path in ROOT.rglob("*")
            if path.is_file() and not SKIP_DIRS.intersection(path.relative_to(ROOT).parts)
        ]


def outside_references(files) -> list[str]:
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()[:100]}")
    return found


def test_no_tracked_file_points_outside_the_repository():
    files = [p for p in tracked_files() if p.resolve() != Path(__file__).resolve()]
    assert len(files) > 50
    assert outside_references(files) == []


def test_the_documents_it_points_to_are_here():
    for name in IN_REPO:
        assert (ROOT / name).is_file(), name
    specs = sorted(p.name for p in (ROOT / "contracts" / "atlassian").glob("*.json"))
    assert specs == [
        "confluence-v1-search.subset.json",
        "confluence-v2.subset.json",
        "jira-platform-v3.subset.json",
        "operations-index.json",
    ]


def test_the_scan_sees_an_outside_reference(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text('"""See ../' + 'shared/API.md."""\nok = 1\n')
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert outside_references([bad]) == ['x.py:1: """See ../' + 'shared/API.md."""']
        bad.write_text("# the rules in PRODUCT" + ".md section 2\n")
        assert len(outside_references([bad])) == 1
        bad.write_text("# the rules in docs/product.md section 2, docs/api.md\n")
        assert outside_references([bad]) == []
    finally:
        ROOT = saved
