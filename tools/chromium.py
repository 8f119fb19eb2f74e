"""Find the Chromium (or Chrome) the browser tests drive, or install Debian's when allowed.

    python3 tools/chromium.py           print the browser's path; exit 1 with one line if none
    python3 tools/chromium.py ensure    the same, but install Debian's `chromium` first when
                                        none is found and this runs as root with apt-get
    python3 tools/chromium.py ensure --sudo   also install through `sudo` when not root (CI)

`CHROMIUM_PATH` names the browser explicitly; otherwise the usual command names are looked up
on PATH, then the usual install locations. Standard library only: `make test` runs it before
anything else is installed.
"""

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping

ENV_VAR = "CHROMIUM_PATH"
NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
)
LOCATIONS = (
    "/usr/bin/chromium",
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome",
    "/opt/google/chrome/chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
)
DEBIAN_PACKAGE = "chromium"


class NotFound(Exception):
    """No usable browser; the message is the one line a person reads."""


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find(
    env: Mapping[str, str] | None = None,
    which: Callable[..., str | None] = shutil.which,
    locations: tuple[str, ...] | None = None,
) -> str | None:
    """The browser's path, or None. An explicit CHROMIUM_PATH that is not an executable is an
    error (NotFound), never silently replaced by another browser."""
    env = os.environ if env is None else env
    locations = LOCATIONS if locations is None else locations
    explicit = env.get(ENV_VAR, "").strip()
    if explicit:
        resolved = explicit if os.sep in explicit else which(explicit, path=env.get("PATH"))
        if resolved and _is_executable(resolved):
            return resolved
        raise NotFound(f"{ENV_VAR}={explicit} is not an executable Chromium or Chrome.")
    for name in NAMES:
        found = which(name, path=env.get("PATH"))
        if found and _is_executable(found):
            return found
    for path in locations:
        if _is_executable(path):
            return path
    return None


def install_command(
    euid: int | None = None,
    use_sudo: bool = False,
    which: Callable[..., str | None] = shutil.which,
) -> list[str] | None:
    """How to install Debian's chromium here, or None when this process may not: apt-get must
    exist, and the process must be root (or allowed to use sudo)."""
    euid = os.geteuid() if euid is None else euid
    if not which("apt-get"):
        return None
    if euid == 0:
        return ["apt-get"]
    if use_sudo and which("sudo"):
        return ["sudo", "-E", "apt-get"]
    return None


def what_to_install() -> str:
    return (
        "The browser tests need Chromium or Google Chrome: install Debian's `chromium` "
        f"(sudo apt-get install {DEBIAN_PACKAGE}) or another Chromium/Chrome, or set "
        f"{ENV_VAR} to one."
    )


def _install(apt: list[str]) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    print(f"== installing Debian's {DEBIAN_PACKAGE} for the browser tests ==", file=sys.stderr)
    if subprocess.run([*apt, "install", "-y", "-qq", DEBIAN_PACKAGE], **quiet).returncode:
        subprocess.run([*apt, "update", "-qq"], check=True, env=env)
        subprocess.run([*apt, "install", "-y", "-qq", DEBIAN_PACKAGE], check=True, env=env)


def ensure(use_sudo: bool = False) -> str:
    """The browser's path, installing Debian's when allowed; NotFound otherwise."""
    path = find()
    if path:
        return path
    apt = install_command(use_sudo=use_sudo)
    if apt is None:
        raise NotFound(what_to_install())
    try:
        _install(apt)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise NotFound(f"Installing {DEBIAN_PACKAGE} failed ({exc}). {what_to_install()}") from exc
    path = find()
    if not path:
        raise NotFound(what_to_install())
    return path


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["ensure"]:
            path = ensure(use_sudo="--sudo" in argv)
        else:
            path = find()
            if not path:
                raise NotFound(what_to_install())
    except NotFound as exc:
        print(exc, file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
