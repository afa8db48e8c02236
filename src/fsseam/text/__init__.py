"""The text rules: what the model sees of a file's bytes, and how edits go back.

The model sees UTF-8 text without the BOM, split on ``\\n``, with the ``\\r`` of each CRLF
removed. Edits are matched on that view and spliced into the *original* text, so every
byte outside the edited region is kept (mixed newlines, tabs, lone ``\\r`` included); the
inserted text takes the file's dominant newline style.

:mod:`~fsseam.text.rules` holds the rules on a whole file, :mod:`~fsseam.text.window` the
same rules on a stream, for a window of lines.
"""

from .rules import BOM as BOM
from .rules import BOM_BYTES as BOM_BYTES
from .rules import SNIFF_BYTES as SNIFF_BYTES
from .rules import TextDoc as TextDoc
from .rules import TextFormat as TextFormat
from .rules import check_sniff as check_sniff
from .rules import check_text as check_text
from .rules import decode as decode
from .rules import dominant_newline as dominant_newline
from .rules import encode_new as encode_new
from .rules import not_text as not_text
from .rules import split_lines as split_lines
from .window import LineWindow as LineWindow
from .window import within as within

__all__ = ["BOM", "LineWindow", "TextDoc", "TextFormat", "decode", "encode_new", "split_lines"]
