"""Digests of network weight files: what a deck profile records of the networks it was
enrolled with (:mod:`vision.enrol`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=8)
def _file_digest(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def weights_digest(paths: Sequence[Path | None]) -> str:
    """A short digest of the weight files at ``paths``, in order (a network not loaded from a
    file counts as one unknown file).

    WHY: a deck profile's prototypes are readings of one set of networks (the whole-card
    classifier's features, the corner networks' probabilities); read by retrained ones (a new
    input size, other renders, the same classes) the same deck reads otherwise, and the
    prototypes adapt it wrongly without any sign. The profile records these digests and is
    refused by other networks (:meth:`vision.enrol.DeckProfile.check_model`,
    :meth:`vision.enrol.DeckProfile.check_strip`)."""
    h = hashlib.sha1()
    for p in paths:
        h.update(b"-" if p is None else _file_digest(Path(p).resolve()).encode())
    return h.hexdigest()[:16]
