"""bench/run.py still runs, and its quick run on embedded backends loses no update."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tables(text: str) -> list[list[list[str]]]:
    """Every markdown table in ``text`` as rows of cells (header first, rule dropped)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= {"-", ":"} for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _table_with(tables: list[list[list[str]]], column: str) -> tuple[list[str], list[list[str]]]:
    for table in tables:
        header = table[0]
        if any(column in h for h in header):
            return header, table[1:]
    raise AssertionError(f"no table with a {column!r} column")


def test_quick_bench_on_embedded_backends() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--backends",
         "memory,local"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tables = _tables(proc.stdout)

    header, rows = _table_with(tables, "lost updates")
    lost = next(i for i, h in enumerate(header) if h == "lost updates")
    phantom = header.index("phantom")
    errors = header.index("errors")
    assert {r[0] for r in rows} == {"memory", "local"}
    assert {"threads", "processes"} <= {r[1] for r in rows}
    for r in rows:
        assert r[lost] == "0", r
        assert r[phantom] == "0", r
        assert r[errors] == "0", r
        assert int(r[header.index("edits")]) == int(r[header.index("K")]) * int(
            r[header.index("M")]
        ), r

    header, rows = _table_with(tables, "read ratio")
    assert {r[0] for r in rows} == {"memory", "local"}
    requests = next(i for i, h in enumerate(header) if h.startswith("requests"))
    for r in rows:
        # Requests are counted at a server: not applicable to embedded storage.
        assert r[requests] == "n/a", r
        for col in ("read ratio", "write ratio", "edit ratio"):
            assert float(r[header.index(col)]) > 0, r


def test_generic_path_requests_next_to_the_adapters() -> None:
    """bench/run.py's generic-path table: requests counted at the server for read, write
    after read and edit through the generic backend, and the dedicated adapters' 1/1/2."""
    from fsseam.testing.azurite import AzuriteNotFound, ensure_azurite

    stores = []
    for store, module in (("s3", "fsseam_s3.testing"), ("gcs", "fsseam_gcs.testing")):
        if importlib.util.find_spec(module.split(".")[0]) is not None:
            stores.append(store)
    try:
        ensure_azurite()
        if importlib.util.find_spec("adlfs") is not None:
            stores.append("azure")
    except AzuriteNotFound:
        pass
    if not stores:
        pytest.skip("no emulator for the generic path is installed")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--backends", "none",
         "--generic", ",".join(stores)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header, rows = _table_with(_tables(proc.stdout), "write after read")
    got = {r[0].split(" ")[0]: r for r in rows}
    assert sorted(got) == sorted(stores)
    read, write, edit = (header.index(c) for c in ("read", "write after read", "edit"))
    adapter = next(i for i, h in enumerate(header) if h.startswith("dedicated adapter"))
    expected = {
        "s3": (("2", "3", "5"), "1/1/2 (fsseam-s3)"),  # s3fs's cat_file: HEAD + GET
        "gcs": (("1", "2", "3"), "1/1/2 (fsseam-gcs)"),
        "azure": (("1", "2", "3"), "1/1/2 (fsseam-azure)"),
    }
    for store, r in got.items():
        assert ((r[read], r[write], r[edit]), r[adapter]) == expected[store], r


def test_conflict_recovery_bench() -> None:
    """bench/conflicts.py: the scripted agent's tool calls to recover from each conflict,
    with the final bytes checked. ``--before HEAD`` runs the same agent on the committed
    code in a child process (the path the documented before/after table takes)."""
    import shutil

    before = ["--before", "HEAD"] if shutil.which("git") and (ROOT / ".git").exists() else []
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "conflicts.py"), "--quick", "--backends",
         "memory", *before],
        capture_output=True, text=True, timeout=240, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header, rows = _table_with(_tables(proc.stdout), "tool calls after")
    after = header.index("tool calls after")
    got = {r[1]: (r[after], r[header.index("final bytes right")]) for r in rows}
    assert got == {
        "other line": ("2", "yes"),  # refused with the whole diff, retried: no read
        "same fix": ("1", "yes"),  # refused, saying the file already holds the change
        "target changed": ("2", "yes"),  # the refusal says the target is gone, shows the line
        "large change": ("3", "yes"),  # the diff is cut: a read is still needed
    }
    if before:
        col = header.index("tool calls before")
        assert {r[1]: r[col] for r in rows} == {k: v[0] for k, v in got.items()}


def test_finders_bench_local_rows() -> None:
    """bench/finders.py's local rows on a small generated tree: every side (fsseam through
    ``ctx.fs`` and the tool, GNU grep, ripgrep when installed) found the same matches, or
    the script fails."""
    import shutil

    if shutil.which("grep") is None or shutil.which("find") is None:
        pytest.skip("GNU grep and find are needed")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "finders.py"), "--quick", "--only", "local"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header, rows = _table_with(_tables(proc.stdout), "fsseam tool")
    assert [r[0] for r in rows] == [
        "grep rare literal, files_with_matches", "grep rare literal, content",
        "grep regex, content", "glob **/*.py"]
    found = header.index("found")
    assert all(int(r[found]) > 0 for r in rows), rows
    rg = header.index("ripgrep")
    # Looked for on PATH and beside the interpreter (pip install ripgrep puts it there).
    have_rg = shutil.which("rg") or shutil.which("rg", path=os.path.dirname(sys.executable))
    assert all((r[rg] == "missing") == (have_rg is None) for r in rows), rows


def test_finders_bench_object_store_rows() -> None:
    """bench/finders.py's object-store rows, tiny sizes, on S3 (moto), GCS
    (fake-gcs-server) and Azure (Azurite) where installed: what the client spends next to
    the raw loop, counted at the server. Every grep found the needles (the script fails
    otherwise); a glob of 200 keys is one listing, a grep without the index one listing and
    a GET per object, a warm grep fewer requests than the cold one, and the 20 ms rows are
    there with their goals."""
    stores = [s for s, modules in (("s3", ("s3fs", "moto", "fsseam_s3")),
                                   ("gcs", ("gcsfs", "fsseam_gcs")),
                                   ("azure", ("adlfs", "fsseam_azure")))
              if all(importlib.util.find_spec(m) is not None for m in modules)]
    if "azure" in stores:
        from fsseam.testing.azurite import AzuriteNotFound, find_azurite

        try:
            find_azurite()
        except AzuriteNotFound:
            stores.remove("azure")
    if not stores:
        pytest.skip("no object-store emulator is installed")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "finders.py"), "--quick", "--only",
         ",".join(stores)],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tables = _tables(proc.stdout)
    header, rows = _table_with(tables, "client CPU ms per request")
    col = {name: next(i for i, h in enumerate(header) if h.startswith(name)) for name in (
        "requests per call", "client CPU ms per call", "client CPU ms per request", "goal")}
    names = {"s3": "s3 (moto)", "gcs": "gcs (fake-gcs-server)", "azure": "azure (Azurite)"}
    calls = ["grep 40 objects cold (index on, none stored) (find + cat loop)",
             "grep 40 objects warm (needle in 1%, 1 changed outside) (find + cat loop)",
             "grep 40 objects, content_index=False (find + cat loop)",
             "glob 200 keys (fs.find)"]
    assert [r[0] for r in rows] == [f"{names[s]}: {c}" for s in stores for c in calls]

    def pair(row: list[str], name: str) -> tuple[float, float]:
        ours, raw = row[col[name]].split(" / ")
        return float(ours), float(raw)

    for store in stores:
        cold, warm, plain, glob = (r for r in rows if r[0].startswith(names[store]))
        for r in (cold, warm, plain, glob):
            assert min(pair(r, "client CPU ms per call")) > 0, r
            assert min(pair(r, "client CPU ms per request")) > 0, r
        # One page of /k, and one listing of the root for the ignore files above /k.
        assert pair(glob, "requests per call")[0] == 2, glob
        assert glob[col["goal"]] == "1,000 keys per request: met", glob
        # The root's listing (its ignore files), a listing of /g, 40 GETs.
        assert pair(plain, "requests per call")[0] == 42, plain
        assert pair(warm, "requests per call")[0] < pair(cold, "requests per call")[0], warm
    header, rows = _table_with(tables, "peer time")
    assert [r[0] for r in rows] == [f"{names[s]}: {c}, 20 ms round trip" for s in stores
                                    for c in ("grep 40 objects cold (index on, none stored)",
                                              "grep 40 objects warm (needle in 1%, 1 changed "
                                              "outside)",
                                              "grep 40 objects, content_index=False")]
    assert proc.stdout.count("(goal: under 1 s at 10,000 objects, not judged at 40)") == len(
        stores)


def test_report_prints_the_performance_table_with_its_date_and_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/report.py: one run of the fast benchmarks, headed by its date and commit; the
    page it writes holds its markers, and ``update`` replaces only what lies between them."""
    import re

    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "report.py"), "--quick"],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    head = proc.stdout.splitlines()[0]
    assert re.match(r"Run on \d{4}-\d\d-\d\d \d\d:\d\d UTC at commit `([0-9a-f]{4,}|unknown)`",
                    head), head
    tables = _tables(proc.stdout)
    for column in ("read ratio", "ratio to floor", "lost updates", "peak RSS above baseline",
                   "fsseam tool", "branch ms", "files merged"):
        _table_with(tables, column)

    spec = importlib.util.spec_from_file_location("report", ROOT / "bench" / "report.py")
    assert spec is not None and spec.loader is not None
    report = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "report", report)  # its dataclass looks itself up there
    spec.loader.exec_module(report)
    assert report.START in report.PAGE.read_text(encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(f"before\n{report.START}\nold\n{report.END}\nafter\n", encoding="utf-8")
    report.update("new\n", page)
    assert page.read_text(encoding="utf-8") == (
        f"before\n{report.START}\n\nnew\n\n{report.END}\nafter\n")


def test_branches_bench() -> None:
    """bench/branches.py on memory, local and S3 (moto) when installed, tiny sizes: every
    merge published every file exactly (the script fails otherwise), and at the server a
    branch read of a file the branch did not change costs main's read and one request
    more, a branch write three requests (the aims of docs/branches.md)."""
    stores = ["memory", "local"]
    if all(importlib.util.find_spec(m) is not None for m in ("s3fs", "moto", "fsseam_s3")):
        stores.append("s3")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "branches.py"), "--stores", ",".join(stores),
         "-n", "1", "--merges", "3,10"],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tables = _tables(proc.stdout)
    header, rows = _table_with(tables, "branch ms")
    calls = {(r[0], r[1]): r for r in rows}
    assert sorted(calls) == sorted((s, op) for s in stores for op in (
        "read", "write", "write, first change", "edit"))
    main_req, branch_req = header.index("requests main"), header.index("requests branch")
    for (store, _), r in calls.items():
        assert float(r[header.index("branch ms")]) > 0, r
        if store != "s3":
            assert (r[main_req], r[branch_req]) == ("n/a", "n/a"), r
    if "s3" in stores:
        read, write = calls["s3", "read"], calls["s3", "write"]
        assert float(read[branch_req]) == float(read[main_req]) + 1, read
        assert float(write[branch_req]) <= 3, write
    header, rows = _table_with(tables, "files merged")
    assert [(r[0], r[1], r[header.index("main exact")]) for r in rows] == [
        (s, n, "yes") for s in stores for n in ("3", "10")]
