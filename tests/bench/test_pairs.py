"""testing.pairs (bench.pairs' logic): interleaved before/after runs of the load bench and
each side's median."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from testing.pairs import (
    checkout,
    generate_stubs,
    headline,
    largest_held,
    order,
    ramp_table,
    table,
    tree_environment,
)


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


def _ramp(p99s: dict[int, float], errors: tuple[int, ...] = ()) -> dict[str, object]:
    steps = [
        {"tables": n, "figures": {"views_p99_ms": p99, "errors": int(n in errors)}}
        for n, p99 in p99s.items()
    ]
    return {"scenario": "ramp", "config": {"p99_limit_ms": 15.0}, "steps": steps}


def test_a_ramp_in_pairs_is_judged_by_each_steps_median_so_one_pause_ends_no_ramp() -> None:
    results = {
        "before": [
            _ramp({100: 10.0, 200: 40.0, 300: 20.0}),
            _ramp({100: 12.0, 200: 14.0, 300: 30.0}),
            _ramp({100: 11.0, 200: 16.0, 300: 25.0}),
        ],
        "after": [
            _ramp({100: 5.0, 200: 60.0, 300: 9.0}),  # a pause of the machine at 200
            _ramp({100: 6.0, 200: 7.0, 300: 16.0}),
            _ramp({100: 5.5, 200: 8.0, 300: 10.0}),
        ],
    }
    lines = ramp_table(results)
    # every run's p99 at 200 tables, then each side's median
    runs, medians = ["40.00", "14.00", "16.00", "60.00", "7.00", "8.00"], ["16.00", "8.00"]
    assert lines[2].split() == ["200", *runs, *medians]
    largest = next(line for line in lines if line.startswith("largest N"))
    # each run's own ramp, then the medians' (before: 100, 200 over the limit; after: 300)
    assert largest.split()[-9:] == ["100", "200", "100", "100", "200", "300", "100", "300", "3.00x"]


def test_a_step_with_errors_is_never_good_and_unlike_runs_give_no_ramp_table() -> None:
    clean = _ramp({100: 5.0, 200: 6.0})
    failing = _ramp({100: 5.0, 200: 6.0}, errors=(200,))
    lines = ramp_table({"before": [clean], "after": [failing]})
    held = next(line for line in lines if line.startswith("largest N, p99 < 15 ms"))
    assert held.split()[-3:] == ["200", "100", "0.50x"]
    assert ramp_table({"before": [clean], "after": [_ramp({100: 5.0, 300: 6.0})]}) == []
    single = {"scenario": "single", "config": {}, "steps": []}
    assert ramp_table({"before": [single], "after": [single]}) == []


def test_a_ramp_is_also_judged_at_looser_limits_so_a_slow_machine_still_gives_a_ratio() -> None:
    # the commit measured first holds no step at 15 ms (a slow machine): its ratio is
    # undefined there, the looser limits give one
    results = {
        "before": [
            _ramp({100: 18.0, 200: 24.0, 300: 40.0}),
            _ramp({100: 19.0, 200: 26.0, 300: 45.0}),
        ],
        "after": [
            _ramp({100: 9.0, 200: 12.0, 300: 21.0}),
            _ramp({100: 10.0, 200: 14.0, 300: 29.0}),
        ],
    }
    lines = ramp_table(results)
    by_limit = {
        line.split("<")[1].split("ms")[0].strip(): line.split()[-3:]
        for line in lines
        if line.startswith("largest N")
    }
    assert list(by_limit) == ["15", "20", "25", "30", "50"]
    # medians: before 18.5, 25.0, 42.5; after 9.5, 13.0, 25.0
    assert by_limit["15"][-2:] == ["0", "200"]  # no ratio: the before side holds nothing
    assert by_limit["20"] == ["100", "200", "2.00x"]
    assert by_limit["25"] == ["100", "200", "2.00x"]  # 25.0 is not under 25
    assert by_limit["30"] == ["200", "300", "1.50x"]
    assert by_limit["50"] == ["300", "300", "1.00x"]


def test_the_largest_step_held_is_the_last_before_the_first_that_did_not() -> None:
    assert largest_held([(100, True), (200, True), (300, False), (400, True)]) == 200
    assert largest_held([(100, False), (200, True)]) == 0
    assert largest_held([]) == 0


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


def test_each_tree_runs_on_stubs_generated_from_its_own_protos(tmp_path: Path) -> None:
    """A commit before a contract change is measured with its own contract: its tree's
    ``gen/`` is generated from its ``protos/`` and comes first on ``PYTHONPATH``, so what a
    run imports is that tree's module, not this checkout's."""
    repo = Path(__file__).resolve().parents[2]
    with checkout(repo, "HEAD", tmp_path / "a") as tree:
        generate_stubs(tree)
        environment = tree_environment(
            tree, {"PATH": "/usr/bin", "PYTHONPATH": "/x"}, sys.executable
        )
        assert environment["PYTHONPATH"] == f"{tree / 'gen'}{os.pathsep}/x"
        assert environment["PATH"].startswith(f"{Path(sys.executable).parent}{os.pathsep}")
        imported = subprocess.run(
            [sys.executable, "-c", "import dominos.v1.table_pb2 as m; print(m.__file__)"],
            cwd=tree,
            env={**os.environ, "PYTHONPATH": environment["PYTHONPATH"]},
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        assert Path(imported).is_relative_to(tree / "gen")
