"""The ``custodia`` entry point: a headless command, or the window when none is given."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and not args[0].startswith("-platform") and args[0] not in ("--self-test",):
        from backends.cli import main as headless  # noqa: PLC0415 — lazy: a command never imports Qt

        return headless(args)
    from desktop.app import run  # noqa: PLC0415 — lazy: the window never imports the commands

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
