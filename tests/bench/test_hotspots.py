"""testing.hotspots (bench.load.hotspots' logic): samples by function from py-spy's raw
collapsed stacks."""

from __future__ import annotations

from testing.hotspots import function_of, parse, render

RAW = [
    "run (asyncio/runners.py:118);execute (services/table/app.py:40);commit (store.py:12) 7\n",
    "run (asyncio/runners.py:118);execute (services/table/app.py:41);view (proj.py:3) 2\n",
    "run (asyncio/runners.py:118) 10\n",
    # recursion: the function is on the stack twice, its samples count once in all
    "run (asyncio/runners.py:118);walk (rules.py:5);walk (rules.py:9) 1\n",
    "not a stack line\n",
    "\n",
]


def test_a_frame_loses_its_line_number_so_every_line_of_a_function_adds_up() -> None:
    assert function_of("run (asyncio/runners.py:118)") == "run (asyncio/runners.py)"
    assert function_of("<lambda> (<string>)") == "<lambda> (<string>)"
    spots = parse(RAW)
    assert spots.inclusive["execute (services/table/app.py)"] == 9


def test_own_samples_go_to_the_top_frame_and_in_all_to_every_function_once() -> None:
    spots = parse(RAW)
    assert spots.total == 20  # malformed and empty lines skipped
    assert spots.own["run (asyncio/runners.py)"] == 10
    assert spots.own["commit (store.py)"] == 7
    assert spots.inclusive["run (asyncio/runners.py)"] == 20
    assert spots.inclusive["walk (rules.py)"] == 1
    assert spots.own["walk (rules.py)"] == 1


def test_the_report_lists_shares_of_all_samples_most_first() -> None:
    text = render(parse(RAW), top=2)
    own = text.split("-- by samples own --\n")[1].split("\n\n")[0].splitlines()
    assert own == [
        " 50.00 %       10  run (asyncio/runners.py)",
        " 35.00 %        7  commit (store.py)",
    ]
    assert "100.00 %       20  run (asyncio/runners.py)" in text
    assert render(parse([]), top=5) == "no samples"
