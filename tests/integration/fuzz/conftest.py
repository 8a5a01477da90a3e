"""Fuzz tests tally the inputs they tried; the totals are printed at the end of the run."""
from collections import Counter

TRIED = Counter()  # what was fuzzed -> inputs sent


def pytest_terminal_summary(terminalreporter):
    if TRIED:
        terminalreporter.section("fuzzed inputs")
        for name, count in sorted(TRIED.items()):
            terminalreporter.write_line(f"{name}: {count}")
        terminalreporter.write_line(f"total: {sum(TRIED.values())}")
