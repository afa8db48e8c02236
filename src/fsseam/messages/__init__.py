"""The message catalogue: every sentence a model can read, once: errors and outcomes.

Errors are facts (:class:`fsseam.errors.FsError`: a code, the path as the model sees it, a
``reason`` naming the sentence, and ``details`` such as line numbers or sizes). The text is
rendered from those facts here, with a *vocabulary* that names the arguments of the tool
the model called: the seam says "the old text", the ``edit`` tool calls it ``old_string``
and ``str_replace_editor`` calls it ``old_str``. So nothing below the tools layer knows a
tool's argument names, and each sentence exists in exactly one place.

A template is a ``str.format`` string. Its fields come from, in order of precedence, the
error's ``details``, ``path``, and the vocabulary (``{old}``, ``{new}``, ...). A field named
after a *clause* (an entry whose name starts with ``_``) is that clause, rendered with the same
fields: a clause several sentences share is written once too. A detail that is a
:class:`Part` names the clause to put there (``Part("_nul_bytes")``), for a sentence whose
middle depends on the facts.

The sentences live in one module per topic (``files``, ``edits``, ``stores``, ``tools``,
``history``, and ``outcomes`` for what a successful call says); :class:`Reason` names each,
so code that branches on a reason compares typed values.

Adapters and plugins add their own sentences with :func:`add`; a reason, once added, always
names the same sentence.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from . import edits, files, history, outcomes, stores, tools
from .reasons import Clause, Reason

__all__ = [
    "DEFAULT_VOCABULARY",
    "MESSAGES",
    "Clause",
    "Part",
    "Reason",
    "Role",
    "Sentence",
    "Sentences",
    "Vocabulary",
    "add",
    "render",
]

Vocabulary = Mapping[str, str]


class Role(str):
    """A detail that names a tool argument by its role (``Role("new")``): rendered as that
    argument's name in the calling tool's vocabulary (``new_string``, ``new_str``)."""

    __slots__ = ()


class Part(str):
    """A detail that is a clause of the catalogue (``Part("_nul_bytes")``): rendered as that
    clause, with the same fields as the sentence it is part of."""


class Sentence(NamedTuple):
    """A detail that is itself a catalogue sentence (``Sentence("target_gone", {...})``): it is
    rendered with its own details, in the calling tool's vocabulary, where the outer
    template names it. So a message made of several facts keeps each sentence once."""

    reason: str
    details: Mapping[str, Any] = MappingProxyType({})


class Sentences(tuple[Sentence, ...]):
    """A detail made of zero or more sentences: each rendered and followed by a space
    (nothing at all when empty), so a template can put it before the next sentence."""

    __slots__ = ()


DEFAULT_VOCABULARY: Vocabulary = MappingProxyType(
    {
        # The argument that holds the text to find, and its replacement.
        "old": "old_string",
        "new": "new_string",
        # The whole content of a write / create.
        "content": "content",
        # The text of an insert, and the line it goes at.
        "text": "text",
        "line": "insert_line",
        # How to page a read.
        "offset": "offset",
        "limit": "limit",
        # The tail of the "several matches" advice: how to replace them all, if the tool can.
        "all_hint": ", or set replace_all to replace every occurrence",
        # How to change an existing file, for a call that only creates.
        "modify": "edit",
        # How the model reads a file (again, or instead of listing it).
        "reread": "Read",
        # How the model creates a file (the call that never replaces one).
        "add": "create",
        # What a patch is called in line references ("line 4 of the patch").
        "patch": "patch",
        # The [start, end] line range of a view (the editor's; the file tools page with
        # offset/limit).
        "range": "view_range",
    }
)

# Each topic's sentences; an entry added here (outside a topic) is still a catalogue entry.
_MESSAGES: dict[str, str] = {
    **files.SENTENCES,
    **edits.SENTENCES,
    **stores.SENTENCES,
    **tools.SENTENCES,
    **history.SENTENCES,
    **outcomes.SENTENCES,
}

MESSAGES: Mapping[str, str] = MappingProxyType(_MESSAGES)
"""reason -> template. Read-only: a sentence is changed here (or where :func:`add` adds it),
nowhere else."""


def add(entries: Mapping[str, str]) -> None:
    """Add sentences to the catalogue: an adapter's or a plugin's own, under reasons of its
    own (``s3_part_size``). Adding a reason again with the same text does nothing; with
    another text it raises ValueError, so a reason always names one sentence."""
    for reason, template in entries.items():
        list(string.Formatter().parse(template))  # a malformed template fails here, not later
        known = _MESSAGES.get(reason)
        if known is not None and known != template:
            raise ValueError(f"the message catalogue already has a sentence for {reason!r}")
    _MESSAGES.update(entries)


class _Fields(dict[str, Any]):
    """The fields of one rendering: the path and the details; a field named after a clause
    is that clause, and any other the vocabulary's word (looked up only when a template
    names it, so a rendering copies no vocabulary)."""

    def __init__(self, vocabulary: Vocabulary | None) -> None:
        super().__init__()
        self.vocabulary = vocabulary

    def word(self, name: str) -> str | None:
        if self.vocabulary and name in self.vocabulary:
            return self.vocabulary[name]
        return DEFAULT_VOCABULARY.get(name)

    def __missing__(self, name: str) -> str:
        if name.startswith("_") and name in _MESSAGES:
            return _MESSAGES[name].format_map(self)
        word = self.word(name)
        if word is None:
            raise KeyError(name)
        return word


# Details that are not plain values but name other entries or words.
_COMPOSED = (Part, Role, Sentence, Sentences)


def render(
    reason: str,
    path: str | None = None,
    details: Mapping[str, Any] | None = None,
    vocabulary: Vocabulary | None = None,
) -> str:
    """The text of one sentence (an error's or an outcome's), in the words of ``vocabulary``
    (default: the file tools'). Fields come from the details, then the path, then the
    vocabulary."""
    fields = _Fields(vocabulary)
    if path is not None:
        fields["path"] = path
    parts: dict[str, str] = {}
    if details:
        for name, value in details.items():
            if not isinstance(value, _COMPOSED):
                fields[name] = value
            elif isinstance(value, Part):
                parts[name] = value
            elif isinstance(value, Role):
                word = fields[value] if value in fields else fields.word(value)
                fields[name] = value if word is None else word
            elif isinstance(value, Sentence):
                fields[name] = render(value.reason, path, value.details, vocabulary)
            elif isinstance(value, Sentences):
                fields[name] = "".join(
                    render(p.reason, path, p.details, vocabulary) + " " for p in value
                )
    for name, part in parts.items():
        fields[name] = _MESSAGES[part].format_map(fields)
    return _MESSAGES[reason].format_map(fields)
