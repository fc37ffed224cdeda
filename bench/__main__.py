"""Run every benchmark module (``bench/bench_*.py``), or those named on the command line."""

from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path

from bench.common import RESULTS, machine


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    results = {}
    failed = []
    for name in names:
        qualified = f"bench.{name if name.startswith('bench_') else 'bench_' + name}"
        print(f"\n=== {qualified}", flush=True)
        started = time.perf_counter()
        try:  # one broken benchmark (even one that fails to import) must not hide the others
            results[qualified] = importlib.import_module(qualified).main()
        except Exception as err:
            print(f"{qualified} failed: {type(err).__name__}: {err}", flush=True)
            failed.append(qualified)
        print(f"({time.perf_counter() - started:.1f} s)", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    payload = {"machine": machine(), "results": results, "failed": failed}
    (RESULTS / "latest.json").write_text(
        json.dumps(payload, indent=2, default=str), encoding="utf-8"
    )
    from bench.report import write_report  # docs/BENCHMARKS.md table + docs/img plots

    write_report(json.loads(json.dumps(payload, default=str)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
