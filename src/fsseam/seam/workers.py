"""The helper processes of a grep by several processes (``fsseam.seam.finding``): started,
spoken to over pipes (length-prefixed pickles), and stopped with the process that started
them.

A helper is a plain ``python -c`` process running ``finding.main``; it exits when its stdin
closes. This module keeps them for the process's searches, one search at a time.
"""

from __future__ import annotations

import atexit
import os
import pickle
import site
import struct
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["Helper", "Helpers", "helpers", "read_message", "write_message"]

_HEADER = struct.Struct(">Q")
T = TypeVar("T")
"""What a helper answers (the finder's own type: these pipes carry any pickle)."""

COMMAND = "from fsseam.seam.finding import main; main()"


def write_message(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def read_message(fd: int) -> Any:
    """The next message on ``fd``; EOFError once the other side is gone."""
    head = _read_exact(fd, _HEADER.size)
    return pickle.loads(_read_exact(fd, _HEADER.unpack(head)[0]))


def _read_exact(fd: int, n: int) -> bytes:
    parts: list[bytes] = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)




def _site_dirs() -> set[str]:
    dirs = [*site.getsitepackages(), site.getusersitepackages(),
            *sysconfig.get_paths().values()]
    return {str(Path(d).resolve()) for d in dirs if d}


class Helper:
    def __init__(self) -> None:
        env = dict(os.environ)
        # The same fsseam as this process's, wherever it was imported from; a
        # site-packages directory is on the helper's path already, and put first it
        # would come before the standard library.
        src = str(Path(__file__).resolve().parents[2])
        if src not in _site_dirs():
            env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH"))
                                                if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", COMMAND],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, bufsize=0, close_fds=True,
            # Not in the caller's process group: a Ctrl-C at the terminal is the caller's
            # to handle; a helper ends when its pipe closes.
            start_new_session=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.to, self.fro = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self.ready = False
        self.job: tuple[int, int] | None = None
        """The call and part it is searching (None: idle)."""

    def close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Helpers:
    """This process's helper processes: one search uses them at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.all: list[Helper] = []
        self.calls = 0
        self.parts_here = self.parts_there = 0
        """Parts searched in this process and by helpers (for tests and benchmarks)."""
        self.failed = False
        """Starting a helper failed once: this process does not try again."""

    def start(self, n: int) -> None:
        """Start helpers up to ``n`` (not waiting for them to be ready)."""
        while len(self.all) < n and not self.failed:
            try:
                self.all.append(Helper())
            except (OSError, ValueError, subprocess.SubprocessError):
                self.failed = True

    def wait_ready(self, n: int) -> None:
        """Start ``n`` helpers and wait until each is ready (tests, benchmarks)."""
        with self.lock:
            self.start(n)
            for h in list(self.all):
                if not h.ready:
                    self.receive(h, -1, {})

    def drop(self, h: Helper) -> None:
        self.all.remove(h)
        h.close()

    def close(self) -> None:
        for h in list(self.all):
            self.drop(h)

    def receive(self, h: Helper, call: int, answers: dict[int, T | None]) -> None:
        """Take one message of ``h``: ready, or an answer (kept when it is this call's;
        a failed part is noted as None, to be searched here)."""
        try:
            msg = read_message(h.fro)
        except (EOFError, OSError, pickle.UnpicklingError):
            job = h.job
            if not h.ready:
                self.failed = True  # one that cannot start will not start next time either
            self.drop(h)
            if job is not None and job[0] == call:
                answers[job[1]] = None
            return
        if msg[0] == "ready":
            h.ready = True
            return
        _, their_call, index, got = msg
        h.job = None
        if their_call == call:
            answers[index] = got if msg[0] == "done" else None


_helpers: Helpers | None = None
_helpers_lock = threading.Lock()
_inherited: list[Helpers] = []
"""A forked child's copy of its parent's helpers: kept, never closed nor collected (their
processes are the parent's, which a collected ``Popen`` would warn of as left running)."""


def helpers() -> Helpers:
    """This process's helpers (a process made by ``fork`` gets its own)."""
    global _helpers
    with _helpers_lock:
        if _helpers is None or _helpers.pid != os.getpid():
            if _helpers is not None:
                _inherited.append(_helpers)
            _helpers = Helpers()
        return _helpers


@atexit.register
def _stop() -> None:
    if _helpers is not None and _helpers.pid == os.getpid():
        _helpers.close()


