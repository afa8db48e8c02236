"""A PDF read is bounded in pages, text and time (``Limits.max_pdf_pages``,
``max_pdf_text_chars``, ``pdf_seconds``): past a bound the read is FS_TOO_LARGE naming the
limit, shows nothing and records no observation.

The PDFs are made here, byte by byte, as small as the case needs: many pages that share
one page object or one content stream (the shape of the slow files: 0.6 MB of PDF whose
pages each parse the same large stream again). Time is bounded by a tiny limit, never by
measuring how long a call took.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, Limits, Workspace
from fsseam.outcomes import PdfOutcome
from fsseam.seam import reading
from fsseam.tools import ToolResult
from fsseam.versions import Overwrite

pypdf = pytest.importorskip("pypdf")


def make_pdf(pages: int, lines: int, *, one_page_object: bool = False) -> bytes:
    """A PDF of ``pages`` pages that all show one content stream of ``lines`` lines of
    text (``one_page_object``: the page tree lists one page object ``pages`` times)."""
    content = (b"BT /F1 12 Tf 72 720 Td 14 TL "
               + b" ".join(b"(line %d of the shared stream) '" % i for i in range(lines))
               + b" ET")
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
    page_ids = [5] * pages if one_page_object else list(range(5, 5 + pages))
    kids = b" ".join(b"%d 0 R" % n for n in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count %d /Kids [%s] >>" % (pages, kids),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        *[page] * len(set(page_ids)),
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


PAGE_CHARS = len("\n".join(f"line {i} of the shared stream" for i in range(3)))
"""The text pypdf extracts from a page of ``make_pdf(..., 3)``."""


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test extracts its PDFs itself (the cache is keyed by content)."""
    monkeypatch.setattr(reading, "_pdf_cache", type(reading._pdf_cache)())


@pytest.fixture
def extractions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every page extraction pypdf is asked for, as it starts (the calls, counted)."""
    calls: list[int] = []
    extract = pypdf.PageObject.extract_text

    def counted(self: Any, *args: Any, **kwargs: Any) -> str:
        calls.append(1)
        text: str = extract(self, *args, **kwargs)
        return text

    monkeypatch.setattr(pypdf.PageObject, "extract_text", counted)
    return calls


def workspace(tmp_path: Path, data: bytes, limits: Limits | None = None,
              kind: str = "memory") -> Workspace:
    if kind == "memory":
        ws = Workspace("memory://pdf", {"global_store": False}, limits=limits)
    else:
        ws = Workspace(str(tmp_path), limits=limits)
    ws.backend.write("doc.pdf", data, Overwrite())
    return ws


def read(ws: Workspace) -> ToolResult:
    return ws.context("a").tools.execute("read", {"file_path": "/doc.pdf"})


def refused(ws: Workspace, data: bytes, sentence: str) -> None:
    """The read is FS_TOO_LARGE with exactly ``sentence``; the file is unchanged and was
    not observed (a write over it is refused as unread)."""
    res = read(ws)
    assert not res.ok and res.error is not None, res.text
    assert res.error.code is ErrorCode.FS_TOO_LARGE
    assert res.text == f"Error [FS_TOO_LARGE]: {sentence}"
    write = ws.context("a").tools.execute(
        "write", {"file_path": "/doc.pdf", "content": "text\n"})
    assert write.error is not None and write.error.code is ErrorCode.FS_NOT_OBSERVED
    assert ws.backend.read("doc.pdf").data == data


NEXT = "nothing was shown. Ask the user for the pages you need as a smaller PDF, or for its text."


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_a_pdf_of_more_pages_than_the_bound_is_refused_before_any_text(
        kind: str, tmp_path: Path, extractions: list[int]) -> None:
    data = make_pdf(6, 3)
    ws = workspace(tmp_path, data, Limits(max_pdf_pages=5), kind)
    refused(ws, data, "/doc.pdf is a PDF of more than 5 pages, the most whose text a read "
                      f"extracts (the workspace's max_pdf_pages limit); {NEXT}")
    assert extractions == []


def test_thousands_of_pages_in_a_small_pdf_are_refused_at_the_default_bound(
        tmp_path: Path, extractions: list[int]) -> None:
    # One page object listed 5,000 times: 30 KB that pypdf would list and extract whole.
    data = make_pdf(5000, 1, one_page_object=True)
    assert len(data) < 40_000
    ws = workspace(tmp_path, data)
    assert Limits().max_pdf_pages == 500
    refused(ws, data, "/doc.pdf is a PDF of more than 500 pages, the most whose text a read "
                      f"extracts (the workspace's max_pdf_pages limit); {NEXT}")
    assert extractions == []


def test_pages_sharing_one_large_stream_are_refused_past_the_text_bound(
        tmp_path: Path, extractions: list[int]) -> None:
    data = make_pdf(60, 3)  # 60 pages, 60 x PAGE_CHARS of text
    cap = 2 * PAGE_CHARS + 10
    ws = workspace(tmp_path, data, Limits(max_pdf_text_chars=cap))
    refused(ws, data, f"/doc.pdf is a PDF with more than {cap} characters of text, the most "
                      f"a read extracts (the workspace's max_pdf_text_chars limit); {NEXT}")
    assert len(extractions) == 3  # stopped inside the third page


def test_a_pdf_slower_than_the_time_bound_is_refused_and_its_extraction_stops(
        tmp_path: Path, extractions: list[int]) -> None:
    data = make_pdf(60, 400)
    ws = workspace(tmp_path, data, Limits(pdf_seconds=1e-6))
    refused(ws, data, "/doc.pdf is a PDF whose text took longer than 1e-06 seconds to "
                      "extract, the most a read may spend on it (the workspace's pdf_seconds "
                      f"limit); {NEXT}")
    # The extraction the read stopped waiting for stops at its next check, within the
    # page it was on: it is not left to work through the other pages.
    for worker in [t for t in threading.enumerate() if t.name == "fsseam-pdf"]:
        worker.join()
    assert len(extractions) <= 1


def test_a_parse_that_never_reaches_a_check_is_answered_at_the_time_bound(
        tmp_path: Path, extractions: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    # pypdf stuck in one long parse (here: opening the file) until the test lets it go,
    # after the read has answered: the answer does not wait for it.
    entered, release = threading.Event(), threading.Event()
    opened = pypdf.PdfReader

    def stuck(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        # Released by the test once the read answered; the timeout only keeps a read that
        # waits for the extraction (no time bound) from hanging the test run.
        release.wait(timeout=30)
        return opened(*args, **kwargs)

    monkeypatch.setattr(pypdf, "PdfReader", stuck)
    data = make_pdf(3, 3)
    ws = workspace(tmp_path, data, Limits(pdf_seconds=0.01))
    refused(ws, data, "/doc.pdf is a PDF whose text took longer than 0.01 seconds to "
                      "extract, the most a read may spend on it (the workspace's pdf_seconds "
                      f"limit); {NEXT}")
    assert entered.is_set()
    release.set()
    for worker in [t for t in threading.enumerate() if t.name == "fsseam-pdf"]:
        worker.join()
    assert extractions == []  # once free, the extraction stopped at its first check


def test_a_pdf_within_every_bound_reads_whole(tmp_path: Path) -> None:
    data = make_pdf(3, 3)
    exact = Limits(max_pdf_pages=3, max_pdf_text_chars=3 * PAGE_CHARS)
    res = read(workspace(tmp_path, data, exact))
    assert res.ok, res.text
    assert isinstance(res.value, PdfOutcome) and res.value.pages == 3
    page = [f"line {i} of the shared stream" for i in range(3)]
    assert res.value.lines == [line for n in (1, 2, 3) for line in (f"--- page {n} ---", *page)]
    assert not res.value.partial
    assert read(workspace(tmp_path, data)).ok  # the defaults
    over = Limits(max_pdf_pages=3, max_pdf_text_chars=3 * PAGE_CHARS - 1)
    assert not read(workspace(tmp_path, data, over)).ok


def test_the_pdf_bounds_are_limits_with_sensible_defaults() -> None:
    limits = Limits()
    assert (limits.max_pdf_pages, limits.max_pdf_text_chars, limits.pdf_seconds) == (
        500, 2_000_000, 20.0)
