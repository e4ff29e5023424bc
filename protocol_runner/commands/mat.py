"""``cardtable mat``: print the table mat (ArUco corner markers, scale bar, zones) as PNG or PDF."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mat",
        help="write the printable table mat (PNG to stdout, or -o mat.png / mat.pdf)",
        description="Write the table mat: four ArUco markers (DICT_4X4_50, ids 0-3 clockwise "
        "from top-left), a 100 mm scale bar and the zones work / discard / side. Print at 100%%.",
    )
    p.add_argument("-o", "--output", help="file to write (.png or .pdf); default: PNG to stdout")
    p.add_argument("--dpi", type=float, default=100.0, help="resolution (default 100)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from vision.geometry import DEFAULT_MAT
    from vision.mat import encode_pdf, encode_png, render_mat

    if args.dpi < 10 or args.dpi > 600:
        raise ValueError(f"--dpi {args.dpi:g} is out of range; use 10 to 600")
    image = render_mat(DEFAULT_MAT, args.dpi / 25.4)
    if args.output is None:
        if sys.stdout.isatty():
            raise ValueError("refusing to write a PNG to the terminal; redirect (> mat.png) or -o")
        sys.stdout.buffer.write(encode_png(image))
        sys.stdout.buffer.flush()
        return 0
    out = Path(args.output)
    suffix = out.suffix.lower()
    if suffix == ".pdf":
        data = encode_pdf(image, DEFAULT_MAT.width, DEFAULT_MAT.height)
    elif suffix == ".png":
        data = encode_png(image)
    else:
        raise ValueError(f"{out}: unknown format {suffix or '(none)'}; use .png or .pdf")
    out.write_bytes(data)
    print(f"wrote {out} ({DEFAULT_MAT.width:.0f} x {DEFAULT_MAT.height:.0f} mm)", file=sys.stderr)
    return 0
