"""Control-message kinds, in the order of the result columns.

Every directed control message counts one. Job transfers are not control
messages and are counted apart.
"""

from __future__ import annotations

import sys
from enum import IntEnum


class Kind(IntEnum):
    """A control-message kind; its value indexes the counters."""

    QUERY = 0  # dispatcher -> server: "what is your queue length?" (server -> dispatcher in JIQ-SQ(d))
    REPLY = 1  # answer to a query
    IDLE = 2  # server -> dispatcher: JIQ idle token
    REPORT = 3  # server -> dispatcher: JBT-d below-threshold report
    THRESHOLD = 4  # dispatcher -> server: JBT-d threshold broadcast, one per receiving server
    UPDATE = 5  # server -> dispatcher: a server's length, unasked (jsq_push, jsq_sparse), one per receiver
    RESERVATION = 6  # dispatcher -> server: late_binding's place in a server's queue for a job
    REQUEST = 7  # server -> dispatcher: late_binding, a reservation at the head of an idle server asks for its job
    CANCEL = 8  # late_binding: dispatcher -> server, the job went to an earlier asker; redundancy: server -> server,
    # the first copy finished (or started): drop yours, one per other copy
    COMPLETION = 9  # server -> dispatcher: LOR, a job it sent has left (or was blocked)


KINDS: tuple[str, ...] = tuple(kind.name.lower() for kind in Kind)

NO_REPLY = sys.maxsize
"""What a query's answer reads as when its reply did not come back in time (lost, or a down server).

Larger than any queue length, so a policy that joins the shortest of the replies
picks among those that came, and uniformly at random among all when none came; a
policy that uses the values otherwise (JBT-d's threshold) tests for it.
"""
