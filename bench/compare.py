"""Two trees' benchmark numbers side by side, measured in one run, turn about, on one machine:

    python -m bench.compare OLD_TREE [NEW_TREE] [--rounds 3] [--only first,steps,engine]

OLD_TREE is a checkout of the commit before (e.g. `git worktree add /tmp/old HEAD~5`, or
`git archive REV | tar -x -C /tmp/old`); NEW_TREE defaults to this one. Each round runs
`python -m bench --quick --only ROWS --json` in each tree, old then new, so that what else the
machine does falls on both; a number is the median of its rounds. Lower is better for every
time; the last column is new / old.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def numbers(data: Any, prefix: str = "") -> dict[str, float]:
    """Every number in a row's results, by its path (`steps.median_ms`)."""
    if isinstance(data, bool):
        return {}
    if isinstance(data, int | float):
        return {prefix: float(data)}
    found: dict[str, float] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            found |= numbers(value, f"{prefix}.{key}" if prefix else str(key))
    return found


def measure(tree: Path, rows: str) -> dict[str, float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [sys.executable, "-m", "bench", "--quick", "--only", rows, "--json", out.name],
            cwd=tree,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        results = json.loads(Path(out.name).read_text("utf-8"))
    results.pop("_meta", None)
    return numbers(results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=HERE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="first,steps,engine,recording,size")
    args = parser.parse_args(argv)
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for i in range(args.rounds):
        for side in ("old", "new"):
            print(f"… round {i + 1}, {side}", file=sys.stderr, flush=True)
            runs[side].append(measure(getattr(args, side), args.only))
    print("| number | old | new | new / old |\n|---|---|---|---|")
    for key in sorted(set(runs["old"][0]) & set(runs["new"][0])):
        old = statistics.median(r[key] for r in runs["old"] if key in r)
        new = statistics.median(r[key] for r in runs["new"] if key in r)
        ratio = f"{new / old:.2f}" if old else "—"
        print(f"| {key} | {old:.4g} | {new:.4g} | {ratio} |")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
