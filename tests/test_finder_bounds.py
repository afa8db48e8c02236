"""glob and grep stay inside their directory and inside their budgets: brace alternatives
cannot climb out of the root, glob matching never backtracks, one grep call spends a bounded
regex time, patterns have a length cap, and a file over the size cap is never read whole,
not even when it is the one file searched."""

from __future__ import annotations

import dataclasses
import re
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam import ErrorCode, FsError, Limits, Overwrite, Workspace
from fsseam.backends.objectstore.backend import READ_MANY_CONCURRENCY
from fsseam.globs import compile_glob
from fsseam.grep import RegexBudget, SearchTimeout, compile_pattern, has_match, matching_lines
from fsseam.outcomes import GrepOutcome

from .budget import examples
from .helpers import Unsized

MiB = 1 << 20


def _memory(**kw: Any) -> Workspace:
    return Workspace(f"memory://bounds-{uuid.uuid4().hex}", load_entry_points=False, **kw)


def _local(tmp_path: Path, **kw: Any) -> Workspace:
    root = tmp_path / "root"
    root.mkdir()
    return Workspace(str(root), load_entry_points=False, **kw)


def _ws(kind: str, tmp_path: Path, **kw: Any) -> Workspace:
    return _memory(**kw) if kind == "memory" else _local(tmp_path, **kw)


def put(ws: Workspace, key: str, data: bytes) -> None:
    ws.backend.write(key, data, Overwrite())


KINDS = ["memory", "local"]


# -- glob: no way out through braces ---------------------------------------------------------

CLIMBING = ["{..}/**", "{..}/{..}/**", "{.,..}/**", "src/{..}/{..}/**", "{x,..}/*",
            ".{.}/**", "{a,b/..}/**", "**/{..}/**"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pattern", CLIMBING)
def test_a_brace_alternative_cannot_climb_out_of_the_root(
    kind: str, pattern: str, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    ws = _ws(kind, tmp_path)
    put(ws, "src/a.py", b"x")
    ctx = ws.context("a")
    for path in ("/", "/src"):
        res = ctx.tools.execute("glob", {"pattern": pattern, "path": path})
        assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT, res.text
        assert "climbs above the search directory" in res.text
        assert "secret" not in res.text
        res = ctx.tools.execute("grep", {"pattern": "secret", "path": path, "glob": pattern})
        assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT, res.text


def test_a_brace_alternative_cannot_climb_out_of_a_local_mount(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / "inner").mkdir(parents=True)
    (store / "inner" / "a.txt").write_text("a")
    (tmp_path / "secret.txt").write_text("secret")
    ws = Workspace.mount({"/": f"memory://bounds-{uuid.uuid4().hex}",
                          "/data": str(store / "inner")}, load_entry_points=False)
    ctx = ws.context("a")
    for args in ({"pattern": "data/{..}/{..}/**"}, {"pattern": "{..}/{..}/**", "path": "/data"},
                 {"pattern": "/data/{..}/**"}):
        res = ctx.tools.execute("glob", args)
        assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT, res.text
        assert "secret" not in res.text and "a.txt" not in res.text
    assert ctx.tools.execute("glob", {"pattern": "data/{x,*}.txt"}).text == "/data/a.txt"


@pytest.mark.parametrize("kind", KINDS)
def test_alternatives_are_relative_to_the_search_directory(kind: str, tmp_path: Path) -> None:
    # A brace cannot anchor at the filesystem's root either: "/etc" inside braces is the
    # workspace's etc/ below path, as "." is path itself.
    ws = _ws(kind, tmp_path)
    put(ws, "src/a.py", b"x")
    put(ws, "etc/hosts", b"x")
    ctx = ws.context("a")
    res = ctx.tools.execute("glob", {"pattern": "{/etc,src}/*"})
    assert res.ok and res.text.splitlines() == ["/etc/hosts", "/src/a.py"], res.text
    res = ctx.tools.execute("glob", {"pattern": "{.,nothere}/a.py", "path": "/src"})
    assert res.ok and res.text == "/src/a.py", res.text


@pytest.mark.parametrize("kind", KINDS)
def test_the_walk_base_of_a_hand_made_glob_must_be_plain_names(
    kind: str, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("secret")
    ws = _ws(kind, tmp_path)
    put(ws, "src/a.py", b"x")
    fs = ws.context("a").fs
    for base in ("..", "src/..", "src//x", "./src"):
        glob = dataclasses.replace(compile_glob("**"), base=base)
        with pytest.raises(FsError) as info:
            fs.glob(glob, "/src")
        assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT


# -- glob matching: linear, same answers ------------------------------------------------------

def _old_segment(seg: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = seg.find("]", i + 2 if seg[i + 1 : i + 2] in ("!", "^") else i + 1)
            body = seg[i + 1 : j]
            negated = body[:1] in ("!", "^")
            body = body.replace("\\", "\\\\").replace("/", "")
            if negated:
                body = "^" + body[1:] + "/"  # the one change: [!a] matched "/" before
            out.append("[" + body + "]")
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _old_regex(alternative: str) -> re.Pattern[str]:
    """The backtracking translation the matcher replaced: the reference for its answers."""
    segments = alternative.split("/")
    parts: list[str] = []
    for n, seg in enumerate(segments):
        last = n == len(segments) - 1
        if seg == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_old_segment(seg) + ("" if last else "/"))
    return re.compile("".join(parts))


_TOKENS = ["a", "b", ".a", "-", "*", "*", "?", "**/", "/**", "/", "[ab]", "[!a]", "[a-c]",
           "{a,b}", "{a*,?b}"]
_PATH_CHARS = ["a", "b", "c", ".", "-", "/"]


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=8).map("".join),
       st.lists(st.sampled_from(_PATH_CHARS), max_size=10).map("".join))
def test_the_linear_matcher_answers_as_the_regex_did(pattern: str, path: str) -> None:
    glob = compile_glob(pattern)
    expected = any(_old_regex(a.text).fullmatch(path) is not None for a in glob.alternatives)
    assert glob.match(path) is expected, (glob.pattern, [a.text for a in glob.alternatives])
    # Each way of matching on its own: the one regex (where it is linear) and the set of
    # states (which the regex stands in for where it can).
    segs = path.split("/")
    for alt in glob.alternatives:
        want = _old_regex(alt.text).fullmatch(path) is not None
        assert bool(alt.match(segs)) is want, alt.text
        if alt.regex is not None:
            assert (re.fullmatch(alt.regex, path) is not None) is want, alt.text


class _Counted:
    def __init__(self, seg: Any) -> None:
        self.seg = seg
        self.calls = 0

    def __call__(self, name: str) -> bool:
        self.calls += 1
        return bool(self.seg(name))


def test_a_deep_path_costs_each_segment_one_try_per_step() -> None:
    # The repro backtracked through every split of 100 segments among the **s.
    glob = compile_glob("**/a/**/a/**/a/**/a/**/b/**/c")
    alt = glob.alternatives[0]
    counted = [s if isinstance(s, str) else _Counted(s) for s in alt.middle or ()]
    alt = dataclasses.replace(alt, middle=tuple(counted))
    glob = dataclasses.replace(glob, alternatives=(alt,))
    assert glob.match("/".join(["a"] * 100 + ["c"])) is False
    assert glob.match("/".join(["a"] * 100 + ["b", "c"])) is True
    calls = sum(c.calls for c in counted if isinstance(c, _Counted))
    assert calls <= 2 * 101 * 5  # two paths, each segment against each fixed step at most


@pytest.mark.parametrize("kind", KINDS)
def test_the_repro_patterns_finish(kind: str, tmp_path: Path) -> None:
    ws = _ws(kind, tmp_path)
    deep = "/".join(["d"] * 100)
    put(ws, f"{deep}/x.txt", b"x")
    put(ws, "a" * 200, b"aaaa")
    ctx = ws.context("a")
    res = ctx.tools.execute("glob", {"pattern": "**/**/**/**/**/**/**/**/nomatch.txt"})
    assert res.ok and res.value.total == 0, res.text
    res = ctx.tools.execute("glob", {"pattern": "**/**/**/**/**/**/**/**/x.txt"})
    assert res.ok and res.value.paths == [f"/{deep}/x.txt"], res.text
    res = ctx.tools.execute("glob", {"pattern": "*a*a*a*a*a*b"})
    assert res.ok and res.value.total == 0, res.text
    res = ctx.tools.execute("glob", {"pattern": "*a*a*a*a*a*a"})
    assert res.ok and res.value.paths == ["/" + "a" * 200], res.text
    res = ctx.tools.execute("grep", {"pattern": "a", "glob": "*a*a*a*a*a*b"})
    assert res.ok and res.value.files_matched == 0, res.text
    res = ctx.tools.execute("grep", {"pattern": "x",
                                     "glob": "**/**/**/**/**/**/**/**/nomatch.txt"})
    assert res.ok and res.value.files_matched == 0, res.text


@pytest.mark.parametrize("bad", ["[]", "[/]", "[z-a]", "x/[!]"])
def test_a_class_that_matches_nothing_is_an_invalid_argument(bad: str) -> None:
    # These raised re.error out of compile_glob before.
    with pytest.raises(FsError) as info:
        compile_glob(bad)
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT


def test_a_literal_bracket_class_matches_without_a_warning() -> None:
    # "[[]" is what the unclosed-class message tells the model to write.
    assert compile_glob("a[[]b").match("a[b")
    assert compile_glob("[a&&b]").match("&")


# -- pattern caps ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_patterns_over_the_cap_are_refused_without_being_echoed(
    kind: str, tmp_path: Path
) -> None:
    ws = _ws(kind, tmp_path)
    put(ws, "a.txt", b"abc\n")
    ctx = ws.context("a")
    long_glob = "**/" + "x" * 150_000
    calls = [
        ("glob", {"pattern": long_glob}),
        ("grep", {"pattern": "abc", "glob": long_glob}),
        ("grep", {"pattern": "q" * 10 * MiB}),
        ("grep", {"pattern": "a" * 1001}),
    ]
    for tool, args in calls:
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT, tool
        assert "over the cap of 1000" in res.text and len(res.text) < 400, res.text
    assert ctx.tools.execute("grep", {"pattern": "a" * 1000}).ok
    assert ctx.tools.execute("glob", {"pattern": "*" * 1000}).ok


def test_the_caps_are_the_workspaces_limits() -> None:
    ws = _memory(limits=Limits(grep_pattern_chars=5, glob_pattern_chars=4))
    put(ws, "a.txt", b"abcdef\n")
    ctx = ws.context("a")
    assert ctx.tools.execute("grep", {"pattern": "abcde", "glob": "*.tx"}).ok
    for tool, args in [("grep", {"pattern": "abcdef"}), ("glob", {"pattern": "*.txt"}),
                       ("grep", {"pattern": "a", "glob": "*.txt"})]:
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT


def test_a_bad_pattern_is_quoted_cut() -> None:
    ctx = _memory().context("a")
    res = ctx.tools.execute("grep", {"pattern": "(" + "b" * 900})
    assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "b" * 101 not in res.text and "(901 characters)" in res.text, res.text
    res = ctx.tools.execute("glob", {"pattern": "{a,b}" * 7 + "c" * 900})
    assert res.error is not None and "c" * 101 not in res.text, res.text
    res = ctx.tools.execute("glob", {"pattern": "z" * 900})
    assert res.ok and "z" * 101 not in res.text, res.text


# -- grep: one regex budget per call ------------------------------------------------------------

SLOW = b"a" * 40 + b"b\n"  # (a|aa)+$ takes seconds per file (Fibonacci many ways to fail)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["files_with_matches", "content"])
def test_a_slow_pattern_spends_the_calls_budget_once(
    kind: str, mode: str, tmp_path: Path
) -> None:
    ws = _ws(kind, tmp_path, limits=Limits(grep_regex_seconds=0.2))
    for n in range(10):
        put(ws, f"f{n}.txt", SLOW)
    put(ws, "0.bin", b"\x00binary")
    res = ws.context("a").tools.execute("grep", {"pattern": "(a|aa)+$", "output_mode": mode})
    assert res.ok, res.text
    out = res.value
    assert isinstance(out, GrepOutcome)
    # The first file takes the whole budget; the other nine are counted, not searched.
    assert out.stopped and out.searched == 1
    assert out.skipped == {"timeout": 10, "binary": 1}
    assert "The search stopped early" in res.text and "Narrow with path or glob" in res.text


def test_a_search_that_times_out_spends_what_it_was_allowed() -> None:
    # The engine's clock is the process's CPU time; the budget's is the wall clock. A search
    # stopped by its timeout must end the budget it was given all of, whichever ran faster.
    budget = RegexBudget(0.1)
    with pytest.raises(SearchTimeout):
        has_match(SLOW.decode(), compile_pattern("(a|aa)+$"), budget)
    assert budget.spent
    with pytest.raises(SearchTimeout):  # nothing left: refused before the engine runs
        matching_lines("aaa", compile_pattern("a+"), budget)


@pytest.mark.parametrize("kind", KINDS)
def test_a_fast_pattern_is_not_stopped(kind: str, tmp_path: Path) -> None:
    ws = _ws(kind, tmp_path, limits=Limits(grep_regex_seconds=0.2))
    for n in range(50):
        put(ws, f"f{n}.txt", b"x = 1\n" * 200 + b"def main():\n")
    res = ws.context("a").tools.execute("grep", {"pattern": r"def \w+\(", "output_mode": "count"})
    assert res.ok and res.value.files_matched == 50 and not res.value.stopped, res.text
    assert "stopped early" not in res.text


# -- grep: a file over the size cap is not read --------------------------------------------------

def test_grep_of_one_sparse_file_over_the_cap_does_not_read_it(tmp_path: Path) -> None:
    ws = _local(tmp_path)
    big = tmp_path / "root" / "big.log"
    with big.open("wb") as f:
        f.write(b"needle\n")
        f.truncate(1 << 30)  # 1 GiB, nearly all of it a hole: nothing on disk
    put(ws, "small.log", b"needle\n")
    ctx = ws.context("a")
    tracemalloc.start()
    try:
        res = ctx.tools.execute("grep", {"pattern": "needle", "path": "/big.log"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.ok, res.text
    assert res.value.skipped == {"too_large": 1} and res.value.files_matched == 0
    assert "1 too large" in res.text
    assert peak < 4 * MiB, peak
    res = ctx.tools.execute("grep", {"pattern": "needle", "path": "/small.log"})
    assert res.ok and res.value.files_matched == 1


@pytest.mark.parametrize("path", ["/big.txt", "/"])
def test_a_file_of_unknown_size_is_read_only_up_to_the_cap(path: str) -> None:
    backend = Unsized.from_url(f"memory://unsized-{uuid.uuid4().hex}",
                                {"global_store": False})
    assert isinstance(backend, Unsized)
    limits = Limits(max_edit_bytes=1 * MiB, read_chunk_bytes=64 * 1024)
    ws = Workspace("memory://unsized", backend=backend, limits=limits, load_entry_points=False)
    put(ws, "big.txt", b"needle\n" + b"x" * (8 * MiB))
    put(ws, "small.txt", b"needle\n")
    res = ws.context("a").tools.execute("grep", {"pattern": "needle", "path": path,
                                                 "output_mode": "content"})
    assert res.ok, res.text
    assert res.value.skipped == {"too_large": 1}
    assert [f.path for f in res.value.files] == ([] if path == "/big.txt" else ["/small.txt"])
    assert backend.streamed <= 1 * MiB + 64 * 1024 + len(b"needle\n")


# -- the same on S3, through a mount -------------------------------------------------------------

def _s3_mounted(moto_s3: Any, **kw: Any) -> tuple[Workspace, str]:
    bucket = moto_s3.create_bucket()
    ws = Workspace.mount({"/": f"memory://bounds-{uuid.uuid4().hex}",
                          "/data": f"s3://{bucket}/ws"},
                         storage_options={"/data": moto_s3.storage_options()},
                         load_entry_points=False, **kw)
    return ws, bucket


@pytest.mark.parametrize("mounted", [False, True])
def test_on_s3_the_budget_is_spent_once_and_reads_stop(moto_s3: Any, mounted: bool) -> None:
    limits = Limits(grep_regex_seconds=0.2)
    if mounted:
        ws, bucket = _s3_mounted(moto_s3, limits=limits)
        top = "data"
    else:
        bucket = moto_s3.create_bucket()
        ws = Workspace(f"s3://{bucket}/ws", moto_s3.storage_options(), limits=limits,
                       load_entry_points=False)
        top = "d"
    for n in range(40):
        put(ws, f"{top}/f{n:02}.txt", SLOW)
    moto_s3.log.clear()
    res = ws.context("a").tools.execute("grep", {"pattern": "(a|aa)+$", "path": f"/{top}"})
    assert res.ok, res.text
    assert res.value.stopped and res.value.searched == 1
    assert res.value.skipped == {"timeout": 40}
    # The reads already asked for when the budget ran out (as many as read_many keeps in
    # flight, and the one it takes before it first waits) arrive and are counted; the other
    # files are never fetched.
    gets = [p for m, p in moto_s3.log.to_bucket(bucket) if m == "GET" and p.endswith(".txt")]
    assert len(gets) <= READ_MANY_CONCURRENCY + 1, gets


def test_on_s3_one_file_over_the_cap_is_not_fetched(moto_s3: Any) -> None:
    ws, bucket = _s3_mounted(moto_s3, limits=Limits(max_edit_bytes=64 * 1024))
    put(ws, "data/big.txt", b"needle\n" + b"x" * (256 * 1024))
    moto_s3.log.clear()
    res = ws.context("a").tools.execute("grep", {"pattern": "needle", "path": "/data/big.txt"})
    assert res.ok and res.value.skipped == {"too_large": 1}, res.text
    assert moto_s3.log.response_bytes(bucket) < 64 * 1024, moto_s3.log.to_bucket(bucket)


def test_a_negated_class_does_not_match_a_slash() -> None:
    # The old regex let [!x] match "/", so a/b matched a[!x]b across two segments.
    assert not compile_glob("a[!x]b").match("a/b")
    assert not compile_glob("**/a[!x]b").match("q/a/b")
    assert compile_glob("a[!x]b").match("ayb")
