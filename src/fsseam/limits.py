"""Size limits of one workspace: what a call may hold in memory and show."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Limits", "MiB"]

MiB = 1 << 20


class Limits(BaseModel):
    """Size limits of one workspace."""

    model_config = ConfigDict(frozen=True)

    default_read_lines: int = 2000
    max_image_bytes: int = 3 * MiB + MiB // 2
    """The largest image a read shows (FS_TOO_LARGE above it): its base64 form (4/3 of it,
    4,893,356 bytes) stays under the 5 MB per image Anthropic's API accepts."""
    max_edit_bytes: int = 64 * MiB
    """Edits and whole-file writes hold the file in memory: above this, FS_TOO_LARGE."""
    max_pdf_pages: int = 500
    """The most pages of a PDF whose text a read extracts: above it, FS_TOO_LARGE (counted
    before any text is extracted; a PDF's page list alone can cost a minute)."""
    max_pdf_text_chars: int = 2_000_000
    """The most characters of text a read extracts from one PDF (500 dense pages): above
    it, FS_TOO_LARGE. The text is kept for the next windows of the read."""
    pdf_seconds: float = 20.0
    """The wall-clock time a read may spend extracting one PDF's text (pypdf parses each
    page's content whole, and pages that share one large stream parse it again each):
    past it, FS_TOO_LARGE. 0: no limit."""
    read_chunk_bytes: int = 1 * MiB
    count_budget_bytes: int = 1 * MiB
    """Once its window is full and the version is known, a read keeps counting the file's
    lines only up to this many bytes; past it the total is reported unknown. (A local file
    whose digest is not cached is read to the end anyway, to digest it.)"""
    doc_cache_bytes: int = 32 * MiB
    """Texts kept per version so a write after a read needs no second download, and a
    conflict shows what changed since the read. One cache of this size serves every
    Workspace of one store (URL and options) in this process."""
    conflict_diff_chars: int = 4000
    """FS_STALE shows what changed since the agent's read in at most this many characters
    of diff (longer diffs are cut, and the agent must read again). 0: no diff."""
    finder_seconds: float = 20.0
    """The wall-clock time one glob or grep call may take in all: listing, reading and
    searching. When it is up the call returns what it found so far, marked partial, with
    the first path it did not reach and a narrower path to search next (never a timeout
    error). 20 s is the timeout agents already know from other tools' globs, and it leaves
    an MCP client that gives up on a call at 60 s the time for one slow request past it
    and the answer. 0: no limit. ``ls`` is not under it: it lists one directory, whose
    rows it can only choose once it has seen every entry."""
    grep_regex_seconds: float = 5.0
    """What one grep call may spend in the regex engine, over all its files (each file also
    at most 2 s); once spent, the files left are skipped, counted as too slow, and the
    outcome says the search stopped early (and is partial). A plain-text pattern never
    spends it. It is part of ``finder_seconds``, not added to it."""
    finder_processes: int | None = None
    """How many processes one grep of a large local tree may search it with: None, as many
    as this process may run on at once (at most 8); 0 or 1, this process alone. Helper
    processes start only once a search has run a quarter of a second in this process, and
    stay for the next searches (see docs/finders.md, "Several processes")."""
    grep_pattern_chars: int = 1000
    """Longest grep pattern a tool accepts (FS_INVALID_ARGUMENT above it)."""
    glob_pattern_chars: int = 1000
    """Longest glob pattern (glob's pattern, grep's glob) a tool accepts."""
