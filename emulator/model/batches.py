"""The arrival source for policies that place a batch at once (`Policy.whole_batches`)."""

from __future__ import annotations

from bisect import bisect_right

import simpy

from .build import Source, _all_arrived
from .job import Job


class BatchSource(Source):
    """`Source`, with the jobs that arrive together (gap 0) handed over as one batch.

    The batch's jobs are drawn first (sizes in order, the window's edges at the same
    jobs), then go to one dispatcher, with one split draw per batch; each carries
    ``batch``, their number, and they reach the dispatcher one after the other in
    this step. Arrivals stop (see `Source`) only between batches, so a policy always
    sees whole batches; the jobs after the window that this adds change no metric.
    """

    def _arrive(self, _event: simpy.Event) -> None:
        """The batch that starts now: its jobs, its dispatcher; then wait for the next gap."""
        recorder, first, end, track = self.recorder, self.first, self.end, self.track
        if self.job_id >= end and _all_arrived(self.recent if track else None, recorder.transfers, self.job_id):
            if self.job_id == end:
                recorder.edge()
            return
        jobs: list[Job] = []
        more = True
        while more:
            job_id = self.job_id
            if job_id == first or job_id == end:
                recorder.edge()
            job = Job(job_id, self.env._now, self.next_size(), first <= job_id < end)
            if track and job.measured:
                self.recent.append(job)
                if not job_id & 63:
                    _all_arrived(self.recent, 0, 0)  # prunes
            self.job_id = job_id + 1
            jobs.append(job)
            gap = next(self.gaps, None)
            if gap is not None and gap > 0.0:
                self.alarm.after(gap)
            more = gap == 0.0
        self._hand_over(jobs)
        if gap is None:  # as `Source`: the last job is handed over, then the arrivals end
            recorder.exhausted()

    def _hand_over(self, jobs: list[Job]) -> None:
        """Send the batch to one dispatcher, drawn as `Source` draws one per job."""
        split, dispatchers = self.split, self.dispatchers
        if split is None:
            target = dispatchers[0]
        elif self.bounds is None:
            target = dispatchers[split.randrange(len(dispatchers))]
        else:
            target = dispatchers[bisect_right(self.bounds, split.random())]
        for job in jobs:
            job.batch = len(jobs)
            target.receive(job)
