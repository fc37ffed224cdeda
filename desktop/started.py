"""When the process started, for the figures of start-up ("window shown 0.8 s after start"):
imported first by :mod:`desktop.app`, read by the self-test (which ``app`` itself runs, so the
self-test must not import ``app`` back)."""

import time

STARTED = time.perf_counter()
