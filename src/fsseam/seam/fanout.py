"""A grep of a large local tree by several processes.

One Python process searches a local tree at about a third of the speed of GNU grep: the
system calls cost the same, the rest is the interpreter's time per file, and threads do
not share it out (each system call hands the GIL over). So a grep that has run for
:data:`SWITCH_SECONDS` in this process and still has parts of the tree ahead starts
helper processes (``Limits.finder_processes``; they stay for the next searches) and hands
them the parts (``split_tree``: subtrees, runs of files), while this process keeps
searching parts itself until a helper is ready.

Each part is scanned from an empty start with the call's pattern, limit, time left and
regex time left, and the scans' findings are put back in the walk's order
(:meth:`Scan.absorb`): the answer is the one a single process gives, prefix and all when
the time runs out. A helper that fails or dies costs nothing but time: its part is
searched here again. Helpers talk over pipes (length-prefixed pickles of values this
module defines); they are plain ``python -c`` processes, so nothing of the caller's
``__main__`` runs in them, whatever start method ``multiprocessing`` would choose.
"""

from __future__ import annotations

import math
import os
import select
from dataclasses import dataclass
from typing import Any

from ..backends.base import TreePart
from ..globs import Glob
from ..grep import Pattern, RegexBudget
from ..versions import Version
from . import deadline as _clock
from .deadline import Deadline
from .scanning import GrepMode, Scan
from .workers import Answer, Helper, Helpers, helpers, read_message, write_message

__all__ = ["MAX_HELPERS", "SWITCH_SECONDS", "Helpers", "PartJob", "helpers", "main",
           "processes", "run_parts", "scan_part"]

SWITCH_SECONDS = 0.25
"""How long a grep runs in this process before it hands parts of the tree to helpers: a
search of a few thousand files ends before, and never starts one."""

MAX_HELPERS = 8
_AHEAD = 128
"""Parts handed out ahead of the first one not yet put back, per helper: the other helpers
keep going while one searches a part larger than the rest (a tree's parts are of any
size). What the answers waiting their turn hold is bounded apart (``_held``)."""
_GRACE = 2.0
"""How long past the call's deadline to wait for a helper's answer (a helper stops at
its own deadline; one stuck in a read is given up on)."""


def processes(setting: int | None) -> int:
    """How many helpers a search may use (``Limits.finder_processes``); fewer than 2 means
    none: one helper would only move the work to another process."""
    if setting is None:
        try:
            setting = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - macOS has no affinity
            setting = os.cpu_count() or 1
        setting = min(setting, MAX_HELPERS)
    return setting if setting >= 2 else 0


@dataclass(frozen=True)
class PartJob:
    """One part of a grep, as a helper gets it."""

    part: TreePart
    key: str
    pattern: Pattern
    files: Glob | None
    mode: GrepMode
    context: int
    limit: int
    cap: int
    seconds: float
    """The call's time left when the part was handed out (inf: no limit)."""
    regex_seconds: float


class _PartScan(Scan):
    def __init__(self, job: PartJob, deadline: Deadline, budget: RegexBudget) -> None:
        super().__init__(job.key, job.pattern, job.files, job.mode, job.context, job.limit,
                         cap=job.cap, deadline=deadline, budget=budget)
        self.versions: dict[str, tuple[str, Version]] = {}

    def seen(self, key: str, path: str, version: Version) -> None:
        self.versions[path] = (key, version)


def scan_part(job: PartJob) -> Answer:
    """Scan one part in a helper, on a deadline and a regex budget of its own, made from
    the time the call had left when it handed the part out."""
    # Deadline(0) means no limit: a job handed out with no time left must stop at once.
    s = job.seconds
    deadline = Deadline(0) if math.isinf(s) else Deadline(max(s, 1e-9))
    budget = RegexBudget(job.regex_seconds, deadline.left)
    before = budget.left
    scan = _PartScan(job, deadline, budget)
    needle = scan.needle
    holds = None if needle is None else (lambda data: needle in data)
    scan.scan_all(job.part.reads(scan.accept, job.cap, holds))
    return scan.found(), scan.versions, before - budget.left


def main() -> None:
    """A helper: answer jobs from stdin on stdout until stdin closes."""
    out = os.dup(1)
    os.dup2(2, 1)  # whatever prints, the answers' pipe stays clean
    write_message(out, ("ready", os.getpid()))
    while True:
        try:
            call, index, job = read_message(0)
        except EOFError:
            return
        try:
            answer: Any = ("done", call, index, scan_part(job))
        except BaseException as e:  # the caller searches the part again
            answer = ("failed", call, index, repr(e))
        write_message(out, answer)



def run_parts(scan: Scan, parts: list[TreePart], n: int) -> None:
    """Search ``parts`` in order into ``scan``, with up to ``n`` helpers once the search
    has run :data:`SWITCH_SECONDS` here (see the module docstring)."""
    pool: Helpers | None = helpers()
    assert pool is not None
    if not pool.lock.acquire(blocking=False):
        pool = None  # another search has them: this one runs here
    try:
        _run(scan, parts, n, pool)
    finally:
        if pool is not None:
            pool.lock.release()


def _job(scan: Scan, part: TreePart) -> PartJob:
    # The part may show no more than the answer has room for now: less than that room is
    # left once the parts before it are put back, so it cuts nothing the answer shows.
    shown = scan.shown_lines if scan.mode == "content" else len(scan.shown)
    return PartJob(part=part, key=scan.key, pattern=scan.pattern, files=scan.files,
                   mode=scan.mode, context=scan.context, limit=max(scan.limit - shown, 0),
                   cap=scan.cap, seconds=scan.deadline.left(),
                   regex_seconds=scan.budget.left)


def _run(scan: Scan, parts: list[TreePart], n: int, pool: Helpers | None) -> None:
    started = _clock.clock()
    call = -1
    if pool is not None:
        pool.calls += 1
        call = pool.calls
    answers: dict[int, Answer | None] = {}
    needle = scan.needle
    holds = None if needle is None else (lambda data: needle in data)

    def here(i: int) -> None:
        # Every part before it is put back: this one is scanned straight into the
        # call's own scan, exactly as one process scans it.
        scan.scan_all(parts[i].reads(scan.accept, scan.cap, holds))

    merged = handed = 0
    helped = False
    while merged < len(parts) and scan.cut is None:
        if merged in answers:  # put back in the walk's order
            got = answers.pop(merged)
            if got is None:  # a helper failed on it: search it here
                here(merged)
            else:
                scan.budget.left -= got[2]  # spent in a helper, on a budget of its own
                scan.absorb(got[0], got[1])
            merged += 1
            continue
        mine: list[Helper] = []
        if pool is not None and (helped or _clock.clock() - started >= SWITCH_SECONDS):
            # Past the first moments of a search (which end most searches), helpers.
            helped = True
            if not pool.all and not pool.failed and len(parts) - handed >= 2:
                pool.start(n)
            mine = pool.all[:n]
            _take(pool, mine, call, answers, 0.0)
            handed = _hand_out(scan, parts, pool, mine, call, answers, handed,
                               merged + _AHEAD * n)
            mine = pool.all[:n]
        if not any(h.job is not None and h.job[0] == call for h in mine):
            # No helper is on this search (none ready yet, or none at all), so every
            # part handed out is answered: put those back, or take the next one here.
            if merged in answers:
                continue
            assert merged == handed
            here(handed)
            handed = merged = handed + 1
            if pool is not None:
                pool.parts_here += 1
            continue
        assert pool is not None
        left = scan.deadline.left()
        if not _take(pool, mine, call, answers,
                     None if math.isinf(left) else max(left, 0.0) + _GRACE):
            scan.cut = parts[merged].start  # the helpers did not answer in time
            return


def _hand_out(scan: Scan, parts: list[TreePart], pool: Helpers, mine: list[Helper],
              call: int, answers: dict[int, Answer | None], handed: int, upto: int) -> int:
    """Give the next parts (before ``upto``) to the idle helpers, while what the answers
    waiting their turn show is under twice the limit; the next part not handed out."""
    for h in [h for h in mine if h.ready and h.job is None]:
        if (handed == len(parts) or handed >= upto
                or _held(answers) >= 2 * max(scan.limit, 1)):
            break
        try:
            write_message(h.to, (call, handed, _job(scan, parts[handed])))
        except OSError:
            pool.drop(h)
            continue
        h.job = (call, handed)
        handed += 1
    return handed


def _held(answers: dict[int, Answer | None]) -> int:
    """What the answers waiting their turn show: files and matching lines. No part is
    handed out while they show twice the call's limit, so they hold at most that plus one
    part's worth (at most the limit) per helper; once the answer is full, a part shows
    nothing and comes back as counts."""
    return sum(len(a[0].shown) + sum(len(h.matches) for f in a[0].shown for h in f.hunks or ())
               for a in answers.values() if a is not None)


def _take(pool: Helpers, mine: list[Helper], call: int, answers: dict[int, Answer | None],
          timeout: float | None) -> bool:
    """Take the messages of helpers that have one, waiting up to ``timeout`` (None: no
    limit) for the first; False when none came in time."""
    if not mine:
        return True
    poll = select.poll()  # not select(): a long-lived process's pipes may be past fd 1023
    for h in mine:
        poll.register(h.fro, select.POLLIN)
    wait = None if timeout is None else math.ceil(timeout * 1000)
    readable = {fd for fd, _ in poll.poll(wait)}
    for h in mine:
        if h.fro in readable:
            job = h.job
            pool._receive(h, call, answers)
            if job is not None and job[0] == call and answers.get(job[1]) is not None:
                pool.parts_there += 1
    return bool(readable) or timeout == 0.0
