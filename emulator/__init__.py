"""lbemu: a process-oriented emulator of dispatcher load balancing.

It counts control messages per job, by kind, alongside response times, waits,
queue lengths and blocking, for JSQ, SQ(d), JSQ(d(N)), JIQ, JBT-d, the threshold
model, random and round robin, and the field's policy families (least work,
redundancy, batch sampling, late binding, shortest expected delay, Persistent-Idle,
least outstanding requests), at FIFO, pool or processor-sharing servers.

>>> import emulator
>>> sorted(emulator.REGISTRY)[:3]
['batch_sqd', 'jbt', 'jiq']
"""

from __future__ import annotations

from .api import Results, load_results, run, simulate
from .contract import check_policy
from .errors import RunError, ScenarioError
from .policies import REGISTRY, register_policy
from .scenario.reading import load_scenario
from .scenario.sweep import Scenario
from .version import __version__

__all__ = ["REGISTRY", "Results", "RunError", "Scenario", "ScenarioError", "__version__", "check_policy",
           "load_results", "load_scenario", "register_policy", "run", "simulate"]
