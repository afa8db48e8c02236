"""Local disk: content-digest versions, and a compare-and-swap that survives crashes.

One job per module:

- ``backend``: :class:`LocalBackend`, the contract answered for one root;
- ``tree``: the descriptor walks from the root that never follow a link, opens, listings,
  and the kinds of entry refused;
- ``search``: the reads of a search, without versions (one pass over the tree);
- ``writes``: write, delete and copy, the compare-and-swap and its crash safety, with the
  temp files a write prepares and the sweep of those left by the dead;
- ``parts``: a tree cut into parts that several processes can search.

Versions (the stat cache, digests of open files, the chunked read) are
:mod:`fsseam.backends.digests`, with the digest code every backend shares.
"""

from .backend import LocalBackend
from .writes import TEMP_MARK, is_temp_name

__all__ = ["TEMP_MARK", "LocalBackend", "is_temp_name"]
