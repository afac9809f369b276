"""Human labels beside the machine's numbers (paper §6.3, Figure 6 and Table 7).

Raters watch episode videos and read reports in the review app (`wac review BUILD --run RUN`) and
answer two questions per episode: was the anomaly **exposed** (shown to the auditor) in the video,
and does the **report** identify the target (correct / incorrect against the rubric).  `wac review
labels` writes the answers as a labels file, `wac.labels/1`; `wac report RUN... --labels FILE`
reads it and adds:

* **human-rated exposure** beside App. E's geometric coverage, over the same rated episodes, per
  run and per paradigm (the paper: 68.1% rated against 91.1% geometric);
* **judge–human agreement**: for each judge (backend and model) the accuracy and Cohen's kappa of
  its verdicts (the anchor entry's score) against the raters' report labels, overall, per
  environment and per family (the paper's Table 7);
* **rater agreement**: kappa between the first two raters of each doubly rated episode.

Several raters of one episode are combined by majority; a tie is left out of the agreement (and
counted) and counts 0.5 in the exposure rate.  Kappa comes from scikit-learn.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from wac.errors import CorruptFile, UsageError

LABELS_FORMAT = "wac.labels/1"
KINDS = ("exposure", "report")


class Label(BaseModel):
    """One rater's answer about one episode."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    run: str  # the run directory's name
    task_id: str
    rater: str
    kind: Literal["exposure", "report"]
    value: bool  # exposure: the anomaly was exposed; report: the report identifies the target


class Labels(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    format: Literal["wac.labels/1"] = LABELS_FORMAT
    labels: tuple[Label, ...] = ()


def read_labels(path: str | Path) -> Labels:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no labels file {p} (write one with `wac review labels --db FILE -o {p.name}`)")
    try:
        return Labels.model_validate_json(p.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        where = ".".join(str(x) for x in first["loc"]) if first else ""
        why = first["msg"] if first else str(exc)
        raise CorruptFile(f"{p} is not a wac labels file ({LABELS_FORMAT}): {where} {why}".strip()) from None


def _votes(labels: Labels, kind: str) -> dict[tuple[str, str], list[bool]]:
    """Per (run, task) the raters' answers, one per rater (a rater's last answer counts)."""
    by: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    for lab in labels.labels:
        if lab.kind == kind:
            by[(lab.run, lab.task_id)][lab.rater] = lab.value
    return {k: [v[r] for r in sorted(v)] for k, v in by.items()}


def _majority(votes: list[bool]) -> bool | None:
    yes = sum(votes)
    return None if yes * 2 == len(votes) else yes * 2 > len(votes)


def kappa(a: list[bool], b: list[bool]) -> float | None:
    """Cohen's kappa of two label lists; None when it is undefined (fewer than 2 items, or both
    raters gave one same answer throughout)."""
    if len(a) < 2:
        return None
    if len(set(a) | set(b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    k = float(cohen_kappa_score(a, b))
    return None if k != k else round(k, 4)  # NaN: undefined


def _agreement(pairs: list[tuple[bool, bool]]) -> dict:
    judge, human = [p[0] for p in pairs], [p[1] for p in pairs]
    n = len(pairs)
    return {
        "n": n,
        "accuracy": round(sum(a == b for a, b in pairs) / n, 4) if n else None,
        "kappa": kappa(judge, human),
        "judge_success": sum(judge),
        "human_correct": sum(human),
    }


def _grouped(items: list[tuple[dict, bool, bool]], key: str) -> dict:
    groups: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for row, j, h in items:
        groups[str(row.get(key))].append((j, h))
    return {g: _agreement(p) for g, p in sorted(groups.items())}


def human_agreement(ms: list[dict], labels: Labels) -> dict:
    """The labels' figures for the runs' metrics (`run_metrics` documents), as one JSON-ready dict."""
    runs = {m["run"]["name"]: m for m in ms}
    unknown = sorted({lab.run for lab in labels.labels} - set(runs))
    exposure_votes, report_votes = _votes(labels, "exposure"), _votes(labels, "report")
    rows = {(name, t["task_id"]): t for name, m in runs.items() for t in m["tasks"]}

    exposure: dict[str, dict] = {}
    by_paradigm: dict[str, list[tuple[float, bool | None]]] = defaultdict(list)
    for name, m in runs.items():
        rated = []
        for t in m["tasks"]:
            votes = exposure_votes.get((name, t["task_id"]))
            if votes:
                covered = t["coverage"]["covered"] if t.get("coverage") else None
                rated.append((sum(votes) / len(votes), covered))
        by_paradigm[m["run"]["paradigm"] or "interactive"] += rated
        exposure[name] = _exposure(rated)

    judged: dict[str, list[tuple[dict, bool, bool]]] = defaultdict(list)
    ties = 0
    for key, votes in report_votes.items():
        row = rows.get(key)
        if row is None or row["status"] != "judged" or row["success"] is None:
            continue
        human = _majority(votes)
        if human is None:
            ties += 1
            continue
        judged[row["judge"] or "unknown"].append((row, bool(row["success"]), human))

    judges = {
        j: {
            **_agreement([(a, b) for _, a, b in items]),
            "by_environment": _grouped(items, "environment"),
            "by_family": _grouped(items, "family"),
        }
        for j, items in sorted(judged.items())
    }
    raters = {}
    for kind, votes in (("exposure", exposure_votes), ("report", report_votes)):
        doubly = [v for v in votes.values() if len(v) >= 2]
        raters[kind] = {
            "episodes": len(doubly),
            "kappa": kappa([v[0] for v in doubly], [v[1] for v in doubly]),
        }
    return {
        "format": "wac.agreement/1",
        "labels": len(labels.labels),
        "unknown_runs": unknown,
        "exposure": exposure,
        "exposure_by_paradigm": {p: _exposure(r) for p, r in sorted(by_paradigm.items())},
        "judges": judges,
        "report_ties": ties,
        "raters": raters,
    }


def _exposure(rated: list[tuple[float, bool | None]]) -> dict:
    n = len(rated)
    cov = [c for _, c in rated if c is not None]
    return {
        "rated": n,
        "human_exposed": round(sum(v for v, _ in rated) / n, 4) if n else None,
        "geometric_coverage": round(sum(cov) / len(cov), 4) if cov else None,
    }


def render(a: dict) -> list[str]:
    """The markdown section of report.md."""

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    def k(x):
        return "-" if x is None else f"{x:.3f}"

    lines = ["## Human labels", "", f"{a['labels']} labels (docs/human.md, docs/evaluation.md).", ""]
    lines += ["| run | rated episodes | human-rated exposure | geometric coverage |", "|---|---|---|---|"]
    for name, e in a["exposure"].items():
        lines.append(
            f"| {name} | {e['rated']} | {pct(e['human_exposed'])} | {pct(e['geometric_coverage'])} |"
        )
    for p, e in a["exposure_by_paradigm"].items():
        lines.append(f"| *{p}* | {e['rated']} | {pct(e['human_exposed'])} | {pct(e['geometric_coverage'])} |")
    lines += ["", "| judge | rated reports | accuracy | Cohen's κ |", "|---|---|---|---|"]
    for j, g in a["judges"].items():
        lines.append(f"| {j} | {g['n']} | {pct(g['accuracy'])} | {k(g['kappa'])} |")
        for scope in ("by_family", "by_environment"):
            for name, s in g[scope].items():
                lines.append(f"| {j} · {name} | {s['n']} | {pct(s['accuracy'])} | {k(s['kappa'])} |")
    r = a["raters"]
    lines += [
        "",
        f"Rater agreement (κ, first two raters): exposure {k(r['exposure']['kappa'])} over "
        f"{r['exposure']['episodes']} episodes, reports {k(r['report']['kappa'])} over {r['report']['episodes']}."
        + (f" {a['report_ties']} report(s) with tied labels left out." if a["report_ties"] else "")
        + (f" Labels of unknown runs ignored: {', '.join(a['unknown_runs'])}." if a["unknown_runs"] else ""),
        "",
    ]
    return lines


def compact(a: dict) -> list[str]:
    """The printed lines of `wac report --labels`."""
    out = []
    for name, e in a["exposure"].items():
        if e["rated"]:
            hx, gc = e["human_exposed"], e["geometric_coverage"]
            out.append(
                f"human-rated exposure {name}: {100 * hx:.1f}% of {e['rated']} (geometric coverage "
                + ("-" if gc is None else f"{100 * gc:.1f}%")
                + ")"
            )
    for j, g in a["judges"].items():
        kk = "-" if g["kappa"] is None else f"{g['kappa']:.3f}"
        out.append(f"judge-human agreement {j}: accuracy {100 * g['accuracy']:.1f}%, kappa {kk}, n={g['n']}")
    return out


def write_agreement(out: Path, a: dict) -> None:
    (out / "agreement.json").write_text(json.dumps(a, indent=2) + "\n", encoding="utf-8")
