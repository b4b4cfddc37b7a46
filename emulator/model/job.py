"""A job: drawn at arrival (so every policy sees the same one), then timestamped."""

from __future__ import annotations


class Job:
    """One job and its timestamps.

    ``size`` is work at a unit-speed server; the service time at a server of
    speed mu is ``size / mu``. ``via_list`` is set by pull-based policies when
    the dispatcher took the target from its list of reported servers (the job
    carries that news to the server, so it costs no control message). ``batch``:
    the number of jobs that arrived with it, itself included, set only for a policy
    that places a batch at once (`emulator.policies.base.Policy.whole_batches`).
    """

    __slots__ = ("id", "arrival", "size", "measured", "dispatched", "at_server", "start",
                 "server", "via_list", "blocked", "dispatcher", "batch")

    id: int
    arrival: float
    size: float
    measured: bool
    dispatched: float  # when the dispatcher sent it
    at_server: float  # when it reached its server
    start: float  # start of service
    server: int
    via_list: bool
    blocked: bool
    dispatcher: int  # the dispatcher that sent it (LOR's completion goes back there)
    batch: int

    def __init__(self, id: int, arrival: float, size: float, measured: bool) -> None:
        # `emulator.model.build.Source._arrive` sets the same fields itself (it runs per job): keep both alike.
        self.id = id
        self.arrival = arrival
        self.size = size
        self.measured = measured
        # dispatched, at_server, start and server are set when they happen.
        self.via_list = False
        self.blocked = False

    def __repr__(self) -> str:
        server = getattr(self, "server", None)
        return f"Job({self.id}, arrival={self.arrival:g}, size={self.size:g}, server={server})"
