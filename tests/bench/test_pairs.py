"""testing.pairs (bench.pairs' logic): interleaved before/after runs of the load bench and
each side's median."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testing.pairs import checkout, headline, order, table


def _result(cpu: float, ratio: float) -> dict[str, object]:
    figures = {"cpu_s_per_1k_cluster": cpu, "cpu_over_pipeline": ratio, "errors": 0}
    return {"steps": [{"figures": {"tables": 1}}, {"figures": figures}]}


def test_runs_alternate_abba_so_a_drift_weighs_on_both_sides() -> None:
    assert order(1) == [("before", 1), ("after", 1)]
    assert order(3) == [
        ("before", 1),
        ("after", 1),
        ("after", 2),
        ("before", 2),
        ("before", 3),
        ("after", 3),
    ]


def test_the_table_shows_every_run_and_each_sides_median_with_the_ratio() -> None:
    results = {
        "before": [
            headline(_result(8.0, 2.0)),
            headline(_result(10.0, 1.8)),
            headline(_result(9.0, 1.9)),
        ],
        "after": [
            headline(_result(6.0, 1.5)),
            headline(_result(7.0, 1.6)),
            headline(_result(8.0, 1.4)),
        ],
    }
    lines = table(results)
    cpu = next(line for line in lines if line.startswith("cluster CPU s per 1k"))
    # the last step's figures, every run, then the medians (9.00, 7.00) and their ratio
    assert cpu.split()[-9:] == [
        "8.00",
        "10.00",
        "9.00",
        "6.00",
        "7.00",
        "8.00",
        "9.00",
        "7.00",
        "0.78x",
    ]
    assert not any(line.startswith("  gateway") for line in lines)  # no run has it: no row


def test_a_checkout_is_a_worktree_of_the_revision_removed_afterwards(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    with checkout(repo, head, tmp_path / "a") as tree:
        assert (tree / "bench" / "load").is_dir()
        listed = subprocess.run(
            ["git", "-C", str(repo), "worktree", "list"], check=True, capture_output=True, text=True
        ).stdout
        assert str(tree) in listed
    assert not tree.exists()
    listed = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], check=True, capture_output=True, text=True
    ).stdout
    assert str(tree) not in listed
