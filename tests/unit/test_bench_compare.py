"""bin/bench_compare.py's table: a change is reported only past the tolerance and the
spread between rounds, and each figure with a floor is shown as a ratio to it."""
import importlib.util

from tests.support import ROOT


def _compare():
    spec = importlib.util.spec_from_file_location("herald_bench_compare", ROOT / "bin" / "bench_compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rest(cpu, floor_cpu, per_s=1000):
    return {"publishes_per_s": per_s, "server_cpu_us_per_publish": cpu,
            "floor": {"publishes_per_s": 3000, "server_cpu_us_per_publish": floor_cpu}}


def _row(rows, label):
    return next(row for row in rows if row.startswith(f"| {label} |"))


def test_a_change_within_the_spread_between_rounds_is_not_reported():
    compare = _compare()
    measured = {"rest": {"ref": [_rest(800, 350), _rest(1000, 350), _rest(1200, 350)],
                         "head": [_rest(900, 350), _rest(1150, 350), _rest(1300, 350)]}}
    rows, worse = compare.table(measured, tolerance=0.10)
    row = _row(rows, "REST publish: server CPU per publish (µs)")
    assert worse == 0 and "worse" not in row  # 1.15x, but the rounds spread ±20%
    assert "| ±20% | 1.15 |" in row


def test_a_change_past_the_spread_is_reported_and_each_figure_beside_its_floor():
    compare = _compare()
    measured = {"rest": {"ref": [_rest(1000, 350), _rest(1010, 350), _rest(990, 350)],
                         "head": [_rest(600, 300), _rest(610, 300), _rest(590, 300)]}}
    rows, worse = compare.table(measured, tolerance=0.10)
    row = _row(rows, "REST publish: server CPU per publish (µs)")
    assert worse == 0 and "0.60 **better**" in row
    assert row.endswith("| 300.0, 300.0, 300.0 | 2.00 |")  # this tree / its floor, same runs
    measured["rest"]["head"] = [_rest(1500, 300)] * 3
    rows, worse = compare.table(measured, tolerance=0.10)
    assert worse == 1 and "1.50 **worse**" in _row(rows, "REST publish: server CPU per publish (µs)")


def test_a_failed_side_and_a_figure_without_a_floor_still_get_a_row():
    compare = _compare()
    rows, worse = compare.table({"rest": {"ref": [], "head": [_rest(700, 350)]}}, tolerance=0.10)
    assert worse == 0
    assert _row(rows, "REST publish: server CPU per publish (µs)").startswith(
        "| REST publish: server CPU per publish (µs) | failed | 700.0 |")
    assert compare.verdict(1.5, "reference", 0.1) == ""
