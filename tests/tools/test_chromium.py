"""`make test` finds the machine's Chromium or Chrome, installs Debian's when it may, and
otherwise stops before running anything with one line saying what to install."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tools import chromium

ROOT = Path(__file__).resolve().parents[2]


def _fake_browser(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _env(path_dirs, **extra) -> dict[str, str]:
    return {"PATH": os.pathsep.join(str(d) for d in path_dirs), **extra}


@pytest.mark.parametrize("name", ["chromium", "chromium-browser", "google-chrome", "chrome"])
def test_finds_each_usual_name_on_path(tmp_path, name):
    browser = _fake_browser(tmp_path / "bin", name)
    assert chromium.find(_env([tmp_path / "bin"]), locations=()) == str(browser)


def test_prefers_chromium_over_chrome_in_path_order(tmp_path):
    _fake_browser(tmp_path / "a", "google-chrome")
    wanted = _fake_browser(tmp_path / "b", "chromium")
    assert chromium.find(_env([tmp_path / "a", tmp_path / "b"]), locations=()) == str(wanted)


def test_a_file_that_is_not_executable_does_not_count(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "chromium").write_text("not a program")
    assert chromium.find(_env([tmp_path / "bin"]), locations=()) is None


def test_falls_back_to_the_usual_locations(tmp_path):
    located = _fake_browser(tmp_path / "opt" / "google" / "chrome", "chrome")
    assert chromium.find(_env([tmp_path / "empty"]), locations=(str(located),)) == str(located)


def test_nothing_anywhere_is_none(tmp_path):
    assert chromium.find(_env([tmp_path / "empty"]), locations=()) is None


def test_the_setting_names_the_browser(tmp_path):
    _fake_browser(tmp_path / "bin", "chromium")
    chosen = _fake_browser(tmp_path / "elsewhere", "my-chrome")
    env = _env([tmp_path / "bin"], CHROMIUM_PATH=str(chosen))
    assert chromium.find(env, locations=()) == str(chosen)


def test_the_setting_may_be_a_command_name(tmp_path):
    chosen = _fake_browser(tmp_path / "bin", "chrome-beta")
    env = _env([tmp_path / "bin"], CHROMIUM_PATH="chrome-beta")
    assert chromium.find(env, locations=()) == str(chosen)


def test_a_wrong_setting_is_refused_not_replaced(tmp_path):
    _fake_browser(tmp_path / "bin", "chromium")
    env = _env([tmp_path / "bin"], CHROMIUM_PATH="/nowhere/chromium")
    with pytest.raises(chromium.NotFound, match="CHROMIUM_PATH=/nowhere/chromium"):
        chromium.find(env, locations=())


def test_installs_only_as_root_with_apt_get():
    with_apt = lambda name: f"/usr/bin/{name}"  # noqa: E731
    without_apt = lambda name: None  # noqa: E731
    assert chromium.install_command(euid=0, which=with_apt) == ["apt-get"]
    assert chromium.install_command(euid=1000, which=with_apt) is None
    assert chromium.install_command(euid=1000, use_sudo=True, which=with_apt) == [
        "sudo",
        "-E",
        "apt-get",
    ]
    assert chromium.install_command(euid=0, which=without_apt) is None


def test_ensure_stops_with_one_line_when_it_may_not_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CHROMIUM_PATH", raising=False)
    monkeypatch.setattr(chromium, "LOCATIONS", ())
    monkeypatch.setattr(chromium.os, "geteuid", lambda: 1000)
    with pytest.raises(chromium.NotFound) as refused:
        chromium.ensure()
    assert "\n" not in str(refused.value)
    assert "apt-get install chromium" in str(refused.value)


def test_ensure_installs_as_root(monkeypatch, tmp_path):
    """As root with apt-get, the missing browser is installed, then found."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_browser(bin_dir, "apt-get")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("CHROMIUM_PATH", raising=False)
    monkeypatch.setattr(chromium, "LOCATIONS", ())
    monkeypatch.setattr(chromium.os, "geteuid", lambda: 0)
    ran = []

    def fake_install(apt):
        ran.append(apt)
        _fake_browser(bin_dir, "chromium")

    monkeypatch.setattr(chromium, "_install", fake_install)
    assert chromium.ensure() == str(bin_dir / "chromium")
    assert ran == [["apt-get"]]


def test_the_command_line_prints_one_line_and_fails(tmp_path):
    """What `make test` runs first: no browser, not root -> exit 1, one line, nothing on
    stdout."""
    env = {"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path)}
    code = (
        "import sys, os; sys.path.insert(0, sys.argv[1]); from tools import chromium; "
        "chromium.LOCATIONS = (); "
        "os.geteuid = lambda: 1000; raise SystemExit(chromium.main(['ensure']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().count("\n") == 0
    assert "chromium" in done.stderr


def test_the_command_line_prints_the_path(tmp_path):
    browser = _fake_browser(tmp_path / "bin", "chromium")
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "chromium.py")],
        env={"PATH": str(tmp_path / "bin")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    assert done.stdout.strip() == str(browser)


def test_make_test_checks_the_browser_before_anything_else():
    makefile = (ROOT / "Makefile").read_text()
    for target in ("test", "test-sqlite", "test-postgres"):
        line = next(ln for ln in makefile.splitlines() if ln.startswith(f"{target}:"))
        assert line.split(":", 1)[1].split()[0] == "chromium", line
    assert "tools/chromium.py ensure" in makefile
