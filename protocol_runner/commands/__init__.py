"""One module per ``cardtable`` subcommand; each exposes ``register(subparsers)``."""

from __future__ import annotations

import argparse


def size_argument(text: str) -> tuple[int, int]:
    """``--resize WxH`` (``eval``, ``bench-vision``) as an argparse ``type``: a bad size is a
    usage error that says how to give one. :func:`vision.photo_size.parse_size` is imported
    when an argument is parsed, so registering the commands loads no OpenCV."""
    from vision.photo_size import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
