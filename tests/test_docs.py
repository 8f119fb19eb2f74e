"""The documents a newcomer reads stay true to the tree: the README fits two screens and starts
with the two commands, every error code the app answers is in the reference with its status,
every relative link resolves, and each decision record is dated, has a status and is indexed."""

import re
from pathlib import Path

from governance import errors
from governance.api import ERROR_CODES

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")
RECORD = re.compile(r"^\d{4}-[a-z0-9-]+\.md$")


def error_classes(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *error_classes(sub)]
    return found


def documents() -> list[Path]:
    found = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    return found + sorted((ROOT / "bench" / "results").glob("*.md"))


def test_the_readme_starts_with_the_two_commands_and_fits_two_screens():
    text = (ROOT / "README.md").read_text()
    first_block = text.split("```")[1]
    assert "make run" in first_block and "make test" in first_block
    assert "governance-demo" in text
    assert len(text.splitlines()) <= 100


def test_every_error_code_is_declared_and_listed_with_its_status():
    codes = {
        cls.code: cls.status for cls in [errors.DomainError, *error_classes(errors.DomainError)]
    }
    assert set(codes) == set(ERROR_CODES)
    reference = (ROOT / "docs" / "reference.md").read_text()
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^\| `([a-z_]+)` \| ([^|]+) \|", reference, re.MULTILINE)
    }
    for code, status in codes.items():
        assert code in rows, f"docs/reference.md, Error codes: add {code}"
        assert str(status) in rows[code], (code, status, rows[code])


def test_every_relative_link_in_the_documents_resolves():
    broken = []
    for doc in documents():
        for target in LINK.findall(doc.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (doc.parent / target.split("#")[0]).exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert broken == []


def test_each_decision_record_is_dated_has_a_status_and_is_indexed():
    folder = ROOT / "docs" / "decisions"
    records = sorted(p.name for p in folder.iterdir() if RECORD.match(p.name))
    assert len(records) > 200
    index = (folder / "README.md").read_text()
    numbers = [name[:4] for name in records]
    assert numbers == [f"{n:04d}" for n in range(1, len(records) + 1)]
    for name in records:
        text = (folder / name).read_text()
        assert re.search(r"^- Date: \d{4}-\d{2}-\d{2}$", text, re.MULTILINE), name
        status = re.search(r"^- Status: (.+)$", text, re.MULTILINE)
        assert status and re.match(r"(Accepted|Superseded by \[\d{4}\])", status.group(1)), name
        assert "## Context" in text and "## Decision" in text, name
        assert f"]({name})" in index, f"docs/decisions/README.md: index {name}"


def test_nothing_points_to_the_single_decisions_file_any_more():
    gone = "docs/" + "decisions.md"
    hits = [
        str(path.relative_to(ROOT))
        for pattern in ("*.py", "*.md", "*.html", "Makefile", "*.toml")
        for path in ROOT.rglob(pattern)
        if not {".git", ".venv", "node_modules"}.intersection(path.relative_to(ROOT).parts)
        and path.is_file()
        and gone in path.read_text(errors="ignore")
    ]
    assert hits == []
