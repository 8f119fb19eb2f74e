"""`make test-inspector`: the official MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`,
pinned) against the app, as a person would run it. The app runs under `runserver` on a free
loopback port with a database of its own in a temporary folder; a site administrator's
personal token lists and calls the tools; someone outside the assistant's gate gets the app's
sentence. Ends with "N passed, N failed" and exit status 1 on any failure; the server is
stopped also on failure or Ctrl-C."""

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = os.environ.get("INSPECTOR_VERSION", "2.12.0")
PY = sys.executable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _manage(env, *args, check=True) -> str:
    done = subprocess.run(
        [PY, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if check and done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


SETUP = """
from governance.models import User
from governance.services import token_create
admin, _ = User.objects.get_or_create(
    username="inspector-admin",
    defaults={"account_id": "inspector-admin", "is_superuser": True, "is_staff": True},
)
plain, _ = User.objects.get_or_create(username="inspector-plain", defaults={"account_id": "ip"})
print(token_create(user=admin, name="inspector")[1], token_create(user=plain, name="i")[1])
"""


def _inspector(url: str, token: str, *args: str) -> tuple[int, str]:
    command = [
        "npx",
        "-y",
        f"@modelcontextprotocol/inspector@{VERSION}",
        "--cli",
        url,
        "--transport",
        "http",
        "--header",
        f"Authorization: Bearer {token}",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    return done.returncode, done.stdout + done.stderr


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{folder}/inspector.sqlite3",
            "DEBUG": "true",
            "SCARF_ANALYTICS": "false",
        }
        _manage(env, "migrate", "--noinput")
        admin_token, plain_token = _manage(env, "shell", "-c", SETUP).split()[-2:]
        port = _free_port()
        server = subprocess.Popen(
            [PY, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        print("The app did not start.")
                        return 1
                    time.sleep(0.3)
            url = f"http://127.0.0.1:{port}/mcp"
            checks = []
            status, out = _inspector(url, admin_token, "--method", "tools/list")
            checks.append(("tools/list names the tools", status == 0 and "find_projects" in out))
            status, out = _inspector(
                url, admin_token, "--method", "tools/call", "--tool-name", "find_projects"
            )
            checks.append(("tools/call answers", status == 0 and '"items"' in out))
            status, out = _inspector(url, plain_token, "--method", "tools/list")
            checks.append(
                (
                    "outside the gate: the app's sentence",
                    status != 0 and "open to site administrators" in out,
                )
            )
            failed = [name for name, ok in checks if not ok]
            for name, ok in checks:
                print(("ok    " if ok else "FAIL  ") + name)
            if failed:
                print(out)
            print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
            return 1 if failed else 0
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    sys.exit(main())
