"""The policy registry: one explicit dict, name -> class.

Adding a policy is one new module and one line here; scenario validation, the
JSON Schema, ``lbemu policies`` and the contract tests pick it up from here.
"""

from __future__ import annotations

from .base import Policy
from .jbt import JBTPolicy
from .jiq import JIQPolicy
from .jsq import JSQPolicy
from .random import RandomPolicy
from .round_robin import RoundRobinPolicy
from .sqd import SQDPolicy
from .threshold import ThresholdPolicy

REGISTRY: dict[str, type[Policy]] = {
    "random": RandomPolicy,
    "round_robin": RoundRobinPolicy,
    "jsq": JSQPolicy,
    "sqd": SQDPolicy,
    "jiq": JIQPolicy,
    "jbt": JBTPolicy,
    "threshold": ThresholdPolicy,
}

__all__ = ["REGISTRY", "Policy"]
