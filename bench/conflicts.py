"""fsseam conflict benchmark: the tool calls (and S3 requests) a scripted agent needs to
recover from a conflict, before and after issue 17.

    python bench/conflicts.py                     # after only (this checkout), memory + s3
    python bench/conflicts.py --before f51df7f    # also run the same agent on that commit
    python bench/conflicts.py --quick --backends memory   # the smoke test

The agent is a script that acts as a careful model would: it edits; on FS_STALE it reads
the file again unless the refusal says it has seen the current version; on seeing its
target text gone it re-plans from what it saw (the line's current text) and edits again;
on seeing its change already made it stops. The same script runs against the commit
given with ``--before`` (its ``src`` and ``backends/*/src`` extracted with ``git archive``
and put first on ``PYTHONPATH`` of a child process), so both columns are measured, not
estimated. Every scenario also checks the file's final bytes.

Scenarios (one file of 200 numbered lines; agent B read it, then agent A changed it):
  other line       A edited another line; B's line is untouched
  same fix         A made exactly B's change
  target changed   A edited the very line B wanted to change
  large change     A rewrote every line but B's (a diff too long to show whole)

Requests are counted at a moto server (S3 versioned bucket), from B's first edit to done.

``--history-cost``: what fsseam's own history adds to an edit of an 80,000-byte file on
local disk and in memory (median of N edits, each on the previous one's result).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LINES = 200
PATH = "/conf.txt"
SEEN = "counts as your read of the current version"
SAME_CHANGE = "already holds exactly your change"


def log(msg: str) -> None:
    print(f"[conflicts {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def original() -> str:
    return "".join(f"line {i:03d}: value {i:03d} {'.' * 40}\n" for i in range(1, LINES + 1))


def line_of(n: int, text: str) -> str | None:
    """The current text of line ``n`` as shown in ``text`` (a read, or a diff's + lines)."""
    found = re.findall(rf"line {n:03d}: [^\n]*", text)
    return found[-1] if found else None  # the last: in a diff, the + line follows the -


# -- the scenarios: what A does, and what B wants ---------------------------------------


def other_line(text: str) -> str:
    return text.replace("value 003", "value 3-by-A")


def same_fix(text: str) -> str:
    return text.replace("value 100", "value C")


def target_changed(text: str) -> str:
    return text.replace("value 100", "amount 100")


def large_change(text: str) -> str:
    return "".join(line if i == 100 else line.replace("value", "VALUE")
                   for i, line in enumerate(text.splitlines(keepends=True), 1))


OLD, NEW = "value 100", "value C"
"""B's task: line 100's value becomes C."""
SCENARIOS: list[tuple[str, Callable[[str], str]]] = [
    ("other line", other_line),
    ("same fix", same_fix),
    ("target changed", target_changed),
    ("large change", large_change),
]
WANTED_LINE = f"line 100: {NEW} {'.' * 40}"


def expected(name: str) -> str:
    """The file once both agents are done: A's change, and line 100 as B wants it."""
    text = dict(SCENARIOS)[name](original())
    lines = text.splitlines(keepends=True)
    lines[99] = WANTED_LINE + "\n"
    return "".join(lines)


def agent_b(ctx: Any, old: str, new: str) -> tuple[int, str]:
    """B's loop: returns (tool calls, how it ended)."""
    calls = 0
    for _ in range(8):
        res = ctx.tools.execute("edit", {"file_path": PATH, "old_string": old,
                                         "new_string": new})
        calls += 1
        if res.ok:
            return calls, "done (already there)" if getattr(res.value, "unchanged",
                                                           False) else "done"
        code = res.error.code.value
        if code not in ("FS_STALE", "FS_NO_MATCH"):
            return calls, f"failed {code}"
        if SAME_CHANGE in res.text:
            # Another agent made exactly this change since B's read, and B's task (line
            # 100's value becomes C) should apply once: it is there.
            return calls, "done (already there: the refusal says so)"
        if code == "FS_STALE" and SEEN in res.text:
            seen = res.text  # the whole change was shown: no read needed
            gone = "no longer occurs" in res.text
        else:
            read = ctx.tools.execute("read", {"file_path": PATH})
            calls += 1
            seen = read.text
            gone = old not in seen
        if new in seen and old not in seen:
            return calls, "done (already there)"
        if gone:
            # Re-plan from what was seen: replace line 100 as it is now, whole.
            current = line_of(100, seen)
            if current is None:
                return calls, "failed: line not found"
            old, new = current, WANTED_LINE
    return calls, "gave up"


# -- targets -----------------------------------------------------------------------------


@contextmanager
def workspaces(backend: str) -> Iterator[tuple[Callable[[], Any], Callable[[], int],
                                              Callable[[], None]]]:
    """(make a fresh workspace, count requests since reset, reset)."""
    from fsseam import Workspace

    if backend == "memory":
        import uuid

        def make() -> Any:
            return Workspace(f"memory://conflicts-{uuid.uuid4().hex[:8]}",
                             {"global_store": False})

        yield make, lambda: 0, lambda: None
        return
    from fsseam_s3.testing import moto_server

    with moto_server(serialize=True) as endpoint:
        bucket = endpoint.create_bucket(versioned=True)
        counter = iter(range(10**6))

        def make_s3() -> Any:
            return Workspace(f"s3://{bucket}/run-{next(counter)}",
                             storage_options=endpoint.storage_options())

        yield (make_s3, lambda: len(endpoint.log.to_bucket(bucket)),
               endpoint.log.clear)


def run_here(backends: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for backend in backends:
        with workspaces(backend) as (make, count, reset):
            for name, change in SCENARIOS:
                ws = make()
                setup, a, b = ws.context("setup"), ws.context("a"), ws.context("b")
                assert setup.tools.execute("write", {"file_path": PATH,
                                                     "content": original()}).ok
                assert b.tools.execute("read", {"file_path": PATH}).ok
                assert a.tools.execute("read", {"file_path": PATH}).ok
                assert a.tools.execute("write", {"file_path": PATH,
                                                 "content": change(original())}).ok
                reset()
                calls, how = agent_b(b, OLD, NEW)
                requests = count()
                final = ws.backend.read(PATH.lstrip("/")).data.decode()
                out.append({"backend": backend, "scenario": name, "calls": calls,
                            "ended": how, "requests": requests,
                            "correct": final == expected(name)})
    return out


def run_before(ref: str, backends: list[str]) -> list[dict[str, Any]]:
    """The same agent against commit ``ref``, in a child process."""
    with tempfile.TemporaryDirectory(prefix="fsseam-before-") as tmp:
        archive = subprocess.run(["git", "archive", ref, "src", "backends"], cwd=ROOT,
                                 capture_output=True, check=True).stdout
        tar_path = Path(tmp) / "src.tar"
        tar_path.write_bytes(archive)
        with tarfile.open(tar_path) as tar:
            tar.extractall(tmp, filter="data")
        paths = [str(Path(tmp) / "src"), *(str(p) for p in Path(tmp, "backends").glob("*/src"))]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", "--backends",
             ",".join(backends)],
            capture_output=True, text=True, env=env, check=False, timeout=600,
        )
        if proc.returncode != 0:
            raise SystemExit(f"the run on {ref} failed:\n{proc.stderr}")
        sys.stderr.write(proc.stderr)
        result: list[dict[str, Any]] = json.loads(proc.stdout)
        return result


def table(after: list[dict[str, Any]], before: list[dict[str, Any]] | None) -> str:
    key = {(r["backend"], r["scenario"]): r for r in before or []}
    rows = ["| backend | scenario | tool calls before | tool calls after | requests before "
            "| requests after | how B's task ended (after) | final bytes right |",
            "|---|---|---|---|---|---|---|---|"]
    for r in after:
        b = key.get((r["backend"], r["scenario"]))
        counted = r["backend"] != "memory"  # requests are counted at a server
        req_before = "-" if b is None else str(b["requests"]) if counted else "n/a"
        req_after = str(r["requests"]) if counted else "n/a"
        rows.append(
            f"| {r['backend']} | {r['scenario']} | {b['calls'] if b else '-'} | {r['calls']} "
            f"| {req_before} | {req_after} | {r['ended']} "
            f"| {'yes' if r['correct'] and (b is None or b['correct']) else 'NO'} |"
        )
    return "\n".join(rows)


def history_cost(n: int) -> str:
    """Median ms of an edit with and without ``History()``, local disk and memory."""
    import statistics
    import uuid

    from fsseam import History, Workspace

    body = "".join(f"{i:06d} {'x' * 32}\n" for i in range(2000))  # 80,000 bytes
    rows = ["| storage | edit, no history (ms) | edit, history kept (ms) | extra |",
            "|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="fsseam-hcost-") as tmp:
        for storage in ("local", "memory"):
            medians = []
            for kept in (False, True):
                tag = uuid.uuid4().hex[:8]
                if storage == "local":
                    root = Path(tmp, f"root-{tag}")
                    root.mkdir()
                    url, opts = str(root), None
                else:
                    url, opts = f"memory://hcost-{tag}", {"global_store": False}
                history = History(path=str(Path(tmp, f"kept-{tag}"))) if kept else None
                if kept and storage == "memory":
                    history = History()
                ctx = Workspace(url, opts, history=history).context("a")
                assert ctx.tools.execute("write", {"file_path": "/f.txt", "content": body}).ok
                times = []
                for i in range(n):
                    old, new = f"{i:06d} ", f"{i:06d}-"
                    t = time.perf_counter()
                    res = ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": old,
                                                     "new_string": new})
                    times.append((time.perf_counter() - t) * 1000)
                    assert res.ok, res.text
                medians.append(statistics.median(times))
            rows.append(f"| {storage} | {medians[0]:.2f} | {medians[1]:.2f} | "
                        f"{medians[1] / medians[0]:.1f}x |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backends", default="memory,s3", help="memory and/or s3 (moto)")
    ap.add_argument("--before", metavar="REF", help="also run on this commit")
    ap.add_argument("--quick", action="store_true", help="accepted for symmetry; runs fast")
    ap.add_argument("--json", help="also write the raw results to this file")
    ap.add_argument("--history-cost", action="store_true",
                    help="also time an edit with and without fsseam's own history")
    ap.add_argument("-n", type=int, default=200, help="edits timed per row (history cost)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    if "s3" in backends:
        try:
            import fsseam_s3.testing  # noqa: F401
        except ImportError:
            log("fsseam-s3 or moto missing: s3 left out")
            backends.remove("s3")
    if args.child:
        import fsseam

        log(f"fsseam from {Path(fsseam.__file__).parent}")
        print(json.dumps(run_here(backends)))
        return 0
    log(f"after: {', '.join(backends)}")
    after = run_here(backends)
    before = None
    if args.before:
        log(f"before: commit {args.before}")
        before = run_before(args.before, backends)
    print(table(after, before))
    if args.history_cost:
        print()
        print(history_cost(args.n))
    if args.json:
        Path(args.json).write_text(json.dumps({"after": after, "before": before}, indent=2))
    return 0 if all(r["correct"] for r in after + (before or [])) else 1


if __name__ == "__main__":
    sys.exit(main())
