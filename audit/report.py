"""`wac report`: the metrics of one or more runs as a printed table, Markdown, JSON and PNG charts.

One run directory: `RUN/report/` (or `--out`) gets report.md, report.json (the metrics of
`metrics.run_metrics`) and three charts: SR per family, SR per category, coverage against success.
Several run directories: a comparison (agent x metric) in `--out`.  Nothing written depends on the
wall clock, so reporting the same run twice gives the same bytes.  Pipeline-check runs (the oracle)
are labelled in every output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from wac.errors import UsageError

from .agreement import compact as compact_agreement
from .agreement import human_agreement, read_labels, write_agreement
from .agreement import render as render_agreement
from .metrics import PIPELINE_LABEL, run_metrics

COMPARISON_FORMAT = "wac.comparison/1"
CHARTS = ("sr_by_family.png", "sr_by_category.png", "coverage_vs_success.png")


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100.0 * x:.1f}%"


def num(x, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _words(key: str) -> str:
    return key.replace("_", " ")


def label(m: dict) -> str:
    r = m["run"]
    text = f"{r['agent']} ({r['paradigm']}{', explorer ' + r['explorer'] if r.get('explorer') else ''})"
    return text + (" [pipeline check]" if r["pipeline_check"] else "")


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _overall(m: dict) -> list[list[str]]:
    s = m["summary"]
    tok = s["tokens"]
    tokens = (
        f"{tok['prompt']} prompt + {tok['completion']} completion ({tok['tasks_reporting']} task(s) reporting)"
        if tok["tasks_reporting"]
        else "not reported"
    )
    return [
        [
            "success rate (SR; judge errors count as failures)",
            f"{pct(s['sr'])} ({s['success']}/{s['judged'] + s['judge_error']})",
        ],
        [
            "precision (matched / flagged bugs)",
            f"{pct(s.get('precision'))} ({s.get('false_positives', 0)} false positive(s) "
            f"of {s.get('bugs_flagged', 0)} flagged)",
        ],
        [
            "SR over all tasks (errors and unjudged as failures)",
            f"{pct(s['sr_all_tasks'])} ({s['success']}/{s['tasks']})",
        ],
        ["geometric coverage (App. E)", f"{pct(s['coverage'])} ({s['covered']}/{s['coverage_known']})"],
        ["exposure (mean fraction of frames covering the target)", num(s["exposure_mean"], 3)],
        ["exposed (evidence kinds met)", pct(s["exposed"])],
        ["exposing view point visited", pct(s["view_point_visited"])],
        [
            "SR on covered / uncovered tasks",
            f"{pct(s['sr_covered'])} ({s['judged_covered']}) / "
            f"{pct(s['sr_uncovered'])} ({s['judged_uncovered']})",
        ],
        ["actions used (mean / median)", f"{num(s['actions_mean'])} / {num(s['actions_median'])}"],
        ["tool calls (mean / median)", f"{num(s['tool_calls_mean'])} / {num(s['tool_calls_median'])}"],
        *(
            [["time per task (mean / median seconds)", f"{num(t)} / {num(s.get('wall_seconds_median'))}"]]
            if (t := s.get("wall_seconds_mean")) is not None
            else []
        ),
        ["tokens", tokens],
        ["episode errors", str(s["episode_error"])],
        ["judge errors (counted as failures)", str(s["judge_error"])],
        ["unjudged / unfinished", f"{s['unjudged']} / {s['missing']}"],
    ]


def _group_rows(groups: dict) -> list[list[str]]:
    return [
        [_words(k), str(g["tasks"]), str(g["judged"]), f"{pct(g['sr'])} ({g['success']})", pct(g["coverage"])]
        for k, g in groups.items()
    ]


def _result(r: dict) -> str:
    if r["status"] == "judged":
        return "success" if r["success"] else "fail"
    if r["status"] == "episode_error":
        return f"episode error ({r['episode_error']})"
    return _words(r["status"])


def render_markdown(m: dict) -> str:
    r, s = m["run"], m["summary"]
    lines = [f"# wac evaluation report: {r['name']}", ""]
    if r["pipeline_check"]:
        lines += [
            f"> **{PIPELINE_LABEL}.** This run uses an agent that replays the self-check plan and "
            f"files the rubric's finding: its numbers check the pipeline end to end.",
            "",
        ]
    opts = ", ".join(f"{k} {v}" for k, v in r["options"].items())
    lines += [
        f"Agent: `{r['agent']}` · paradigm: {r['paradigm']}"
        + (f" · explorer: `{r['explorer']}`" if r.get("explorer") else "")
        + f" · judge: {', '.join(r['judges']) or 'not judged yet'} · tasks: {s['tasks']}",
        "",
    ]
    if opts:
        lines += [f"Options: {opts}", ""]
    lines += ["## Overall", ""]
    lines += _table(["metric", "value"], _overall(m))
    head = ["", "tasks", "judged", "SR (successes)", "coverage"]
    for title, key in (("family", "by_family"), ("category", "by_category"), ("scene type", "by_scene_type")):
        lines += ["", f"## By {title}", ""] + _table([title, *head[1:]], _group_rows(m[key]))
    if m["multi_anomaly"]:
        lines += ["", "## Multi-anomaly tasks (§6.2)", ""]
        lines += _table(
            ["anomalies", "judged runs", "anchor SR", "all-anomaly SR", "target recall"],
            [
                [n, str(g["runs"]), pct(g["anchor_sr"]), pct(g["all_anomaly_sr"]), pct(g["target_recall"])]
                for n, g in m["multi_anomaly"].items()
            ],
        )
    rows = []
    for t in m["tasks"]:
        c = t["coverage"]
        rows.append(
            [
                t["task_id"],
                _words(t["category"]),
                t["scene_type"],
                _result(t),
                "-" if c is None else ("yes" if c["covered"] else "no"),
                "-" if c is None else f"{c['exposure']:.2f}",
                "-" if t["actions_used"] is None else f"{t['actions_used']}/{t['budget']}",
                str(t["bugs"]),
            ]
        )
    lines += ["", "## Tasks", ""]
    lines += _table(
        ["task", "category", "scene type", "result", "covered", "exposure", "actions", "bugs"], rows
    )
    lines += [
        "",
        "## Charts",
        "",
        *[f"![{c[:-4]}]({c})" for c in CHARTS],
        "",
        "Definitions (SR, coverage, exposure, multi-anomaly metrics): docs/evaluation.md.",
        "",
    ]
    return "\n".join(lines)


COMPARE_COLUMNS = (
    ("SR", "sr", pct),
    ("SR all tasks", "sr_all_tasks", pct),
    ("coverage", "coverage", pct),
    ("exposure", "exposure_mean", lambda x: num(x, 3)),
    ("SR covered", "sr_covered", pct),
    ("actions", "actions_mean", num),
    ("tool calls", "tool_calls_mean", num),
    ("episode errors", "episode_error", str),
    ("judge errors", "judge_error", str),
)


def _labels(ms: list[dict]) -> list[str]:
    labels = [label(m) for m in ms]
    return [
        f"{lab} [{m['run']['name']}]" if labels.count(lab) > 1 else lab
        for lab, m in zip(labels, ms, strict=True)
    ]


def render_comparison(ms: list[dict]) -> str:
    labels = _labels(ms)
    lines = ["# wac evaluation: comparison", ""]
    if any(m["run"]["pipeline_check"] for m in ms):
        lines += [f"> Rows marked [pipeline check] are {PIPELINE_LABEL}.", ""]
    rows = []
    for lab, m in zip(labels, ms, strict=True):
        s = m["summary"]
        tok = s["tokens"]
        rows.append(
            [
                lab,
                m["run"]["name"],
                f"{s['judged']}/{s['tasks']}",
                *[f(s[k]) for _, k, f in COMPARE_COLUMNS],
                str(tok["prompt"] + tok["completion"]) if tok["tasks_reporting"] else "-",
            ]
        )
    lines += _table(["agent", "run", "judged", *[c for c, _, _ in COMPARE_COLUMNS], "tokens"], rows)
    timed = [(lab, m["summary"].get("wall_seconds_mean")) for lab, m in zip(labels, ms, strict=True)]
    if any(t is not None for _, t in timed):  # runs that record time on task (human sessions)
        lines += [
            "",
            "Time per task (mean seconds): "
            + ", ".join(f"{lab} {num(t)}" for lab, t in timed if t is not None),
        ]
    for title, key in (("family", "by_family"), ("category", "by_category"), ("scene type", "by_scene_type")):
        keys = list(dict.fromkeys(k for m in ms for k in m[key]))
        lines += ["", f"## SR by {title}", ""]
        lines += _table(
            [title, *labels], [[_words(k), *[pct(m[key].get(k, {}).get("sr")) for m in ms]] for k in keys]
        )
    multi = [(lab, m) for lab, m in zip(labels, ms, strict=True) if m["multi_anomaly"]]
    if multi:
        lines += ["", "## Multi-anomaly tasks (§6.2)", ""]
        lines += _table(
            ["agent", "anomalies", "judged runs", "anchor SR", "all-anomaly SR", "target recall"],
            [
                [
                    lab,
                    n,
                    str(g["runs"]),
                    pct(g["anchor_sr"]),
                    pct(g["all_anomaly_sr"]),
                    pct(g["target_recall"]),
                ]
                for lab, m in multi
                for n, g in m["multi_anomaly"].items()
            ],
        )
    lines += ["", "## Charts", "", *[f"![{c[:-4]}]({c})" for c in CHARTS], ""]
    return "\n".join(lines)


# --- charts ----------------------------------------------------------------------------------------


Series = tuple[str, list[float | None], list[int]]  # name, a rate per key, its denominator per key


def _bars(
    path: Path, title: str, keys: list[str], series: list[Series], horizontal=False, ylabel="%"
) -> None:
    _figure(title, keys, series, horizontal, ylabel).savefig(path, format="png", metadata={"Software": None})


def _figure(title: str, keys: list[str], series: list[Series], horizontal=False, ylabel="%"):
    """Grouped bars (one group per key, one bar per series), rates in [0, 1] drawn as percent, each
    labelled with its value and n (the rate's denominator).  A bar at 0 is still drawn as an outline
    at the axis, and a chart whose bars are all 0 or n/a says so in its middle."""
    from matplotlib.figure import Figure

    n, k = len(series), max(1, len(keys))
    width = 0.8 / max(1, n)
    fig = Figure(
        figsize=(max(7.0, 1.1 * k * max(1, n) + 2), 5.5)
        if not horizontal
        else (10.0, max(3.5, 0.5 * k * n + 2)),
        dpi=100,
    )
    ax = fig.subplots()
    for i, (name, vals, ns) in enumerate(series):
        pos = [j + (i - (n - 1) / 2.0) * width for j in range(len(keys))]
        ys = [100.0 * v if v is not None else 0.0 for v in vals]
        draw = ax.barh if horizontal else ax.bar
        size = {"height": width} if horizontal else {"width": width}
        bars = draw(pos, ys, label=name, edgecolor="0.25", linewidth=0.6, **size)
        texts = [
            ("n/a" if v is None else f"{100.0 * v:.0f}%") + f" (n={c})" for v, c in zip(vals, ns, strict=True)
        ]
        ax.bar_label(bars, texts, fontsize=9, padding=2)
    ticks = list(range(len(keys)))
    names = [_words(x) for x in keys]
    if horizontal:
        ax.set_yticks(ticks, names, fontsize=11)
        ax.invert_yaxis()
        ax.set_xlim(0, 125)
        ax.set_xticks([0, 20, 40, 60, 80, 100])
        ax.set_xlabel(ylabel, fontsize=11)
        ax.axvline(0, color="0.25", linewidth=1.0)
    else:
        ax.set_xticks(ticks, names, rotation=20, ha="right", fontsize=11)
        ax.set_ylim(0, 115)
        ax.set_yticks([0, 20, 40, 60, 80, 100])
        ax.set_ylabel(ylabel, fontsize=11)
        ax.axhline(0, color="0.25", linewidth=1.0)
    ax.tick_params(labelsize=10)
    if not any(v for _, vals, _ in series for v in vals):
        ax.text(
            0.5,
            0.5,
            "every value is 0% or n/a",
            transform=ax.transAxes,
            ha="center",
            fontsize=12,
            color="0.4",
        )
    ax.set_title(title, fontsize=13)
    if n > 1:
        ax.legend(fontsize=10, loc="best")
    fig.tight_layout()
    return fig


def _sr(cells: list[dict]) -> tuple[list[float | None], list[int]]:
    """SRs and their denominators: judged tasks and judge failures (a group's `judged` counts both,
    the run summary's `judged` only the first)."""
    return [c.get("sr") for c in cells], [c.get("judged", 0) + c.get("judge_error", 0) for c in cells]


def write_charts(ms: list[dict], out: Path) -> list[Path]:
    labels = _labels(ms)
    tag = " [pipeline check]" if len(ms) == 1 and ms[0]["run"]["pipeline_check"] else ""
    paths = [out / c for c in CHARTS]
    fams = list(dict.fromkeys(k for m in ms for k in m["by_family"]))
    cats = list(dict.fromkeys(k for m in ms for k in m["by_category"]))
    _bars(
        paths[0],
        f"Success rate per family{tag}",
        fams,
        [(lab, *_sr([m["by_family"].get(f, {}) for f in fams])) for lab, m in zip(labels, ms, strict=True)],
        ylabel="SR (%)",
    )
    _bars(
        paths[1],
        f"Success rate per category{tag}",
        cats,
        [(lab, *_sr([m["by_category"].get(c, {}) for c in cats])) for lab, m in zip(labels, ms, strict=True)],
        horizontal=True,
        ylabel="SR (%)",
    )
    if len(ms) == 1:
        m = ms[0]
        keys = [*fams, "overall"]
        cells = [*[m["by_family"][f] for f in fams], m["summary"]]
        title = f"Geometric coverage and success{tag}"
    else:
        keys, cells = labels, [m["summary"] for m in ms]
        title = "Geometric coverage and success per run"
    _bars(
        paths[2],
        title,
        keys,
        [
            ("coverage", [c["coverage"] for c in cells], [c.get("coverage_known", 0) for c in cells]),
            ("SR", *_sr(cells)),
            (
                "SR on covered tasks",
                [c["sr_covered"] for c in cells],
                [c.get("judged_covered", 0) for c in cells],
            ),
        ],
        ylabel="%",
    )
    return paths


# --- writing and printing ----------------------------------------------------------------------------


def _dump(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_report(
    runs: list[str | Path], out: str | Path | None = None, labels: str | Path | None = None
) -> tuple[Path, list[dict]]:
    """Write report.md, report.json and the charts (with `labels`, a labels file: agreement.json and
    a "Human labels" section, audit/agreement.py); returns the output directory and the metrics."""
    if not runs:
        raise UsageError("give at least one run directory")
    human = read_labels(labels) if labels is not None else None  # a bad file fails before any work
    ms = [run_metrics(r) for r in runs]
    if out is None:
        if len(runs) > 1:
            raise UsageError("several run directories make a comparison: say where it goes with --out DIR")
        out = Path(runs[0]) / "report"
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if len(ms) == 1:
        (out / "report.md").write_text(render_markdown(ms[0]), encoding="utf-8")
        (out / "report.json").write_text(_dump(ms[0]), encoding="utf-8")
    else:
        (out / "report.md").write_text(render_comparison(ms), encoding="utf-8")
        (out / "report.json").write_text(
            _dump({"format": COMPARISON_FORMAT, "labels": _labels(ms), "runs": ms}), encoding="utf-8"
        )
    write_charts(ms, out)
    if human is not None:
        a = human_agreement(ms, human)
        write_agreement(out, a)
        with open(out / "report.md", "a", encoding="utf-8") as f:
            f.write("\n" + "\n".join(render_agreement(a)))
    return out, ms


def compact(ms: list[dict]) -> str:
    """The printed table: one line per run, then SR per family for each run."""
    labels = _labels(ms)
    head = ["agent", "tasks", "judged", "SR", "coverage", "exposure", "actions", "ep.err", "judge err"]
    rows = []
    for lab, m in zip(labels, ms, strict=True):
        s = m["summary"]
        rows.append(
            [
                lab,
                str(s["tasks"]),
                str(s["judged"]),
                f"{pct(s['sr'])} ({s['success']})",
                pct(s["coverage"]),
                num(s["exposure_mean"], 3),
                num(s["actions_mean"]),
                str(s["episode_error"]),
                str(s["judge_error"]),
            ]
        )
    fams = list(dict.fromkeys(k for m in ms for k in m["by_family"]))
    rows2 = [
        [
            _words(f),
            *[
                f"{pct(m['by_family'][f]['sr'])} of {m['by_family'][f]['judged']}"
                if f in m["by_family"]
                else "-"
                for m in ms
            ],
        ]
        for f in fams
    ]

    def fmt(h, rs):
        w = [max(len(x[i]) for x in [h, *rs]) for i in range(len(h))]
        return [("  ".join(x[i].ljust(w[i]) for i in range(len(h)))).rstrip() for x in [h, *rs]]

    lines = fmt(head, rows) + [""] + fmt(["family", *(labels if len(ms) > 1 else ["SR"])], rows2)
    timed = [(lab, m["summary"].get("wall_seconds_mean")) for lab, m in zip(labels, ms, strict=True)]
    if any(t is not None for _, t in timed):  # runs that record time on task (human sessions)
        shown = ", ".join(f"{lab} {num(t)} s" for lab, t in timed if t is not None)
        lines += ["", f"time per task (mean): {shown}"]
    if any(m["run"]["pipeline_check"] for m in ms):
        lines.append(f"[pipeline check] = {PIPELINE_LABEL}")
    return "\n".join(lines)


def print_summary(run: str | Path) -> None:
    print(compact([run_metrics(run)]))


def cmd_report(args) -> int:
    out, ms = write_report(args.runs, args.out, args.labels)
    if args.json:  # the same document as report.json, on stdout (like the other commands' --json)
        print((out / "report.json").read_text(encoding="utf-8"), end="")
    else:
        print(compact(ms))
        if args.labels is not None:
            a = json.loads((out / "agreement.json").read_text(encoding="utf-8"))
            print("\n".join(["", *compact_agreement(a)]))
    print(f"wac: report written to {out}", file=sys.stderr)
    return 0


def register(subparsers) -> None:
    r = subparsers.add_parser("report", help="metrics, tables and charts of judged runs")
    r.add_argument("runs", nargs="+", metavar="RUN_DIR", help="one run, or several to compare")
    r.add_argument("--out", help="output directory (default RUN_DIR/report; required for a comparison)")
    r.add_argument("--json", action="store_true", help="print report.json on stdout instead of the table")
    r.add_argument(
        "--labels", help="raters' labels (wac review labels): human-rated exposure and judge-human agreement"
    )
    r.set_defaults(func=cmd_report)
