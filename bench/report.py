"""The report at the end of ``make bench``: one Markdown table and three plots.

:func:`write_report` gathers every benchmark's result (this run's, else the newest JSON each
left in ``bench/results/``), turns them into rows *measure · ours · baseline · ratio ·
baseline is*, writes them with the machine details into docs/BENCHMARKS.md between the markers
``<!-- bench:begin -->`` / ``<!-- bench:end -->`` (a section "Latest `make bench` run" is added
at the end of the file the first time; nothing else in the file is touched), and draws PNG
plots (matplotlib, Agg) of latency against data size into docs/img/: memory search, audit
verification, start-up reconciliation.

Run alone (``python -m bench.report``) to rebuild the section from the stored JSON.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bench.common import RESULTS, machine

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "BENCHMARKS.md"
IMAGES = ROOT / "docs" / "img"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
SECTION = "## Latest `make bench` run"
PLOTS = {
    "memory_search": "bench_memory_search.png",
    "audit_verification": "bench_audit_verification.png",
    "reconciliation": "bench_reconciliation.png",
}

Row = dict[str, Any]


# -- gathering ---------------------------------------------------------------------------------
def gather(results: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """``{topic: payload}``: this run's results first, else each topic's stored JSON."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(RESULTS.glob("*.json")):
        if path.stem == "latest":
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            data.setdefault(
                "_written", time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
            )
            out[path.stem] = data
    for module, payload in (results or {}).items():
        if isinstance(payload, dict):
            topic = module.rsplit(".", 1)[-1].removeprefix("bench_")
            out[topic] = {**out.get(topic, {}), **payload}
    return out


# -- rows per benchmark ------------------------------------------------------------------------
def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _row(measure: str, ours: Any, baseline: Any = None, what: str = "", ratio: Any = None) -> Row:
    o, b = _num(ours), _num(baseline)
    if ratio is None and o is not None and b:
        ratio = o / b
    return {"measure": measure, "ours": ours, "baseline": baseline, "ratio": ratio, "is": what}


def _rows_measure_value(data: dict[str, Any]) -> list[Row]:
    """Rows shaped ``measure, value, baseline, ratio, baseline is`` (foundation, app)."""
    return [
        _row(
            r["measure"],
            r.get("value"),
            r.get("baseline") or None,
            r.get("baseline is", ""),
            r.get("ratio") if r.get("ratio") != "" else None,
        )
        for r in data.get("rows", [])
    ]


def _rows_app(data: dict[str, Any]) -> list[Row]:
    rows = _rows_measure_value(data)
    bundle = data.get("bundle") or {}
    if bundle.get("built"):
        mb = 1024 * 1024
        models = bundle.get("models_bytes")
        rows.append(
            _row(
                "bundle size, `du` (MiB)",
                bundle["bytes"] / mb,
                models / mb if models else None,
                "of which the model files",
            )
        )
        if bundle.get("tar_zst_bytes"):
            rows.append(
                _row(
                    "bundle as tar.zst (MiB)",
                    bundle["tar_zst_bytes"] / mb,
                    bundle["bytes"] / mb,
                    "the unpacked bundle",
                )
            )
        test = bundle.get("self_test") or {}
        if test:
            rows.append(
                _row(
                    f"bundle `--self-test`, env -i (s; exit {test.get('exit')})",
                    test.get("seconds"),
                )
            )
    else:
        rows.append(_row("bundle", "not built: run `make package` before `make bench`"))
    return rows


def _rows_multiagent(data: dict[str, Any]) -> list[Row]:
    rows = [
        _row(f"{r['measure']} (ms)", r.get("ms"), r.get("baseline ms"), r.get("baseline", ""))
        for r in data.get("rows", [])
    ]
    if "upsert_points_per_second" in data:
        rows.append(_row("Qdrant local upsert (points/s)", data["upsert_points_per_second"]))
    return rows


def _rows_memories(data: dict[str, Any]) -> list[Row]:
    rows = []
    for case in data.get("cases", []):
        label = f"search top-{data.get('k', 10)}, {case['n']:,} × {case['dimension']}-d (ms)"
        rows.append(
            _row(
                label,
                case.get("ours_ms"),
                case.get("original_ms"),
                "the original's read-all-rows search",
            )
        )
        rows.append(
            _row(label, case.get("ours_ms"), case.get("bare_ms"), "bare numpy GEMV + argpartition")
        )
    return rows


def _rows_conversations(data: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    pending: Row | None = None
    for r in data.get("rows", []):
        measure = str(r.get("measure", ""))
        if measure.strip().startswith("baseline:"):
            if pending is not None:
                pending["baseline"] = r.get("ms")
                pending["is"] = measure.split(":", 1)[1].strip()
                if _num(pending["ours"]) is not None and _num(r.get("ms")):
                    pending["ratio"] = pending["ours"] / r["ms"]
                pending = None
            continue
        row = _row(f"{measure} (ms)", r.get("ms"))
        rows.append(row)
        if r.get("vs baseline"):
            pending = row
    return rows


def _rows_audit(data: dict[str, Any]) -> list[Row]:
    rows = [
        _row(
            f"appends/s, {t['backend']}, {t['writers']} writer(s)",
            t.get("ours_per_s"),
            t.get("plain_per_s"),
            "plain hash chain, one transaction per append",
        )
        for t in data.get("throughput", [])
    ]
    anatomy = data.get("single_writer_anatomy") or {}
    for sync in ("full", "off"):
        figures = anatomy.get(sync) or {}
        if figures:
            rows.append(
                _row(
                    f"µs per append, sqlite, 1 writer, interleaved, synchronous={sync.upper()}",
                    figures.get("service"),
                    figures.get("plain"),
                    "plain hash chain" + (" (CPU only)" if sync == "off" else ""),
                )
            )
    v = data.get("verification") or {}
    if v:
        rows.append(
            _row(
                f"verify {v['records']:,} records, full (s)",
                v.get("full_s"),
                v.get("plain_walk_s"),
                "plain Python walk",
            )
        )
        for inc in v.get("incremental", []):
            rows.append(
                _row(
                    f"verify from a checkpoint, {inc['new_records']:,} new (s)",
                    inc.get("seconds"),
                    v.get("full_s"),
                    "full verification",
                )
            )
    return rows


def _rows_scaling(data: dict[str, Any]) -> list[Row]:
    rows = [
        _row(
            f"audit verify, {r['records']:,} records (ms)",
            r["ours_ms"],
            r["baseline_ms"],
            "plain Python walk",
        )
        for r in data.get("audit_verification", [])
    ]
    rows += [
        _row(
            f"start-up reconcile, {r['conversations']:,} conversations (ms)",
            r["ours_ms"],
            r["baseline_ms"],
            "read + decrypt every file",
        )
        for r in data.get("reconciliation", [])
    ]
    return rows


def _rows_generic(data: dict[str, Any]) -> list[Row]:
    """Any other benchmark: ``rows`` of ``measure, value[, baseline, baseline is]``; else
    each row's first number; else the top-level numbers."""
    listed = data.get("rows", [])
    if listed and all(isinstance(r, dict) and "measure" in r and "value" in r for r in listed):
        return _rows_measure_value(data)
    rows = []
    for r in data.get("rows", []):
        if isinstance(r, dict):
            measure = str(r.get("measure") or next(iter(r.values()), ""))
            numbers = [v for k, v in r.items() if k != "measure" and _num(v) is not None]
            rows.append(_row(measure, numbers[0] if numbers else ""))
    if not rows:
        for key, value in data.items():
            if _num(value) is not None:
                rows.append(_row(key, value))
    return rows


EXTRACTORS: dict[str, Callable[[dict[str, Any]], list[Row]]] = {
    "foundation": _rows_measure_value,
    "app": _rows_app,
    "multiagent": _rows_multiagent,
    "memories": _rows_memories,
    "conversations": _rows_conversations,
    "audit": _rows_audit,
    "scaling": _rows_scaling,
}
ORDER = [
    "foundation",
    "app",
    "multiagent",
    "memories",
    "conversations",
    "audit",
    "tutor",
    "scaling",
]


def rows_for(topic: str, data: dict[str, Any]) -> list[Row]:
    try:
        return EXTRACTORS.get(topic, _rows_generic)(data)
    except Exception as err:  # a changed JSON shape must not lose the rest of the report
        return [_row(f"(could not read {topic}.json: {type(err).__name__}: {err})", "")]


# -- Markdown ----------------------------------------------------------------------------------
def _fmt(value: Any) -> str:
    number = _num(value)
    if number is None:
        return "" if value is None else str(value).replace("|", "\\|")
    if number == 0:
        return "0"
    if abs(number) >= 1000:
        return f"{number:,.0f}"
    if abs(number) >= 10:
        return f"{number:.1f}"
    return f"{number:.3g}"


def _ratio(value: Any) -> str:
    number = _num(value)
    if number is None:
        return _fmt(value)
    return f"{number:,.0f}×" if number >= 1000 else f"{number:.3g}×"


def machine_line(details: dict[str, Any]) -> str:
    cpu = _cpu_model()
    memory = _memory_gib()
    load = details.get("load_average") or _load()
    parts = [
        f"{details.get('date', '?')}",
        f"{cpu or details.get('processor', '?')}, {details.get('cpus', '?')} CPUs",
        f"{memory:.0f} GiB RAM" if memory else "",
        details.get("platform", platform.platform()),
        f"Python {details.get('python', platform.python_version())}",
        f"load average {load}" if load else "",
    ]
    return "; ".join(p for p in parts if p)


def markdown(
    topics: dict[str, dict[str, Any]], details: dict[str, Any], failed: Iterable[str] = ()
) -> str:
    lines = [
        f"Machine: {machine_line(details)}.",
        "",
        "Every figure is a median over repeated runs; **ratio = ours ÷ baseline**, both "
        "measured in the same run (for times below 1 is faster than the baseline, for rates "
        "such as appends/s above 1 is faster). Other sessions may share these 2 cores while "
        "a benchmark runs: compare ratios, not absolute times, between runs.",
        "",
    ]
    failed = list(failed)
    if failed:
        lines += [f"**Failed in this run:** {', '.join(failed)} (figures below are older).", ""]
    lines += [
        "| benchmark | measure | ours | baseline | ratio | baseline is | run |",
        "|---|---|---|---|---|---|---|",
    ]
    order = [t for t in ORDER if t in topics] + sorted(t for t in topics if t not in ORDER)
    for topic in order:
        data = topics[topic]
        when = (data.get("machine") or {}).get("date") or data.get("_written", "")
        for row in rows_for(topic, data):
            lines.append(
                f"| {topic} | {row['measure']} | {_fmt(row['ours'])} | {_fmt(row['baseline'])} "
                f"| {_ratio(row['ratio'])} | {row['is']} | {when} |"
            )
    plots = [(key, name) for key, name in PLOTS.items() if (IMAGES / name).is_file()]
    if plots:
        lines += ["", "Latency against data size (log–log; data: `bench/results/*.json`):", ""]
        lines += [f"![{key.replace('_', ' ')}](img/{name})" for key, name in plots]
    return "\n".join(lines)


def update_doc(body: str, doc: Path = DOC) -> None:
    """Put ``body`` between the markers, adding the section at the end the first time."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    block = f"{BEGIN}\n{body}\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\n{block}\n"
    doc.write_text(text, encoding="utf-8")


# -- plots -------------------------------------------------------------------------------------
def _axes(title: str, xlabel: str) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("latency (ms, median)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    return fig, ax


def _save(fig: Any, ax: Any, name: str) -> Path:
    import matplotlib.pyplot as plt

    ax.legend(fontsize=8)
    fig.tight_layout()
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / name
    fig.savefig(path)
    plt.close(fig)
    return path


def plots(topics: dict[str, dict[str, Any]]) -> list[Path]:
    out = []
    cases = (topics.get("memories") or {}).get("cases") or []
    if cases:
        fig, ax = _axes("Memory search, top-10", "memories stored")
        styles = {384: "-", 768: "--"}
        for dim in sorted({c["dimension"] for c in cases}):
            sub = sorted((c for c in cases if c["dimension"] == dim), key=lambda c: c["n"])
            n = [c["n"] for c in sub]
            style = styles.get(dim, "-.")
            for key, label, colour, marker in (
                ("ours_ms", "ours", "C0", "o"),
                ("original_ms", "original (read all rows)", "C1", "s"),
                ("bare_ms", "bare numpy", "C2", "."),
            ):
                ax.plot(
                    n,
                    [c[key] for c in sub],
                    style,
                    color=colour,
                    marker=marker,
                    label=f"{label}, {dim}-d",
                )
        out.append(_save(fig, ax, PLOTS["memory_search"]))
    scaling = topics.get("scaling") or {}
    audit = scaling.get("audit_verification") or []
    if audit:
        fig, ax = _axes("Audit chain verification (SQLite)", "records in the log")
        x = [r["records"] for r in audit]
        ax.plot(x, [r["ours_ms"] for r in audit], "o-", label="verify_chain (full)")
        ax.plot(x, [r["baseline_ms"] for r in audit], "s--", label="plain Python walk")
        out.append(_save(fig, ax, PLOTS["audit_verification"]))
    reconcile = scaling.get("reconciliation") or []
    if reconcile:
        fig, ax = _axes(
            "Conversations: start-up reconciliation, nothing changed",
            "conversations (20 messages each)",
        )
        x = [r["conversations"] for r in reconcile]
        ax.plot(x, [r["ours_ms"] for r in reconcile], "o-", label="SQLite index + stat check")
        ax.plot(x, [r["baseline_ms"] for r in reconcile], "s--", label="read + decrypt every file")
        out.append(_save(fig, ax, PLOTS["reconciliation"]))
    return out


# -- entry points ------------------------------------------------------------------------------
def write_report(payload: dict[str, Any] | None = None, doc: Path = DOC) -> str:
    """Plots + the Markdown section from ``payload`` (what ``python -m bench`` wrote to
    ``latest.json``: ``machine``, ``results``, ``failed``) and the stored per-topic JSON."""
    payload = payload or {}
    topics = gather(payload.get("results"))
    details = {**machine(), **(payload.get("machine") or {})}
    plots(topics)
    body = markdown(topics, details, payload.get("failed", ()))
    update_doc(body, doc)
    print(
        f"report: {doc.relative_to(ROOT) if doc.is_relative_to(ROOT) else doc}, "
        f"plots in {IMAGES.relative_to(ROOT)}",
        flush=True,
    )
    return body


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _memory_gib() -> float:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return 0.0


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return ""


if __name__ == "__main__":
    latest = RESULTS / "latest.json"
    stored = json.loads(latest.read_text(encoding="utf-8")) if latest.exists() else {}
    write_report({"machine": stored.get("machine"), "failed": stored.get("failed", [])})
