"""The local rows of bench/finders.py: grep and glob of a generated tree of 200,000 files
(about 1 GiB) through fsseam (``ctx.fs`` and ``ctx.tools.execute``, with helper
processes as by default, and the tool in one process) next to GNU grep and ripgrep, warm
page cache, medians of a few runs after one to warm up (the helpers start in it; the first
search of a process is timed apart), peak memory of each.

The tree is made once (seconds per 10,000 files) into a temp dir, or into ``--tree DIR``
and reused while its stamp says it was made with the same parameters.

    python bench/finders_local.py --tree /var/tmp/fsseam-tree --only glob --runs 9

runs the local rows alone (``--only grep``, ``glob`` or both). Every side of a row runs
once per round, in turn, so a slow spell of a shared machine falls on all of them; the
medians are compared. The glob row also gives each side's CPU time (this process's for
fsseam, the peer process's), which load changes less than wall time.

What the peers are told, so that all of them search the same files: fsseam skips hidden
and dependency directories (``.git``, ``node_modules``, ...) and binary files by itself;
GNU grep is given ``-I --exclude-dir=.git --exclude-dir=node_modules`` and ripgrep
``--no-ignore`` (no ``.gitignore`` rules) with ``-g '!node_modules'`` (it skips hidden
paths and binary files by itself).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RARE = "xq_rare_token_7f3"
"""A literal in about one file in 1,000."""
REGEX = r"handle_[a-z]+_v[0-9]+\("
"""A regex with a few hundred matching lines."""
GLOB = "**/*.py"
SHOWN = 1000
"""fsseam's limit on files or lines shown (every match is still counted): an agent asks
for fewer; the peers print every one."""
GREP_EXCLUDES = ["-I", "--exclude-dir=.git", "--exclude-dir=node_modules"]
RG_EXCLUDES = ["--no-ignore", "-g", "!node_modules"]
EXTS = [".py"] * 5 + [".js"] * 3 + [".ts"] * 2 + [".go", ".rs", ".c", ".h", ".md", ".json",
                                                    ".txt", ".yaml"]
WORDS = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "iota", "kappa",
    "lambda", "sigma", "omega", "request", "response", "handler", "config", "session",
    "buffer", "index", "value", "result", "error", "client", "server", "cache", "token",
    "parse", "render", "update", "create", "delete", "source", "target", "count", "offset",
    "length", "width", "height", "items", "entry", "record", "state", "event", "queue",
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class TreeSpec:
    files: int
    large: int
    """Files of several MiB each (logs, a bundle)."""
    large_mib: int
    seed: int = 31

    def stamp(self) -> dict[str, Any]:
        return {"files": self.files, "large": self.large, "large_mib": self.large_mib,
                "seed": self.seed, "rare": RARE, "version": 2}


FULL = TreeSpec(files=200_000, large=4, large_mib=32)
QUICK = TreeSpec(files=1_000, large=1, large_mib=1)


def _line(rng: random.Random) -> str:
    w = rng.choice
    kind = rng.random()
    indent = " " * (4 * rng.randrange(4))
    if kind < 0.0004:
        return f"{indent}out = handle_{w(WORDS)}_v{rng.randrange(10)}({w(WORDS)})"
    if kind < 0.2:
        return f"{indent}def {w(WORDS)}_{w(WORDS)}(self, {w(WORDS)}, {w(WORDS)}=None):"
    if kind < 0.45:
        return f"{indent}{w(WORDS)} = {w(WORDS)}.{w(WORDS)}({w(WORDS)}, {rng.randrange(999)})"
    if kind < 0.6:
        return f"{indent}# {' '.join(w(WORDS) for _ in range(rng.randrange(3, 12)))}"
    if kind < 0.7:
        return ""
    return f"{indent}return {w(WORDS)}_{w(WORDS)} + {w(WORDS)}[{rng.randrange(64)}]"


def _corpus(rng: random.Random, size: int) -> bytes:
    lines: list[str] = []
    held = 0
    while held < size:
        line = _line(rng)
        lines.append(line)
        held += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def _dirs(rng: random.Random, count: int) -> list[str]:
    """Directories of varied depth (1 to 8), as a source tree has them."""
    tops = ["src", "lib", "tests", "docs", "tools", "packages", "services", "vendor_api"]
    out = list(tops)
    while len(out) < count:
        parent = rng.choice(out)
        if parent.count("/") >= 7:
            continue
        out.append(f"{parent}/{rng.choice(WORDS)}_{len(out)}")
    return out


def _put(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _text_file(rng: random.Random, corpus: bytes, size: int, rare: bool) -> bytes:
    start = rng.randrange(len(corpus) - size - 1)
    start = corpus.index(b"\n", start) + 1
    data = corpus[start:start + size]
    data = data[:data.rfind(b"\n") + 1] or b"\n"
    if rare:
        cut = data.find(b"\n", len(data) // 2) + 1
        data = data[:cut] + f"    token = '{RARE}'\n".encode() + data[cut:]
    return data


def make_tree(root: Path, spec: TreeSpec) -> dict[str, int]:
    """Write the tree; returns its counts (files by kind, bytes)."""
    rng = random.Random(spec.seed)
    corpus = _corpus(rng, 8 << 20)
    n_git = spec.files // 25  # 4 %: loose objects and refs, skipped by every finder
    n_modules = spec.files * 3 // 20  # 15 %: a dependency tree, skipped likewise
    n_binary = spec.files // 100
    n_source = spec.files - n_git - n_modules - n_binary - spec.large
    counts = {"source": 0, "binary": 0, "git": 0, "node_modules": 0, "large": 0,
              "bytes": 0, "rare_files": 0}
    dirs = _dirs(rng, max(8, n_source // 18))

    def put(rel: str, data: bytes, kind: str) -> None:
        _put(root / rel, data)
        counts[kind] += 1
        counts["bytes"] += len(data)

    for i in range(n_source):
        size = min(256 << 10, max(40, int(rng.lognormvariate(8.0, 1.0))))
        rare = rng.random() < 0.001 or i == n_source // 2  # one at least, even quick
        counts["rare_files"] += rare
        put(f"{rng.choice(dirs)}/m{i}{rng.choice(EXTS)}",
            _text_file(rng, corpus, size, rare), "source")
    for i in range(n_binary):
        blob = rng.randbytes(min(512 << 10, int(rng.lognormvariate(9.0, 1.2))))
        put(f"{rng.choice(dirs)}/asset{i}{rng.choice(['.png', '.so', '.bin'])}",
            b"\x89PNG\x00\x00" + blob, "binary")
    for i in range(spec.large):
        size = spec.large_mib << 20
        parts = [corpus] * (size // len(corpus) + 1)
        put(f"logs/big{i}{'.log' if i % 2 else '.js'}", b"".join(parts)[:size], "large")
    for i in range(n_git):
        put(f".git/objects/{i % 256:02x}/{i:038x}", b"x\x01" + rng.randbytes(600), "git")
    for i in range(n_modules):
        pkg = f"node_modules/pkg{i % 400}/lib/sub{i % 7}"
        # Their text holds the literal too: a peer that searched them would find more.
        put(f"{pkg}/f{i}.js", _text_file(rng, corpus, 2000, i % 100 == 0), "node_modules")
    return counts


def ensure_tree(spec: TreeSpec, where: str | None) -> tuple[Path, dict[str, Any], bool]:
    """The tree's root, its stamp, and whether it was made now (a temp dir to remove)."""
    if where is not None:
        base = Path(where)
        stamp_path = base / "stamp.json"
        if stamp_path.exists():
            stamp = json.loads(stamp_path.read_text())
            if stamp.get("spec") == spec.stamp():
                log(f"local: reusing the tree in {base / 'tree'}")
                return base / "tree", stamp, False
        shutil.rmtree(base / "tree", ignore_errors=True)
        base.mkdir(parents=True, exist_ok=True)
        temp = False
    else:
        base = Path(tempfile.mkdtemp(prefix="fsseam-finders-",
                                     dir=os.environ.get("FSSEAM_BENCH_DIR")))
        stamp_path = base / "stamp.json"
        temp = True
    log(f"local: writing {spec.files} files into {base / 'tree'}")
    t = time.perf_counter()
    counts = make_tree(base / "tree", spec)
    os.sync()  # the new files' writeback would fall on whichever side runs first
    stamp = {"spec": spec.stamp(), "counts": counts, "made_s": time.perf_counter() - t}
    stamp_path.write_text(json.dumps(stamp))
    log(f"local: tree made in {stamp['made_s']:.0f} s: {counts}")
    return base / "tree", stamp, temp


# -- measuring ---------------------------------------------------------------------------

def run_peer(cmd: list[str]) -> bytes:
    """The output of ``cmd`` (exit 1 is "nothing found")."""
    proc = subprocess.run(cmd, capture_output=True, check=False)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cmd} exited {proc.returncode}: {proc.stderr[-300:]!r}")
    return proc.stdout


def peer_peak(cmd: list[str]) -> float:
    """The peak RSS of ``cmd`` alone in MiB, as GNU time reports it (``ru_maxrss`` of this
    process's children would count the forked copy of this interpreter)."""
    if not Path("/usr/bin/time").exists():
        return float("nan")
    with tempfile.NamedTemporaryFile("r") as f:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f.name, *cmd],
                       capture_output=True, check=False)
        return int(f.read().split()[-1]) / 1024


@dataclass
class Side:
    name: str
    run: Callable[[], int]
    """One call; returns what it found (lines, files or paths) to compare across sides."""
    peak: Callable[[], float]
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    """CPU seconds (user + system) of each timed run: this process's for a side run here
    (its helper processes not counted), the peer process's for a peer."""
    found: int = -1
    peak_mib: float = float("nan")

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)


@dataclass
class LocalRow:
    what: str
    sides: list[Side]
    note: str = ""

    def side(self, name: str) -> Side | None:
        return next((s for s in self.sides if s.name == name), None)


def measure(row: LocalRow, runs: int) -> LocalRow:
    """Each side once to warm up, then ``runs`` rounds of every side in turn (a slow spell
    of a shared machine falls on all sides, not on one side's whole series), then once
    more for its peak memory."""
    for s in row.sides:
        s.found = s.run()
    for _ in range(runs):
        for s in row.sides:
            cpu = _cpu()
            t = time.perf_counter()
            got = s.run()
            s.times.append(time.perf_counter() - t)
            s.cpu.append(_cpu() - cpu)
            assert got == s.found, (row.what, s.name, got, s.found)
    for s in row.sides:
        s.peak_mib = s.peak()
    counts = {s.name: s.found for s in row.sides}
    if len(set(counts.values())) != 1:
        raise AssertionError(f"{row.what}: the sides found different counts: {counts}")
    return row


def _cpu() -> float:
    """CPU seconds used so far by this process and by its children waited for (a peer
    run is one such child; the search helpers, never waited for, are not)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def traced(fn: Callable[[], Any]) -> Callable[[], float]:
    def peak() -> float:
        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1] / (1 << 20)
        finally:
            tracemalloc.stop()
    return peak


def peer_side(name: str, cmd: list[str], unit: Callable[[bytes], int]) -> Side:
    def run() -> int:
        return unit(run_peer(cmd))
    return Side(name, run, lambda: peer_peak(cmd))


def _lines(out: bytes) -> int:
    return out.count(b"\n")


# -- the rows ----------------------------------------------------------------------------

def find_rg(install: bool) -> str | None:
    """ripgrep on PATH or beside this interpreter (``pip install ripgrep`` puts ``rg`` in
    the virtual environment's bin), else (with ``install``) installed by apt-get (as root)
    or pip into a temp dir."""
    found = shutil.which("rg") or shutil.which("rg", path=os.path.dirname(sys.executable))
    if found or not install:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        log("local: installing ripgrep with apt-get")
        subprocess.run(["apt-get", "install", "-y", "-q", "ripgrep"], capture_output=True,
                       check=False)
        found = shutil.which("rg")
        if found:
            return found
    target = Path(tempfile.gettempdir()) / "fsseam-bench-rg"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(target),
                    "ripgrep"], capture_output=True, check=False)
    for cand in (target / "bin" / "rg", *target.glob("**/bin/rg")):
        if cand.exists():
            return str(cand)
    return None


def rows(spec: TreeSpec, where: str | None, runs: int,
         only: tuple[str, ...] = ("grep", "glob")) -> tuple[list[LocalRow], str]:
    """The local rows (the grep rows, the glob row, or both) and a line saying what the
    tree is."""
    from fsseam import Workspace
    from fsseam.globs import compile_glob
    from fsseam.grep import compile_pattern
    from fsseam.limits import Limits

    root, stamp, temp = ensure_tree(spec, where)
    try:
        rg = find_rg(install=spec is not QUICK)
        # The regex row reads 1 GiB of text through the regex engine: more than the
        # default regex time of a call (Limits.grep_regex_seconds, 5 s), after which a
        # search stops early and counts the files left. The row times a whole search.
        ctx = Workspace(str(root), limits=Limits(grep_regex_seconds=600)).context("bench")
        # The same search in this process alone (Limits.finder_processes=1), next to the
        # default, which hands parts of a large tree to helper processes.
        alone = Workspace(str(root), limits=Limits(grep_regex_seconds=600,
                                                   finder_processes=1)).context("bench")
        top = str(root)
        out: list[LocalRow] = []
        first = first_search(ctx) if "grep" in only else ""

        def fs_grep(pattern: str, mode: str) -> Callable[[], int]:
            compiled = compile_pattern(pattern)

            def run() -> int:
                res = ctx.fs.grep(compiled, mode=mode,  # type: ignore[arg-type]
                                  limit=SHOWN)
                return res.lines_matched if mode == "content" else res.files_matched
            return run

        def tool_grep(pattern: str, mode: str, on: Any = ctx) -> Callable[[], int]:
            def run() -> int:
                res = on.tools.execute("grep", {"pattern": pattern, "output_mode": mode,
                                                "max_results": SHOWN})
                assert res.ok, res.text
                v = res.value
                return v.lines_matched if mode == "content" else v.files_matched
            return run

        def grep_row(what: str, pattern: str, mode: str, gnu: list[str],
                     rg_args: list[str]) -> LocalRow:
            sides = [Side("fsseam ctx.fs", fs_grep(pattern, mode),
                          traced(fs_grep(pattern, mode))),
                     Side("fsseam tool", tool_grep(pattern, mode),
                          traced(tool_grep(pattern, mode))),
                     Side(ALONE, tool_grep(pattern, mode, alone),
                          traced(tool_grep(pattern, mode, alone))),
                     peer_side("GNU grep", ["grep", *gnu, *GREP_EXCLUDES, pattern, top],
                               _lines)]
            if rg:
                sides.append(peer_side("ripgrep", [rg, *rg_args, *RG_EXCLUDES, pattern, top],
                                       _lines))
            return LocalRow(what, sides)

        plan = [
            ("grep rare literal, files_with_matches", RARE, "files_with_matches",
             ["-rl", "-F"], ["-l", "-F"]),
            ("grep rare literal, content", RARE, "content", ["-rn", "-F"], ["-n", "-F"]),
            ("grep regex, content", REGEX, "content", ["-rnE"], ["-n"]),
        ]
        for what, pattern, mode, gnu, rg_args in plan if "grep" in only else ():
            log(f"local: {what}")
            out.append(measure(grep_row(what, pattern, mode, gnu, rg_args), runs))
            log(render(out[-1:]))
        if "grep" in only:
            helpers = helpers_peak_mib()
            for r in out:
                r.note = f"helpers' peak RSS {helpers}"
            out[0].note += f"; the first search of the process (helpers start): {first}"
        if "glob" in only:
            log(f"local: glob {GLOB}")
            out.append(glob_note(measure(glob_row(ctx, compile_glob(GLOB), top, rg), runs)))
            log(render(out[-1:]))
        if rg is None:
            for r in out:
                r.note += "; ripgrep missing: `apt-get install ripgrep` or `pip install ripgrep`"
        counts = stamp["counts"]
        about = (f"{sum(counts[k] for k in ('source', 'binary', 'git', 'node_modules', 'large'))}"
                 f" files, {counts['bytes'] / (1 << 30):.2f} GiB ({counts['source']} text, "
                 f"{counts['binary']} binary, {counts['large']} of {spec.large_mib} MiB, "
                 f"{counts['git']} in .git, {counts['node_modules']} in node_modules); "
                 f"made in {stamp['made_s']:.0f} s")
        return out, about
    finally:
        if temp:
            shutil.rmtree(root.parent, ignore_errors=True)


ALONE = "fsseam tool, 1 process"


def first_search(ctx: Any) -> str:
    """The time of the rare-literal grep in a process whose helpers have not started: the
    search runs here while they start, and hands them parts once they are ready."""
    from fsseam.seam import workers

    workers.helpers().close()
    t = time.perf_counter()
    res = ctx.tools.execute("grep", {"pattern": RARE, "max_results": SHOWN})
    assert res.ok, res.text
    took = time.perf_counter() - t
    log(f"local: first search of the process {took * 1000:.0f} ms")
    return f"{took * 1000:.0f} ms"


def helpers_peak_mib() -> str:
    """The peak resident memory of each helper process (from its start, imports
    included: ``VmHWM``), which tracemalloc in this process does not see."""
    from fsseam.seam import workers

    peaks = []
    for h in workers.helpers().all:
        status = Path(f"/proc/{h.proc.pid}/status").read_text()
        kib = next(int(line.split()[1]) for line in status.splitlines()
                   if line.startswith("VmHWM:"))
        peaks.append(f"{kib / 1024:.0f}")
    return " / ".join(peaks) + " MiB" if peaks else "(none started)"


def glob_row(ctx: Any, pattern: Any, top: str, rg: str | None) -> LocalRow:
    def fs_glob() -> int:
        return int(ctx.fs.glob(pattern, limit=100).total)

    def tool_glob() -> int:
        res = ctx.tools.execute("glob", {"pattern": GLOB})
        assert res.ok, res.text
        return int(res.value.total)

    find_cmd = ["find", top, "(", "-name", ".git", "-o", "-name", "node_modules", ")",
                "-prune", "-o", "-type", "f", "-name", "*.py", "-print"]
    sides = [Side("fsseam ctx.fs", fs_glob, traced(fs_glob)),
             Side("fsseam tool", tool_glob, traced(tool_glob)),
             peer_side("GNU find", find_cmd, _lines)]
    if rg:
        sides.append(peer_side("ripgrep", [rg, "--files", *RG_EXCLUDES, "-g", "*.py", top],
                               _lines))
    return LocalRow(f"glob {GLOB}", sides)


def glob_note(row: LocalRow) -> LocalRow:
    """The glob row's note: ``ctx.fs`` against each peer too, and the CPU time of every
    side (a glob runs in one thread of this process; ripgrep walks with several)."""
    fs, tool = row.side("fsseam ctx.fs"), row.side("fsseam tool")
    assert fs is not None and tool is not None
    ratios = [f"ctx.fs / {p.name} {fs.median / p.median:.2f}x" for p in row.sides[2:]]
    cpu = ", ".join(f"{s.name} {s.cpu_median * 1000:.0f} ms" for s in row.sides)
    cpu_ratios = [f"tool / {p.name} {tool.cpu_median / p.cpu_median:.2f}x"
                  for p in row.sides[2:]]
    row.note = (f"{'; '.join(ratios)}; median CPU (user + system): {cpu} "
                f"({'; '.join(cpu_ratios)})")
    return row


def render(local: list[LocalRow]) -> str:
    head = ("| local | fsseam ctx.fs | fsseam tool | tool, 1 process | GNU grep / find | "
            "ripgrep | tool / GNU | tool / rg | found | peak MiB (ctx.fs / tool / GNU / rg) "
            "| note |")
    out = [head, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]

    def ms(s: Side | None) -> str:
        return "missing" if s is None else f"{s.median * 1000:.0f} ms"

    for r in local:
        fs, tool = r.side("fsseam ctx.fs"), r.side("fsseam tool")
        gnu = r.side("GNU grep") or r.side("GNU find")
        rg = r.side("ripgrep")
        assert fs and tool and gnu
        ratio_gnu = f"{tool.median / gnu.median:.2f}x"
        ratio_rg = "" if rg is None else f"{tool.median / rg.median:.2f}x"
        peaks = " / ".join("" if s is None else f"{s.peak_mib:.1f}" for s in (fs, tool, gnu, rg))
        one = r.side(ALONE)
        out.append(f"| {r.what} | {ms(fs)} | {ms(tool)} | {'' if one is None else ms(one)} "
                   f"| {ms(gnu)} | {ms(rg)} | {ratio_gnu} "
                   f"| {ratio_rg} | {fs.found} | {peaks} | {r.note} |")
    return "\n".join(out)



def main(argv: list[str] | None = None) -> int:
    """The local rows alone (``bench/finders.py --only local`` runs them with the rest)."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--quick", action="store_true", help="a tree of 1,000 files")
    ap.add_argument("--tree", default=None, help="where the tree is kept between runs")
    ap.add_argument("--runs", type=int, default=3, help="timed rounds of every side")
    ap.add_argument("--only", default="grep,glob", help="grep, glob or both")
    args = ap.parse_args(argv)
    only = tuple(p for p in args.only.split(",") if p)
    if not set(only) <= {"grep", "glob"}:
        ap.error(f"unknown rows {args.only}: grep, glob or both")
    print(f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores,"
          f" load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    local, about = rows(QUICK if args.quick else FULL, args.tree, args.runs, only)
    print(f"Local tree: {about}\n")
    print(render(local))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
