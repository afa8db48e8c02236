"""The Azure fixtures install Azurite themselves when npm is on the machine
(``fsseam.testing.azurite.ensure_azurite``): once, whoever asks at the same time, and with
the reason when they cannot. ``npm`` here is a stand-in script on PATH that does what
``npm install --prefix P azurite@3`` leaves behind (the real install is what the suite's
own Azure fixture runs on a fresh clone: its Azure tests pass only after it)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fsseam.testing.azurite import (
    INSTALL_RECORD,
    AzuriteNotFound,
    ensure_azurite,
    install_record,
)

pytest_plugins = ("pytester",)

FAKE_NPM = """#!/bin/sh
# npm install --prefix P azurite@3 ...: log the call, leave P/node_modules/.bin/azurite-blob
echo "$@" >> "{log}"
[ -n "$FAIL" ] && {{ echo "npm ERR! 404 Not Found - GET azurite" >&2; exit 1; }}
mkdir -p "$3/node_modules/.bin"
printf '#!/bin/sh\\n' > "$3/node_modules/.bin/azurite-blob"
chmod +x "$3/node_modules/.bin/azurite-blob"
"""


def _bin(tmp_path: Path, with_node: bool = True) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    npm = d / "npm"
    npm.write_text(FAKE_NPM.format(log=tmp_path / "npm.log"))
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    if with_node:
        node = shutil.which("node") or "/bin/true"
        (d / "node").symlink_to(node)
    return d


def test_two_processes_asking_at_once_install_once(tmp_path: Path) -> None:
    prefix = tmp_path / "proj" / ".ci" / "node"
    env = {**os.environ, "PATH": f"{_bin(tmp_path)}:{os.environ['PATH']}"}
    env.pop("FSSEAM_AZURITE", None)
    code = ("import sys; from pathlib import Path; from fsseam.testing.azurite import "
            "ensure_azurite; print(ensure_azurite(Path(sys.argv[1])))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(prefix)], env=env,
                              stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    command = prefix / "node_modules" / ".bin" / "azurite-blob"
    assert outs == [str(command)] * 3
    calls = (tmp_path / "npm.log").read_text().splitlines()
    assert calls == [f"install --prefix {prefix} azurite@3 --no-audit --no-fund "
                     "--loglevel=error"]
    record = install_record(prefix)
    assert record is not None and record["package"] == "azurite@3"
    assert record["prefix"] == str(prefix)
    # Installed: the next ask runs no npm.
    assert ensure_azurite(prefix) == command
    assert len((tmp_path / "npm.log").read_text().splitlines()) == 1


def test_a_failed_install_says_why_and_leaves_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = tmp_path / ".ci" / "node"
    monkeypatch.setenv("PATH", f"{_bin(tmp_path)}:{os.environ['PATH']}")
    monkeypatch.setenv("FAIL", "1")
    with pytest.raises(AzuriteNotFound) as info:
        ensure_azurite(prefix)
    assert "npm install of azurite@3" in str(info.value)
    assert "404 Not Found" in str(info.value)
    assert "npm install --prefix .ci/node azurite@3" in str(info.value)
    assert not (prefix / INSTALL_RECORD).exists()


def test_without_node_the_reason_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(AzuriteNotFound) as info:
        ensure_azurite(tmp_path / ".ci" / "node")
    assert "Node.js and npm are not both on PATH" in str(info.value)
    assert not (tmp_path / "npm.log").exists()


def test_the_session_says_it_installed(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The summary line (what the suite's conftests print) after a run whose fixture
    installed Azurite; none after a run that found it installed."""
    prefix = tmp_path / "p" / ".ci" / "node"
    pytester.makepyfile(f"""
        from pathlib import Path
        from fsseam.testing.azurite import ensure_azurite

        def test_x():
            ensure_azurite(Path({str(prefix)!r}))
    """)
    pytester.makeconftest(f"""
        import time
        from pathlib import Path
        import fsseam.testing.azurite as az
        az.project_prefix = lambda: Path({str(prefix)!r})
        STARTED = time.time()

        def pytest_terminal_summary(terminalreporter):
            az.say_installed(terminalreporter, STARTED)
            az.say_installed(terminalreporter, STARTED)  # a second conftest: said once
    """)
    monkeypatch.setenv("PATH", f"{_bin(tmp_path)}:{os.environ['PATH']}")
    said = "fsseam: installed Azurite (azurite@3) for the Azure tests into"
    first = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0")
    first.assert_outcomes(passed=1)
    assert first.stdout.str().count(f"{said} {prefix} with npm in") == 1
    again = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0")
    again.assert_outcomes(passed=1)
    assert said not in again.stdout.str()
