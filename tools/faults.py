"""The fault run (`make faults`): stop the real servers under load and check that nothing
acknowledged is lost, nothing refused is stored, and the app comes back on its own.

    python tools/faults.py [--phase-seconds 3] [--outage-seconds 5]

On loopback only, in a temporary directory, on free ports (never the machine's shared
PostgreSQL or Redis): its own PostgreSQL (initdb, pg_ctl; as root, run as the `postgres`
user), its own redis-server, and gunicorn with 2 workers on the app with production settings
(DEBUG=false, behind a simulated TLS proxy, the cache on that Redis). Four clients read and
write risks through the API (token) and the register page (session, htmx form), while:

1. PostgreSQL is stopped (`pg_ctl stop -m fast`) for the outage, then started again;
2. Redis is stopped (SHUTDOWN NOSAVE) for the outage, then started again;
3. one gunicorn worker is killed with SIGKILL under load (the master starts another).

Per phase (before, outage, after) it reports the status codes, the acknowledged writes (201,
or a 503 that says the write was stored: the database went away after the commit) found in
the database (must be all), the refused writes (any other answer) found (must be
none), the audit rows per stored write (one each) and the seconds from the server being back
to the app answering from it again (PostgreSQL: an API read; Redis: /readyz saying the cache
is ok). A write whose connection the SIGKILL dropped has no answer: it is reported, neither
acknowledged nor refused. The run fails (exit 1) on any lost acknowledged write, any stored
refused write, any 500, any audit count other than one, or a recovery over 2 s.
Results go to bench/results/faults.json as well.
"""

import argparse
import collections
import json
import os
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PG_BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/local/bin")
HOST = "127.0.0.1"
PROJECT_KEY = "FAULT"
CLIENTS = 4
WORKERS = 2
RECOVERY_LIMIT_SECONDS = 2.0
REQUEST_TIMEOUT = 10.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _pg_tool(name: str) -> str:
    for directory in PG_BIN_DIRS:
        path = Path(directory) / name
        if path.exists():
            return str(path)
    found = shutil.which(name)
    if not found:
        raise SystemExit(f"faults: {name} not found (PostgreSQL's server tools are needed)")
    return found


# --- the data, written by `python tools/faults.py setup CONFIG` in the run's database -------


def setup(config_path: Path) -> None:
    """Migrations, a project with a lead, the lead's API token and session."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from governance import mirror, services
    from governance.models import User
    from governance.tracker import get_tracker
    from governance.tracker.local import scripting

    call_command("migrate", verbosity=0)
    scripting.ensure_user("lena", display_name="Lena Lead")
    scripting.ensure_project(PROJECT_KEY, name="Fault run", lead="lena", browsers=[])
    mirror.sync_project(get_tracker().get_project(PROJECT_KEY))
    lena = User.objects.get(username="lena")
    _, token = services.token_create(user=lena, name="fault run")
    client = Client()
    client.force_login(lena)
    config = {
        "token": token,
        "sessionCookie": settings.SESSION_COOKIE_NAME,
        "session": client.cookies[settings.SESSION_COOKIE_NAME].value,
    }
    config_path.write_text(json.dumps(config))


# --- the servers -----------------------------------------------------------------------------


class Postgres:
    def __init__(self, directory: Path, port: int):
        self.directory, self.port = directory, port
        self.data = directory / "data"
        self.log = directory / "postgres.log"
        self.as_postgres = os.geteuid() == 0

    def _run(self, *args: str, check: bool = True) -> None:
        command = list(args)
        if self.as_postgres:  # initdb and postgres refuse to run as root
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def init(self) -> None:
        self.directory.mkdir(parents=True)
        if self.as_postgres:
            shutil.chown(self.directory, "postgres", "postgres")
        self._run(
            _pg_tool("initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses={HOST} -c fsync=off"
        self._run(
            _pg_tool("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w",
            "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run(_pg_tool("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    @property
    def url(self) -> str:
        return f"postgres://postgres@{HOST}:{self.port}/governance"


class Redis:
    def __init__(self, directory: Path, port: int):
        self.directory, self.port = directory, port
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", HOST, "--save", "",
             "--appendonly", "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((HOST, self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"


def _worker_pids(master: int) -> list[int]:
    """gunicorn's workers: the master's children."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            pids.append(int(stat.parent.name))
    return pids


# --- the load --------------------------------------------------------------------------------


class Load:
    """Four clients reading and writing risks; every answer recorded under the current
    phase."""

    def __init__(self, base_url: str, config: dict):
        self.base_url = base_url
        self.config = config
        self.phase = "warm-up"
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.records: list[dict] = []
        self.counter = 0
        self.csrf = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))

    def _title(self) -> str:
        with self.lock:
            self.counter += 1
            return f"Fault run risk {self.counter:05d}"

    def request(self, kind: str) -> tuple[int | str, str | None]:
        api = kind.startswith("api")
        write = kind.endswith("write")
        title = self._title() if write else None
        headers = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "10.1.0.1"}
        if api:
            url = f"{self.base_url}/api/v1/projects/{PROJECT_KEY}/risks"
            headers["Authorization"] = f"Bearer {self.config['token']}"
            data = json.dumps({"title": title}).encode() if write else None
            if write:
                headers["Content-Type"] = "application/json"
        else:
            url = f"{self.base_url}/projects/{PROJECT_KEY}/registers/risks/"
            headers["Cookie"] = (
                f"{self.config['sessionCookie']}={self.config['session']}; csrftoken={self.csrf}"
            )
            data = None
            if write:
                headers["HX-Request"] = "true"
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                headers["Origin"] = f"https://{self.base_url.split('//', 1)[1]}"
                headers["Referer"] = f"https:{url.split(':', 1)[1]}"
                form = {
                    "csrfmiddlewaretoken": self.csrf,
                    "title": title,
                    "direction": "Risk",
                    "status": "Open",
                    "impact": "2",
                    "likelihood": "2",
                    "treatment": "Mitigate",
                }
                data = urllib.parse.urlencode(form).encode()
        request = urllib.request.Request(url, data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
                return response.status, title
        except urllib.error.HTTPError as error:
            body = error.read()
            if error.code == 503 and (b'"stored": true' in body or b"was stored, but" in body):
                return "503 stored", title  # answered as stored: counted as acknowledged
            return error.code, title
        except OSError:
            return "dropped", title

    def client(self, number: int) -> None:
        kinds = ["api read", "api write", "page read", "page write"]
        turn = number
        while not self.stop.is_set():
            kind = kinds[turn % len(kinds)]
            turn += 1
            status, title = self.request(kind)
            with self.lock:  # the phase the answer came in
                self.records.append(
                    {"phase": self.phase, "kind": kind, "status": status, "title": title}
                )
            time.sleep(0.01)

    def start(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=self.client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        return threads


def _wait_until(check, limit: float = 30.0, step: float = 0.02) -> float | None:
    """Seconds until `check()` is true, or None past `limit`."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if check():
            return time.monotonic() - start
        time.sleep(step)
    return None


def _get(url: str, headers: dict | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except OSError:
        return 0, b""


# --- the verdict -----------------------------------------------------------------------------


def stored_writes(database_url: str) -> dict[str, int]:
    """Every stored risk of the run: title -> its audit rows."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT r.title, (SELECT count(*) FROM governance_auditentry a"
            " WHERE a.target_id = r.id::text) FROM registers_risk r"
            " WHERE r.title LIKE 'Fault run risk %%'"
        ).fetchall()
    return {title: count for title, count in rows}


def report(records: list[dict], stored: dict[str, int], recoveries: dict) -> tuple[dict, list]:
    phases: dict[str, dict] = collections.OrderedDict()
    failures = []
    for record in records:
        phase = phases.setdefault(
            record["phase"],
            {
                "statuses": collections.Counter(),
                "acknowledged": 0,
                "acknowledgedFound": 0,
                "refused": 0,
                "refusedFound": 0,
                "dropped": 0,
                "droppedFound": 0,
                "auditRowsPerWrite": collections.Counter(),
            },
        )
        status = record["status"]
        phase["statuses"][str(status)] += 1
        if status == 500:
            failures.append(f"{record['phase']}: 500 on {record['kind']}")
        title = record["title"]
        if title is None:
            continue
        found = title in stored
        if found:
            phase["auditRowsPerWrite"][str(stored[title])] += 1
            if stored[title] != 1:
                failures.append(f"{record['phase']}: {title} has {stored[title]} audit rows")
        if status in (201, "503 stored"):
            phase["acknowledged"] += 1
            phase["acknowledgedFound"] += found
            if not found:
                failures.append(f"{record['phase']}: acknowledged write {title} was lost")
        elif status == "dropped":
            phase["dropped"] += 1
            phase["droppedFound"] += found
        else:
            phase["refused"] += 1
            phase["refusedFound"] += found
            if found:
                failures.append(f"{record['phase']}: refused write {title} ({status}) was stored")
    for name, seconds in recoveries.items():
        if seconds is None or seconds > RECOVERY_LIMIT_SECONDS:
            failures.append(f"{name}: recovery took {seconds} s (limit {RECOVERY_LIMIT_SECONDS})")
    for phase in phases.values():
        phase["statuses"] = dict(sorted(phase["statuses"].items()))
        phase["auditRowsPerWrite"] = dict(phase["auditRowsPerWrite"])
    return phases, failures


def format_report(phases: dict, recoveries: dict) -> list[str]:
    lines = [
        f"{'phase':<26} {'status codes':<40} {'ack found':>10} {'refused found':>14}"
        f" {'dropped':>8} {'audit/write':>12}"
    ]
    for name, phase in phases.items():
        codes = " ".join(f"{code}:{count}" for code, count in phase["statuses"].items())
        audit = " ".join(f"{rows}x{count}" for rows, count in phase["auditRowsPerWrite"].items())
        lines.append(
            f"{name:<26} {codes:<40} "
            f"{phase['acknowledgedFound']:>4}/{phase['acknowledged']:<5} "
            f"{phase['refusedFound']:>6}/{phase['refused']:<7} "
            f"{phase['dropped']:>8} {audit or '-':>12}"
        )
    for name, seconds in recoveries.items():
        shown = "never" if seconds is None else f"{seconds:.2f} s"
        lines.append(f"recovery, {name}: {shown}")
    return lines


# --- the run ---------------------------------------------------------------------------------


def _step(name: str, since: float) -> float:
    print(f"  {name}: {time.monotonic() - since:.1f} s", file=sys.stderr, flush=True)
    return time.monotonic()


def run(phase_seconds: float, outage_seconds: float) -> int:
    started = time.monotonic()
    mark = started
    for tool in ("redis-server",):
        if not shutil.which(tool):
            print(f"faults: {tool} not found")
            return 1
    scratch = Path(tempfile.mkdtemp(prefix="governance-faults-"))
    os.chmod(scratch, 0o755)
    postgres = Postgres(scratch / "pg", _free_port())
    redis = Redis(scratch / "redis", _free_port())
    server = None
    load = None
    threads: list[threading.Thread] = []
    try:
        postgres.init()
        postgres.start()
        import psycopg

        with psycopg.connect(postgres.url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as c:
            c.execute("CREATE DATABASE governance")
        redis.start()
        mark = _step("PostgreSQL and Redis started", mark)

        sys.path.insert(0, str(ROOT))
        from bench.run import production_environment

        env = production_environment(os.environ, postgres.url)
        env.pop("SECURE_SSL_REDIRECT", None)
        env.update(
            BEHIND_TLS_PROXY="true",
            CACHE_URL=redis.url,
            PYTHONPATH=str(ROOT),
            OUTBOX_RUN_ON_COMMIT="false",
            LOG_LEVEL="ERROR",
        )
        config_path = scratch / "config.json"
        subprocess.run(
            [sys.executable, str(Path(__file__)), "setup", str(config_path)],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        mark = _step("migrated, data made", mark)
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import django; django.setup(); from django.core.management import "
                "call_command; from bench.run import collect_static; "
                "collect_static(call_command)",
            ],
            cwd=ROOT,
            env=env,
            check=True,
        )
        port = _free_port()
        base_url = f"http://{HOST}:{port}"
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi", "--workers", str(WORKERS),
             "--bind", f"{HOST}:{port}", "--log-level", "warning", "--timeout", "30"],
            cwd=ROOT,
            env=env,
            stderr=open(scratch / "gunicorn.log", "w"),  # noqa: SIM115 (closed with the run)
        )  # fmt: skip
        if _wait_until(lambda: _get(base_url + "/healthz")[0] == 200, limit=60) is None:
            raise RuntimeError("gunicorn did not answer /healthz")
        mark = _step("gunicorn answering", mark)
        config = json.loads(config_path.read_text())
        api_read = {
            "Authorization": f"Bearer {config['token']}",
            "X-Forwarded-Proto": "https",
        }
        read_url = f"{base_url}/api/v1/projects/{PROJECT_KEY}/risks?limit=1"
        readyz = {"X-Forwarded-Proto": "https"}

        load = Load(base_url, config)
        threads = load.start()
        recoveries: dict[str, float | None] = {}

        # 1. PostgreSQL
        load.phase = "postgres: before"
        time.sleep(phase_seconds)
        load.phase = "postgres: outage"
        postgres.stop("fast")
        time.sleep(outage_seconds)
        ready_down = _get(base_url + "/readyz", readyz)[0]
        health_down = _get(base_url + "/healthz", readyz)[0]
        postgres.start()
        load.phase = "postgres: after"
        recoveries["postgres (an API read answers 200)"] = _wait_until(
            lambda: _get(read_url, api_read)[0] == 200
        )
        time.sleep(phase_seconds)

        # 2. Redis
        load.phase = "redis: before"
        time.sleep(phase_seconds)
        load.phase = "redis: outage"
        redis.stop()
        time.sleep(outage_seconds)
        ready_body = _get(base_url + "/readyz", readyz)
        redis.start()
        load.phase = "redis: after"
        recoveries["redis (/readyz: cache ok)"] = _wait_until(
            lambda: json.loads(_get(base_url + "/readyz", readyz)[1] or b"{}").get("cache") == "ok"
        )
        time.sleep(phase_seconds)

        # 3. A web worker SIGKILLed under load
        load.phase = "worker killed: during"
        victims = _worker_pids(server.pid)
        if victims:
            os.kill(victims[0], signal.SIGKILL)
        recoveries["worker SIGKILL (workers back to 2)"] = _wait_until(
            lambda: (
                len(_worker_pids(server.pid)) == WORKERS
                and victims[0] not in _worker_pids(server.pid)
            )
        )
        time.sleep(phase_seconds)
        load.phase = "worker killed: after"
        time.sleep(phase_seconds)

        load.stop.set()
        for thread in threads:
            thread.join(timeout=REQUEST_TIMEOUT + 5)
        stored = stored_writes(postgres.url)
        phases, failures = report(load.records, stored, recoveries)
        checks = {
            "/readyz during the PostgreSQL outage": ready_down,
            "/healthz during the PostgreSQL outage": health_down,
            "/readyz during the Redis outage": f"{ready_body[0]} {ready_body[1].decode()}",
        }
        if ready_down != 503:
            failures.append(f"/readyz answered {ready_down} with PostgreSQL down (want 503)")
        if health_down != 200:
            failures.append(f"/healthz answered {health_down} with PostgreSQL down (want 200)")
        if ready_body[0] != 200:
            failures.append(f"/readyz answered {ready_body[0]} with Redis down (want 200)")
        elapsed = time.monotonic() - started
        lines = format_report(phases, recoveries)
        lines += [f"{name}: {value}" for name, value in checks.items()]
        lines.append(
            f"{len(load.records)} requests, {CLIENTS} clients, gunicorn {WORKERS} workers, "
            f"outages of {outage_seconds:g} s, {elapsed:.0f} s in all"
        )
        print("\n".join(lines))
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "faults.json").write_text(
            json.dumps(
                {
                    "phases": phases,
                    "recoveries": recoveries,
                    "checks": checks,
                    "failures": failures,
                    "seconds": round(elapsed, 1),
                },
                indent=1,
            )
        )
        if failures:
            print("FAILED:\n  " + "\n  ".join(failures))
            return 1
        print("faults: passed")
        return 0
    finally:
        if load is not None:
            load.stop.set()
            for thread in threads:
                thread.join(timeout=REQUEST_TIMEOUT + 5)
        if server is not None and server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
        redis.stop()
        postgres.stop("immediate")
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "setup":
        setup(Path(sys.argv[2]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase-seconds", type=float, default=3.0)
    parser.add_argument("--outage-seconds", type=float, default=5.0)
    args = parser.parse_args()
    return run(args.phase_seconds, args.outage_seconds)


if __name__ == "__main__":
    sys.exit(main())
