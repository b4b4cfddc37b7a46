"""The contract every registered policy meets: `emulator.check_policy`'s checks, one test each.

A new policy is picked up here by its registry line alone. The checks themselves
live in `emulator.contract`, so that a policy written outside lbemu is held to
exactly these (see docs/policies.md, "Your own policy").
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.equivalence import contract_systems

from emulator.contract import policy_checks, same_on_both_engines
from emulator.policies import REGISTRY


def _check(name: str, check_name: str, check: Callable[[], None]) -> Callable[[], None]:
    """The contract's check, but for the engines' comparison, which runs the systems the suite compiles for
    the policy (`helpers.equivalence.contract_systems`; the rest run in `benchmarks/equivalence.py`)."""
    if check_name != "same_on_both_engines":
        return check
    return lambda: same_on_both_engines(REGISTRY[name], contract_systems(name))


CASES = [(name, check_name, _check(name, check_name, check)) for name in sorted(REGISTRY)
         for check_name, check in policy_checks(REGISTRY[name])]


@pytest.mark.parametrize("name, check_name, check", CASES, ids=[f"{n}-{c}" for n, c, _ in CASES])
def test_contract(name: str, check_name: str, check: Callable[[], None]) -> None:
    check()
