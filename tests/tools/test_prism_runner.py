"""tools/prism.py: the mocks are up before the command runs, its status is passed on, and
they are stopped afterwards; a taken port or a mock that dies is refused in one line. A
stand-in for Prism (a few lines of Python listening on its port) keeps this test offline and
independent of npm."""

import socket
import sys
import textwrap

import pytest

from tools import prism

FAKE = textwrap.dedent(
    """
    import os, socket, sys, time
    args = sys.argv[1:]
    port = int(args[args.index("-p") + 1])
    if "confluence-v1" in args[-1] and os.path.exists(sys.argv[0] + ".die"):
        sys.exit(3)
    time.sleep(0.3)  # not answering at once, as Prism does not
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen()
    while True:
        server.accept()[0].close()
    """
)


def _bindable(port: int) -> bool:
    """Nothing listens on `port` and it can be bound now: a port in use as the local end of
    an outgoing connection answers nothing, yet cannot be bound."""
    if prism.answers(port):
        return False
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", port))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def free_ports(count: int = 3) -> int:
    for _ in range(50):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        base = probe.getsockname()[1]
        probe.close()
        if base + count < 65535 and all(_bindable(base + i) for i in range(count)):
            return base
    raise AssertionError("no three free ports in a row")


@pytest.fixture
def fake(tmp_path, monkeypatch):
    monkeypatch.setattr(prism, "ROOT", tmp_path)  # the logs go there
    script = tmp_path / "fake_prism.py"
    script.write_text(FAKE)
    return script


def test_runs_the_command_with_the_urls_then_stops_the_mocks(fake, tmp_path):
    port = free_ports()
    check = (
        "import os, socket, sys; "
        "urls = [os.environ[v] for v in "
        "('PRISM_JIRA_URL', 'PRISM_CONFLUENCE_V2_URL', 'PRISM_CONFLUENCE_URL')]; "
        "[socket.create_connection(('127.0.0.1', int(u.rsplit(':', 1)[1])), 1).close() "
        "for u in urls]; "
        f"sys.exit(7 if urls[0] == 'http://127.0.0.1:{port}' else 9)"
    )
    code = prism.main(
        ["--port", str(port), "--", sys.executable, "-c", check],
        prism=[sys.executable, str(fake)],
    )
    assert code == 7  # the command's own status, the mocks answering at the URLs it was given
    assert not any(prism.answers(port + i) for i in range(3))
    assert (tmp_path / ".prism-jira.log").exists()


def test_a_taken_port_is_refused_before_anything_starts(fake, capsys):
    for _ in range(10):  # another process may take a free port between the probe and here
        port = free_ports()
        busy = socket.socket()
        try:
            busy.bind(("127.0.0.1", port + 1))
            break
        except OSError:
            busy.close()
    busy.listen()
    try:
        code = prism.main(
            ["--port", str(port), "--", sys.executable, "-c", "pass"],
            prism=[sys.executable, str(fake)],
        )
    finally:
        busy.close()
    assert code == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and f"port {port + 1} is already in use" in out
    assert not prism.answers(port) and not prism.answers(port + 2)


def test_a_mock_that_dies_is_named_and_the_others_are_stopped(fake, tmp_path, capsys):
    (tmp_path / "fake_prism.py.die").touch()
    port = free_ports()
    code = prism.main(
        ["--port", str(port), "--", sys.executable, "-c", "raise SystemExit(0)"],
        prism=[sys.executable, str(fake)],
    )
    assert code == 1
    assert "the confluence-v1 mock exited (3)" in capsys.readouterr().out
    assert not any(prism.answers(port + i) for i in range(3))
