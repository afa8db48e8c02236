"""The object-store rows' servers, each in a process of its own: moto (a Python server:
in the benchmark's process its request handling would compete with fsseam for the
interpreter lock and the benchmark would time both) and the counting proxy in front of
each emulator (Python threads too). fake-gcs-server is a Go program, a process already.

Every process is started here, bound to 127.0.0.1 on a port it picks itself (it prints it),
and stopped by its own PID: its standard input is a pipe from the benchmark, whose closing
ends it (so a benchmark that dies leaves no server behind), then terminate, then kill.

    python bench/servers.py moto      # what moto_process() runs: prints {"url": ...}
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Child:
    """A server process started by this module."""

    popen: subprocess.Popen[bytes]
    hello: dict[str, Any]
    """What it printed when it was ready (its URLs)."""

    @property
    def pid(self) -> int:
        return self.popen.pid

    def cpu_seconds(self) -> float:
        """User and system CPU time the process has used (/proc/<pid>/stat)."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


@contextmanager
def child(args: list[str]) -> Iterator[Child]:
    """Run ``args`` (a server that prints one JSON line when ready and serves until its
    stdin closes); stop it by its PID on exit."""
    popen = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    try:
        assert popen.stdout is not None
        line = popen.stdout.readline()
        if not line:
            raise RuntimeError(f"{args} exited ({popen.wait(10)}) before it was ready")
        yield Child(popen, json.loads(line))
    finally:
        if popen.stdin is not None:
            popen.stdin.close()
        try:
            popen.wait(10)
        except subprocess.TimeoutExpired:
            popen.terminate()
            try:
                popen.wait(10)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait()


@contextmanager
def moto_process() -> Iterator[Child]:
    """moto's S3 server in a process of its own; ``hello["url"]`` is its endpoint."""
    with child([sys.executable, os.path.abspath(__file__), "moto"]) as proc:
        yield proc


class RemoteProxy:
    """A counting proxy (``fsseam.testing.proxy``) in a process of its own, read and set
    through its control URL: what the benchmark's ``Store.proxy`` is."""

    def __init__(self, proc: Child) -> None:
        self.process = proc
        self.url: str = proc.hello["url"]
        self._control: str = proc.hello["control"]
        self._latency = 0.0

    def _call(self, method: str, path: str) -> dict[str, Any]:
        req = urllib.request.Request(self._control + path, method=method)
        with urllib.request.urlopen(req, timeout=30) as resp:
            out: dict[str, Any] = json.loads(resp.read())
        return out

    @property
    def latency(self) -> float:
        return self._latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        self._call("PUT", f"/latency?seconds={seconds}")
        self._latency = seconds

    def take(self) -> int:
        """Requests forwarded since the last take (and reset)."""
        return int(self._call("GET", "/take")["count"])

    def replay(self, on: bool) -> None:
        """Start (end) answering a request whose method and path were answered since
        replaying began with that answer, without the emulator (the proxy's text)."""
        self._call("PUT", f"/replay?on={int(on)}")


@contextmanager
def proxy_process(upstream: str) -> Iterator[RemoteProxy]:
    with child([sys.executable, "-m", "fsseam.testing.proxy", upstream]) as proc:
        yield RemoteProxy(proc)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time process ``pid`` has used (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def children(parent: int | None = None) -> set[int]:
    """The PIDs whose parent is ``parent`` (this process by default), from /proc."""
    parent = os.getpid() if parent is None else parent
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone since the listing
        if ppid == parent:
            found.add(int(name))
    return found


@dataclass
class StartedElsewhere:
    """The processes a library's context manager started (fake-gcs-server, Azurite: they
    keep their ``Popen`` to themselves), found as this process's new children; their CPU
    is the emulator's."""

    pids: set[int]

    @classmethod
    def since(cls, before: set[int]) -> StartedElsewhere:
        new = children() - before
        for pid in list(new):  # a launcher's own children (a wrapper script's server)
            new |= children(pid)
        return cls(new)

    def cpu_seconds(self) -> float:
        total = 0.0
        for pid in self.pids:
            with contextlib.suppress(OSError):  # it exited: its time is counted nowhere
                total += cpu_seconds(pid)
        return total


def _serve_moto() -> None:
    import logging

    from moto.server import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a log line per request
    app = DomainDispatcherApplication(create_backend_app)
    server = make_server("127.0.0.1", 0, app, threaded=True,
                         request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_port}"}), flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    if sys.argv[1:] != ["moto"]:
        raise SystemExit(__doc__)
    _serve_moto()
