"""The content index's prefilter never drops a file that matches: for random texts and
random literal and regex patterns (either case), a text the pattern matches always passes
the filter built from its bytes. In process, no store: the filter is a pure function."""

from __future__ import annotations

import regex
from hypothesis import example, given, reject, settings
from hypothesis import strategies as st

from fsseam.errors import FsError
from fsseam.grep import compile_pattern
from fsseam.index.grams import bitmap, grams, holds, needle_grams, normalized, required
from fsseam.index.keeper import describe
from fsseam.index.shards import IndexShard, Kind, decode, encode, prefix_of

from .budget import examples

# Letters with case partners outside ASCII (k, s, i), CR/LF, a BOM, multi-byte letters.
ALPHABET = "abcikKsSxyzIAB_ \n\r\t\u017f\u212a\u0130\u0131\u00e9\u20ac\ufeff"
PIECES = st.text(alphabet="abcikKsSxyzAB_ \u00e9\u20ac", min_size=1, max_size=8)


def _passes(text: str, pattern_source: str, ci: bool) -> None:
    """If ``pattern`` matches ``text`` as grep searches it, the filter keeps the file."""
    data = text.encode("utf-8")
    p = compile_pattern(pattern_source, ci)
    searched = normalized(data).decode("utf-8")
    if p.compiled.search(searched) is None:
        return
    wanted = needle_grams(p)
    kind, bits = describe(data)
    assert kind is Kind.TEXT
    if wanted is not None and bits is not None:
        assert holds(bits, wanted), (text, pattern_source, ci)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(PIECES, min_size=1, max_size=4))
    joins = draw(st.lists(st.sampled_from(["", ".", r"\w+", "[ab]", ".*?", "(?:x|y)", "\\s",
                                           "+", "?", "*", "{2}", "|"]),
                          min_size=len(parts), max_size=len(parts)))
    source = "".join(regex.escape(piece) + join for piece, join in zip(parts, joins, strict=True))
    wrap = draw(st.sampled_from(["{}", "({})", "(?:{})+", "(?i:{})", "{}?", "(?={})"]))
    return wrap.format(source)


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60), PIECES, st.booleans(), st.data())
@example("a\r\nbcd", "a\nbcd", False, None)
@example("x\u017fikk", "SIKK", True, None)
@example("\ufeffabcd", "abcd", False, None)
def test_a_literal_found_passes_the_filter(text: str, piece: str, ci: bool,
                                           data: st.DataObject | None) -> None:
    if data is not None:  # the needle is put inside the text, so matches are common
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + piece + text[at:]
    _passes(text, regex.escape(piece) if data is not None else piece, ci)


@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60), patterns(), st.booleans(), st.data())
def test_a_regex_match_passes_the_filter(text: str, source: str, ci: bool,
                                         data: st.DataObject) -> None:
    try:
        p = compile_pattern(source, ci)
    except FsError:
        reject()  # joins that make no valid pattern ("a??+")
    # Text built from what the pattern needs, so that it often matches.
    pieces = required(p) or []
    at = data.draw(st.integers(0, len(text)))
    text = text[:at] + "".join(pieces) + text[at:]
    _passes(text, source, ci)


def test_only_what_both_regex_modules_read_alike_is_analysed() -> None:
    # ``regex`` reads these otherwise than ``re``: fuzzy matching, POSIX classes.
    for source in ("(?:needle){e<=1}", "[[:alpha:]]needle", "a{e<=2}bcdefg"):
        assert required(compile_pattern(source)) is None, source
    assert required(compile_pattern("foo_bar\\d+baz_quux")) == ["foo_bar", "baz_quux"]
    assert required(compile_pattern("(abcd|efgh)")) == []  # a branch: nothing required
    assert needle_grams(compile_pattern("(abcd|efgh)")) is None  # so no filter: read all
    # Case-insensitive: only letters whose every match is their ASCII pair.
    assert required(compile_pattern("Kelvin_sign", True)) == ["elv", "n_", "gn"]
    assert required(compile_pattern("(?i)HelloWorld")) == ["HelloWorld"]


def test_a_shard_reads_back_as_written_and_refuses_another_prefix() -> None:
    files = {"a.py": ("etag:\"1\"", Kind.TEXT, bitmap(grams(b"hello world"))),
             "b.bin": ("etag:\"2\"", Kind.BINARY, None),
             "sub/c.txt": ("etag:\"3\"", Kind.NOT_UTF8, None)}
    data = encode(IndexShard("src/pkg", files))
    assert decode(data, "src/pkg") == IndexShard("src/pkg", files)
    assert decode(data, "src/other") is None
    assert decode(data[:-3], "src/pkg") is None
    assert decode(b"not a shard", "src/pkg") is None
    assert [prefix_of(k) for k in ("a", "d/a", "d/e/a", "d/e/f/a")] == ["", "d", "d/e", "d/e"]
