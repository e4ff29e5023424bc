"""How the ``python -m vision.X`` evaluation and fitting commands run their ``main``.

WHY one place: each such module must run the *imported* module's ``main``, not the copy that
``python -m`` executes as ``__main__`` (two copies of a module hold two copies of every class,
``Jitter`` and ``SingleCardError`` among them, so ``isinstance`` and equality fail between them,
and worker processes pickle functions by the imported name), and each reports a bad argument or
file in one line with exit status 2 instead of a traceback.
"""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn


def run_module(name: str) -> NoReturn:
    """Run module ``name``'s ``main()`` and exit with its status; a ValueError or OSError is
    printed as ``python -m NAME: error: ...`` and exits 2."""
    main = importlib.import_module(name).main
    try:
        raise SystemExit(main())
    except (ValueError, OSError) as exc:
        print(f"python -m {name}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
