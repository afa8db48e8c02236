"""The current table of docs/performance.md: the fast benchmarks of bench/, run once, with
the date, the commit and the machine they ran on.

    python bench/report.py            # print the report (a few minutes on 2 shared cores)
    python bench/report.py --update   # and write it into docs/performance.md
    python bench/report.py --quick    # memory and local only, few calls (the smoke test)

What it runs, each in a child process of this interpreter, with small sizes so that it
finishes in minutes:

- ``bench/run.py``: per-call latency of read, write and edit against raw fsspec and
  against each call's floor, and storage requests per call, on memory, local disk and S3
  (moto); K agents editing one file (the quick plan), which must lose no update;
- ``bench/window_memory.py``: peak memory of a window read of a large local file;
- ``bench/finders.py``: grep and glob on a small generated local tree (next to GNU grep)
  and on S3, GCS and Azure (next to a raw fsspec loop): requests counted at the server and
  the client's CPU per request;
- ``bench/branches.py``: read, write and edit on a branch next to main, and merges of 10
  and 1,000 files, requests counted at the server.

``--update`` replaces what lies between the two ``report`` markers of docs/performance.md,
so the page's table is always one run of this script. The exit status is that of the first
benchmark that failed (a lost update fails bench/run.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "performance.md"
START = "<!-- report:start (python bench/report.py --update writes this part) -->"
END = "<!-- report:end -->"


@dataclass(frozen=True)
class Part:
    """One benchmark of the report: its title, what it measures, its command line."""

    title: str
    about: str
    args: tuple[str, ...]


def parts(quick: bool) -> list[Part]:
    stores = "memory,local" if quick else "memory,local,s3"
    calls = "5" if quick else "40"
    window = "16" if quick else "256"
    branches = (("--stores", "memory,local", "-n", "3", "--merges", "10,100") if quick else
                ("--stores", "memory,local,s3,gcs", "-n", "20", "--merges", "10,1000"))
    finders = (("--quick", "--only", "local") if quick else
               ("--quick", "--only", "local,s3,gcs,azure", "--grep-objects", "500",
                "--glob-keys", "3000", "--runs", "3"))
    return [
        Part("Per call: read, write and edit",
             f"Medians of {calls} `ctx.tools.execute` calls on a 2,000-line, 80,000-byte "
             "file, next to raw fsspec doing the same I/O and next to each call's floor "
             "(the least work the call can be done with); requests counted at the server. "
             "Then K agents editing one file, each its own line, retrying on FS_STALE.",
             ("run.py", "--quick", "-n", calls, "--backends", stores, "--no-windows",
              "--generic", "none")),
        Part("Window read of a large local file",
             f"`read` of lines 1-2000 of a {window} MiB file: the memory it takes does not "
             "grow with the file.",
             ("window_memory.py", "--size-mib", window)),
        Part("Finders",
             "grep and glob through the tool and `ctx.fs`, on a generated local tree next to "
             "GNU grep and find, and on S3 (moto), GCS (fake-gcs-server) and Azure (Azurite, "
             "when installed) next to a raw `fs.find` + `fs.cat_file` loop; cold is the "
             "first grep (the content index is built), warm the next one after an outside "
             "writer changed 1% of the files. On the object stores, what the client spends "
             "(requests and its CPU per call and per request, which do not depend on where "
             "the emulator runs), then the time with a 20 ms round trip added.",
             ("finders.py", *finders)),
        Part("Branches",
             "Medians of `ctx.tools.execute` calls by an agent on a branch next to the same "
             "calls on main (a read of a file the branch did not change; a write and an edit "
             "of a file it changed; a file's first change, which keeps its base too), "
             "requests counted at the server; then `ws.merge` of a branch that changed 10 "
             "and 1,000 files, main read back and checked.",
             ("branches.py", *branches)),
    ]


def commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def run(part: Part) -> tuple[int, str]:
    """(exit status, the benchmark's stdout without its own date line and total time)."""
    started = time.monotonic()
    print(f"[report] {part.args[0]} ...", file=sys.stderr, flush=True)
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / part.args[0]), *part.args[1:]],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=False,
    )
    print(f"[report] {part.args[0]}: {time.monotonic() - started:.0f} s, "
          f"exit {done.returncode}", file=sys.stderr, flush=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
    kept = [line for line in done.stdout.splitlines()
            if not line.startswith(("fsseam benchmark, ", "(total ", "Run 20"))]
    return done.returncode, "\n".join(kept).strip()


def report(quick: bool) -> tuple[int, str]:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    out = [f"Run on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit "
           f"`{commit()}`: {platform.python_implementation()} {platform.python_version()}, "
           f"{os.cpu_count()} CPUs, load average {load} when it started"
           f"{' (quick)' if quick else ''}. Regenerate with `python bench/report.py --update`."]
    status = 0
    for part in parts(quick):
        code, text = run(part)
        status = status or code
        command = " ".join(["python", f"bench/{part.args[0]}", *part.args[1:]])
        out += ["", f"### {part.title}", "", part.about, "", f"`{command}`", "", text]
    return status, "\n".join(out) + "\n"


def update(text: str, page: Path = PAGE) -> None:
    """Put ``text`` between the page's markers (both must be there)."""
    current = page.read_text(encoding="utf-8")
    head, found, rest = current.partition(START)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise SystemExit(f"{page}: the report markers are missing")
    page.write_text(f"{head}{START}\n\n{text}\n{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="memory and local, few calls")
    ap.add_argument("--update", action="store_true", help="write it into docs/performance.md")
    args = ap.parse_args(argv)
    status, text = report(args.quick)
    print(text)
    if args.update and status == 0:
        update(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
