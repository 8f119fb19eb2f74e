"""A project's earned value (`earned_value.project_values`) sums its packages' amounts
(`package_amounts`) without making each package's figures; the figures are made when first
read (`ProjectEarnedValue.packages`). Both must be exactly what the plain derivation gives:
each package by `package_values` alone, the project by `rollup` of those, on varied packages
(with and without a baseline budget, progress, actuals, phasing or dates)."""

import datetime as dt
import random
from decimal import Decimal

import pytest

from status import earned_value as evm
from status.earned_value import PackageInputs

TODAY = dt.date(2026, 11, 29)
STATUSES = ["Not Started", "In Progress", "Blocked", "Complete"]


def _amount(rng: random.Random) -> Decimal | None:
    return rng.choice([None, Decimal(0), Decimal(rng.randint(1, 10**6)) / 100])


def _phasing(rng: random.Random) -> object:
    months = [
        {"period": f"2026-{m:02d}", "amount": rng.choice([100, "250.50", 0, -5, "x", None])}
        for m in range(1, 13)
        if rng.random() < 0.4
    ]
    return rng.choice([None, [], months, [*months, "not an entry"], "not a list"])


def _package(rng: random.Random, n: int) -> PackageInputs:
    start = TODAY + dt.timedelta(days=rng.randint(-300, 100))
    end = start + dt.timedelta(days=rng.randint(-10, 300))
    dated = rng.random() < 0.7
    return PackageInputs(
        id=n,
        name=f"Package {n}",
        status=rng.choice(STATUSES),
        progress=rng.choice([None, 0, 35, 100, 120, -5]),
        bac=_amount(rng),
        actual=_amount(rng),
        phasing=_phasing(rng),
        start=start if dated else None,
        end=end if dated else None,
    )


@pytest.mark.parametrize("seed", range(40))
def test_project_values_equal_the_plain_derivation(seed):
    rng = random.Random(seed)
    inputs = [_package(rng, n) for n in range(rng.randint(0, 25))]
    found = evm.project_values(inputs, TODAY)
    plain = [evm.package_values(p, TODAY) for p in inputs]
    left_out = [p.name for p in inputs if p.bac is None]
    expected = evm.rollup(plain, left_out)
    assert found.total.figures == expected.figures
    assert found.total.as_dict() == expected.as_dict()
    assert [(p.figures, p.missing, p.counted, p.name, p.id) for p in found.packages] == [
        (p.figures, p.missing, p.counted, p.name, p.id) for p in plain
    ]
    assert found.as_dict(packages=True) == {
        **expected.as_dict(),
        "workPackages": [{"id": str(p.id), "name": p.name, **p.as_dict()} for p in plain],
    }
