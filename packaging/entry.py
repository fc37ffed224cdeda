"""Entry point of the PyInstaller bundle: the same ``custodia`` command as the wheel's script.

A UTF-8 locale is chosen when the environment names none (``env -i``, some desktop launchers),
before Qt reads it; ``--self-test`` checks the bundle (see desktop/selftest.py).
"""

import os
import sys

if not (os.environ.get("LC_ALL") or os.environ.get("LANG")):
    os.environ["LANG"] = "C.UTF-8"
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import multiprocessing

from desktop.cli import main

if __name__ == "__main__":
    # The semantic memory builds its HNSW index in a spawned child process: in the bundle that
    # child is this executable again, and must run the child's work, not the app.
    multiprocessing.freeze_support()
    sys.exit(main())
