"""lbemu: a process-oriented emulator of dispatcher load balancing.

It counts control messages per job, by kind, alongside response times, waits,
queue lengths and blocking, for JSQ, SQ(d), JSQ(d(N)), JIQ, JBT-d, the threshold
model, random and round robin.

>>> import emulator
>>> sorted(emulator.REGISTRY)[:3]
['jbt', 'jiq', 'jsq']
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api import Results, run, simulate
from .errors import RunError, ScenarioError
from .policies import REGISTRY
from .scenario.reading import load_scenario
from .scenario.sweep import Scenario

__all__ = ["REGISTRY", "Results", "RunError", "Scenario", "ScenarioError", "load_scenario", "run", "simulate",
           "__version__"]
