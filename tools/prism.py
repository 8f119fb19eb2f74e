"""Serve Atlassian's contract documents with Prism while one command runs, then stop them.

    python3 tools/prism.py [--port 4010] -- COMMAND [ARGS...]

Starts three validating mocks (`prism mock`, request validation on) on 127.0.0.1: Jira on
PORT, Confluence v2 on PORT+1, Confluence v1 (CQL search, labels) on PORT+2, each logging to
.prism-<name>.log. Once all three answer, runs COMMAND with PRISM_JIRA_URL,
PRISM_CONFLUENCE_V2_URL and PRISM_CONFLUENCE_URL set, stops the mocks whatever happens (also on
Ctrl-C or SIGTERM), and exits with COMMAND's status. Refuses, with one line, when a port is
already taken (another run's mocks would answer instead) or a mock does not come up.
Standard library only. `make contract-prism` installs Prism (package.json) and calls this.
"""

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = ROOT / "contracts" / "atlassian"
PRISM = ROOT / "node_modules" / ".bin" / "prism"
HOST = "127.0.0.1"
# (name, document, environment variable naming its URL), on PORT, PORT+1, PORT+2.
MOCKS = (
    ("jira", "jira-platform-v3.subset.json", "PRISM_JIRA_URL"),
    ("confluence-v2", "confluence-v2.subset.json", "PRISM_CONFLUENCE_V2_URL"),
    ("confluence-v1", "confluence-v1-search.subset.json", "PRISM_CONFLUENCE_URL"),
)
START_SECONDS = 90.0


class Refused(Exception):
    """Why the mocks could not be served (one line)."""


def answers(port: int, host: str = HOST) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True


def start(port: int, prism: list[str], *, logs: Path | None = None) -> list[subprocess.Popen]:
    """The three mocks, started and answering; Refused (with none left running) otherwise."""
    logs = logs or ROOT
    taken = [port + i for i in range(len(MOCKS)) if answers(port + i)]
    if taken:
        raise Refused(
            f"port {', '.join(map(str, taken))} is already in use (another run's mocks?); "
            "PRISM_PORT=<port> picks three others"
        )
    env = {**os.environ, "SCARF_ANALYTICS": "false"}
    mocks: list[subprocess.Popen] = []
    try:
        for offset, (name, document, _) in enumerate(MOCKS):
            log = open(logs / f".prism-{name}.log", "wb")  # noqa: SIM115 (the child keeps it)
            mocks.append(
                subprocess.Popen(
                    [
                        *prism,
                        "mock",
                        "-h",
                        HOST,
                        "-p",
                        str(port + offset),
                        str(CONTRACTS / document),
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                )
            )
            log.close()
        waiting = list(range(len(MOCKS)))
        deadline = time.monotonic() + START_SECONDS
        while waiting:
            for index in list(waiting):
                if mocks[index].poll() is not None:
                    raise Refused(
                        f"the {MOCKS[index][0]} mock exited ({mocks[index].returncode}); "
                        f"see .prism-{MOCKS[index][0]}.log"
                    )
                if answers(port + index):
                    waiting.remove(index)
            if waiting and time.monotonic() > deadline:
                names = ", ".join(MOCKS[i][0] for i in waiting)
                raise Refused(f"the {names} mock did not answer within {START_SECONDS:.0f} s")
            if waiting:
                time.sleep(0.2)
    except BaseException:
        stop(mocks)
        raise
    return mocks


def stop(mocks: list[subprocess.Popen]) -> None:
    for mock in mocks:
        if mock.poll() is None:
            mock.terminate()
    for mock in mocks:
        try:
            mock.wait(timeout=5)
        except subprocess.TimeoutExpired:
            mock.kill()
            mock.wait()


def urls(port: int) -> dict[str, str]:
    return {var: f"http://{HOST}:{port + i}" for i, (_, _, var) in enumerate(MOCKS)}


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None, *, prism: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PRISM_PORT", 4010)))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to run with the mocks, after --")
    if prism is None:
        if not PRISM.exists():
            print(f"== FAILED: {PRISM.relative_to(ROOT)} is missing: run `make contract-prism` ==")
            return 1
        prism = [str(PRISM)]
    signal.signal(signal.SIGTERM, _terminated)
    try:
        mocks = start(args.port, prism)
    except Refused as why:
        print(f"== FAILED: the Prism mocks: {why} ==")
        return 1
    try:
        return subprocess.call(command, env={**os.environ, **urls(args.port)})
    finally:
        stop(mocks)


if __name__ == "__main__":
    sys.exit(main())
