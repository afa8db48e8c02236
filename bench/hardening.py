"""fsseam hardening benchmark: an external appender racing agents, and big-file memory.

    python bench/hardening.py                    # full run: ~3 minutes, ~2.3 GiB of disk
    python bench/hardening.py --quick            # a few seconds, small files (the smoke test)
    python bench/hardening.py --json out.json    # also keep the raw numbers

**Appender.** A separate process appends numbered lines to a local file the way shell
scripts and loggers do (open with O_APPEND, write one line, close; 1 ms apart) while K
agents edit the same file through the tools (read, edit, re-read on FS_STALE). The
appender takes no lock, so nothing can make it wait: its line is lost only if it lands
between fsseam's last check of the file and the rename that publishes the edit. Reported:
appends made, appends missing from the final file (lost), agent edits acknowledged and
refused as stale, and agent edits missing (must be 0).

**Memory.** Each case runs in a fresh subprocess; peak RSS is Linux's ``VmHWM``, reset
after imports and setup (``/proc/self/clear_refs``), so "above baseline" is what the call
itself needed. Cases: ``str_replace_editor view`` with ``view_range [1, -1]`` and ``read``
with a huge ``limit`` on a file of short lines; ``create`` on an existing 1 GiB sparse file;
``view`` of a file that is one single long line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

MiB = 1 << 20


def log(msg: str) -> None:
    print(f"[hardening {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- the external appender ------------------------------------------------------------


def appender_child(path: str, seconds: float, gap: float) -> None:
    """Append ``ext-NNNNNNN`` lines until the time is up; print how many were appended."""
    deadline = time.monotonic() + seconds
    n = 0
    flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC
    while time.monotonic() < deadline:
        line = f"ext-{n:07d}\n".encode()
        fd = os.open(path, flags)  # as `echo line >> file` does: open, one write, close
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        n += 1
        time.sleep(gap)
    print(n, flush=True)


def _agent(ws: Any, agent: int, deadline: float, stats: dict[str, Any]) -> None:
    ctx = ws.context(f"agent-{agent}")
    tag = f"slot-{agent:03d}:"
    seq = 0
    while time.monotonic() < deadline:
        read = ctx.tools.execute("read", {"file_path": "/log.txt"})
        if not read.ok:
            stats["errors"].append(read.text)
            continue
        if not any(ln.startswith(tag) for ln in read.value.lines):
            stats["errors"].append(f"{tag} line missing")
            return
        # The tag, not the whole line: a read shows long lines cut at 2,000 characters.
        token = f" a{agent}-{seq}"
        res = ctx.tools.execute(
            "edit", {"file_path": "/log.txt", "old_string": tag, "new_string": tag + token}
        )
        if res.ok:
            stats["ok"].append(token.strip())
            seq += 1
        elif res.error is not None and res.error.code.value == "FS_STALE":
            stats["stale"] += 1
        else:
            stats["errors"].append(res.text)


def bench_appender(base: Path, seconds: float, agents: int, gap: float = 0.001) -> dict[str, Any]:
    from fsseam import Workspace

    root = Path(tempfile.mkdtemp(prefix="fsseam-appender-", dir=base))
    target = root / "log.txt"
    target.write_text("".join(f"slot-{a:03d}:\n" for a in range(agents)))
    ws = Workspace(str(root), load_entry_points=False)
    proc = subprocess.Popen(
        [sys.executable, __file__, "--appender-child", str(target), str(seconds), str(gap)],
        stdout=subprocess.PIPE, text=True,
    )
    stats: dict[str, Any] = {"ok": [], "stale": 0, "errors": []}
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=_agent, args=(ws, a, deadline, stats)) for a in range(agents)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out, _ = proc.communicate(timeout=seconds + 60)
    appended = int(out.strip())
    final = target.read_text()
    shutil.rmtree(root)
    present = sum(1 for ln in final.splitlines() if ln.startswith("ext-"))
    tokens = set(final.split())
    missing_agent = [t for t in stats["ok"] if t not in tokens]
    return {
        "seconds": seconds,
        "agents": agents,
        "appended": appended,
        "lost_appends": appended - present,
        "loss_rate": (appended - present) / appended if appended else 0.0,
        "agent_edits_ok": len(stats["ok"]),
        "agent_edits_stale": stats["stale"],
        "agent_edits_lost": len(missing_agent),
        "errors": stats["errors"][:5],
    }


# -- memory of big-file calls -----------------------------------------------------------


def memory_child(spec: dict[str, Any]) -> None:
    """Run one tool call in this fresh process; print its peak RSS above the baseline."""

    def status_kib(field: str) -> int:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise RuntimeError(field)

    from fsseam import Workspace

    ws = Workspace(spec["root"], load_entry_points=False)
    ctx = ws.context("probe")
    if spec.get("observe"):
        # An earlier view puts the digest in the stat cache, as in a real session.
        ctx.tools.execute("str_replace_editor", {"command": "view", "path": spec["path"],
                                                 "view_range": [1, 1]})
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current RSS
    base = status_kib("VmRSS")
    started = time.perf_counter()
    res = ctx.tools.execute(spec["tool"], spec["args"])
    seconds = time.perf_counter() - started
    peak = status_kib("VmHWM")
    print(json.dumps({
        "ok": res.ok,
        "code": res.error.code.value if res.error else None,
        "chars": len(res.text),
        "seconds": seconds,
        "peak_above_baseline_mib": (peak - base) / 1024,
        "peak_mib": peak / 1024,
    }))


def run_memory_child(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", json.dumps(spec)],
            capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "code": f"no answer within {timeout:.0f} s"}
    if out.returncode != 0:
        tail = out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        return {"ok": False, "code": tail[0]}
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _short_lines(path: Path, size: int) -> None:
    block = "".join(f"{i:07d} short line\n" for i in range(65536)).encode()
    with open(path, "wb") as f:
        written = 0
        while written < size:
            f.write(block)
            written += len(block)


def _one_line(path: Path, size: int) -> None:
    chunk = b"x" * MiB
    with open(path, "wb") as f:
        for _ in range(size // MiB):
            f.write(chunk)
        f.write(b"\n")


def bench_memory(base: Path, short_mib: int, sparse_mib: int, line_mib: int,
                 timeout: float) -> list[dict[str, Any]]:
    root = Path(tempfile.mkdtemp(prefix="fsseam-memory-", dir=base))
    _short_lines(root / "short.txt", short_mib * MiB)
    with open(root / "sparse.txt", "wb") as f:
        f.truncate(sparse_mib * MiB)
    _one_line(root / "line.txt", line_mib * MiB)
    editor = "str_replace_editor"
    cases = [
        (f"view [1, -1], {short_mib} MiB of short lines", editor,
         {"command": "view", "path": "/short.txt", "view_range": [1, -1]}, True),
        (f"read, limit 10^9, {short_mib} MiB of short lines", "read",
         {"file_path": "/short.txt", "limit": 10**9}, True),
        (f"create over an existing {sparse_mib} MiB sparse file", editor,
         {"command": "create", "path": "/sparse.txt", "file_text": "x"}, False),
        (f"view, one {line_mib} MiB line", editor,
         {"command": "view", "path": "/line.txt"}, False),
    ]
    results = []
    try:
        for name, tool, args, observe in cases:
            log(f"memory: {name}")
            spec = {"root": str(root), "tool": tool, "args": args, "observe": observe,
                    "path": args.get("path", args.get("file_path"))}
            results.append({"case": name, **run_memory_child(spec, timeout)})
    finally:
        for p in root.iterdir():
            p.unlink()
        root.rmdir()
    return results


# -- report ---------------------------------------------------------------------------


def render(appender: dict[str, Any] | None, memory: list[dict[str, Any]]) -> str:
    out = []
    if appender is not None:
        out += [
            "| external appender | seconds | agents | appends | lost appends | loss rate "
            "| agent edits ok | stale | agent edits lost |",
            "|---|---|---|---|---|---|---|---|---|",
            f"| local | {appender['seconds']:.0f} | {appender['agents']} | "
            f"{appender['appended']} | {appender['lost_appends']} | "
            f"{100 * appender['loss_rate']:.2f} % | {appender['agent_edits_ok']} | "
            f"{appender['agent_edits_stale']} | {appender['agent_edits_lost']} |",
            "",
        ]
    if memory:
        out += [
            "| call | result | output chars | seconds | peak RSS above baseline (process) |",
            "|---|---|---|---|---|",
        ]
        for m in memory:
            if "peak_above_baseline_mib" in m:
                res = "ok" if m["ok"] else m["code"]
                out.append(
                    f"| {m['case']} | {res} | {m['chars']} | {m['seconds']:.2f} | "
                    f"{m['peak_above_baseline_mib']:.1f} MiB ({m['peak_mib']:.0f} MiB) |"
                )
            else:
                out.append(f"| {m['case']} | {m['code']} | - | - | - |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="seconds, not minutes")
    ap.add_argument("--seconds", type=float, default=None, help="appender run length")
    ap.add_argument("--agents", type=int, default=2)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--no-appender", action="store_true")
    ap.add_argument("--json", help="also write the raw results to this file")
    ap.add_argument("--appender-child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.appender_child:
        path, seconds, gap = args.appender_child
        appender_child(path, float(seconds), float(gap))
        return 0
    if args.memory_child:
        memory_child(json.loads(args.memory_child))
        return 0

    base = Path(os.environ.get("FSSEAM_BENCH_DIR", tempfile.gettempdir()))
    seconds = args.seconds or (2.0 if args.quick else 30.0)
    appender = None
    if not args.no_appender:
        log(f"appender: {seconds:.0f} s, {args.agents} agents")
        appender = bench_appender(base, seconds, args.agents)
    memory: list[dict[str, Any]] = []
    if not args.no_memory:
        if args.quick:
            memory = bench_memory(base, short_mib=8, sparse_mib=64, line_mib=8, timeout=60)
        else:
            memory = bench_memory(base, short_mib=256, sparse_mib=1024, line_mib=1024,
                                  timeout=120)
    print(render(appender, memory))
    if args.json:
        Path(args.json).write_text(json.dumps({"appender": appender, "memory": memory},
                                              indent=2))
    lost_agent = appender is not None and appender["agent_edits_lost"] > 0
    errors = appender is not None and appender["errors"]
    return 1 if lost_agent or errors else 0


if __name__ == "__main__":
    sys.exit(main())
