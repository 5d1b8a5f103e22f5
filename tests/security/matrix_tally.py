"""What the authorization matrix asked and saw in this run, for its report: the last test of
test_matrix.py checks it, and tests/conftest.py prints it after the run (under pytest-xdist,
the union of what every worker handed over at its end)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Tally:
    cells: set[str] = field(default_factory=set)  # ids of the cells asked
    passed: set[str] = field(default_factory=set)  # ... whose answer was the table's
    denials: set[str] = field(default_factory=set)  # ids of the cells whose answer is a denial

    def as_lists(self) -> dict[str, list[str]]:
        return {"cells": sorted(self.cells), "passed": sorted(self.passed), "denials": sorted(self.denials)}

    def merge(self, lists: dict[str, list[str]]) -> None:
        """Add another process's tally (``as_lists``)."""
        self.cells.update(lists["cells"])
        self.passed.update(lists["passed"])
        self.denials.update(lists["denials"])

    def line(self) -> str:
        denied = len(self.denials & self.passed)
        share = f"{denied / len(self.denials):.0%}" if self.denials else "-"
        return (
            f"authorization matrix: {len(self.cells)} cells, {len(self.passed)} as the table says; "
            f"{denied} of {len(self.denials)} expected denials denied ({share})"
        )


TALLY = Tally()


def asked(cell: str, outcome) -> None:
    TALLY.cells.add(cell)
    if outcome.denial:
        TALLY.denials.add(cell)


def answered(cell: str) -> None:
    TALLY.passed.add(cell)
