"""What the compiled policies share: round trips, the dispatcher a server's message goes to, list picks.

Every hook of a compiled policy has the signature below, the same for every
policy (each policy's kernel is built with its own hooks: `emulator.compiled.build`):

- ``dispatch(P, Q, counts, length, rng, ubuf, iv, T, dispatcher) -> (server, via_list)``;
- ``on_arrive(P, Q, counts, length, rng, ubuf, iv, T, sid, blocked, via_list)``;
- ``on_depart(P, Q, counts, length, rng, ubuf, iv, T, sid)``;
- ``initialise(P, Q, counts, length, rng, ubuf, iv, T) -> done`` (the SimPy policy's
  constructor; False when it stopped for list room: called again, it goes on from
  ``iv[I_INIT]``, 0 at the start);
- ``timer(P, Q, counts, length, rng, ubuf, iv, T, resume) -> done`` (every ``Q[Q_PERIOD]``, which
  ``initialise`` and ``timer`` may set to make the next gap anything;
  False when it stopped for list room: called again with ``resume``, it goes on from
  ``iv[I_UPDATING]``). The driver marks either done.

- ``replied(P, Q, counts, length, rng, ubuf, iv, T, ask) -> (server, via_list)``: with
  latency, the last reply of one of its asks is in (`network`); a server >= 0 is
  where the job the ask holds goes (-1: none, or the policy asked again). A policy that places whole
  batches (``Description.whole``) gets each job of a complete batch here, with ``ask`` -1 (zero latency:
  its ask's replies are in at once; ``iv[I_BATCH]`` the batch's size, ``iv[I_BATCH_AT]`` its jobs placed);
- ``deliver(P, Q, counts, length, rng, ubuf, iv, T, what, a, b, c)``: with latency,
  one of its own messages (``what`` >= `state.POLICY_MESSAGE`) arrives;
- ``on_arrive_batch(P, Q, counts, length, rng, ubuf, iv, T, sid, accepted, jobs, via_list) -> handled``:
  in slotted time, after a decision's ``jobs`` jobs reached server ``sid`` (the first ``accepted`` got in);
  False (the default) makes the slot clock call ``on_arrive`` once per job instead.

``T`` is the `tools.Tools` tuple of the policy's arrays. With zero latency a
query's reply is the server's current length, so a round trip reduces to counting
its messages, as the SimPy engine's zero-latency paths do; with latency
(``P[P_LATENT]``) every message is sent (`network.post`) and handled when it arrives. Each hook draws the
policy's uniforms in the same order as its SimPy counterpart, so that with the
same seed both engines send every job to the same server. The defaults below
(`nothing_*`) are for a policy without that hook.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import faults
from ..core import compiled_only, id_take, uniform
from ..failing import row_up
from ..state import P_D, P_N, P_QUERY, P_REPLY
from ..tools import Tools


@njit(cache=True, inline="always")
def round_trips(P: np.ndarray, counts: np.ndarray, n: int) -> None:
    """`Channel.count_round_trips`."""
    counts[P[P_QUERY]] += n
    counts[P[P_REPLY]] += n


@njit(cache=True, inline="always")
def random_dispatcher(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray) -> int:
    """`ListPolicy.random_dispatcher`."""
    dispatchers = P[P_D]
    return 0 if dispatchers == 1 else int(uniform(rng, ubuf, iv) * dispatchers)


@njit(cache=True, inline="always")
def list_dispatch(P: np.ndarray, rng: tuple, ubuf: np.ndarray, iv: np.ndarray, T: Tools, dispatcher: int,
                  chained: bool, weighted: bool, top: float) -> tuple[int, bool]:
    """`ListPolicy.dispatch`: an id taken from the dispatcher's list (by speed if ``weighted``), else uniform."""
    listed = T.count[dispatcher]
    if listed == 0:
        return int(uniform(rng, ubuf, iv) * P[P_N]), False
    i = int(uniform(rng, ubuf, iv) * listed)
    if weighted:  # IdList.take_weighted: rejection sampling
        base = T.lstart[dispatcher]
        while not uniform(rng, ubuf, iv) * top < T.weights[T.lists[base + i]]:
            i = int(uniform(rng, ubuf, iv) * listed)
    return id_take(T.lists, T.lstart, T.count, T.chain, T.node_d, T.node_next, iv, chained, dispatcher, i), True


@njit(cache=True, inline="always")
def asked_now(P: np.ndarray, counts: np.ndarray, length: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> bool:
    """`faults.asked` from a hook (JBT-d's timer, batch SQ(d)'s first job): whether every reply is in now.

    ``T.failing`` holds a row per server where servers fail, else one row, up (`server_up`); with N = 1
    that row reads as the server's, up, so a row per server is all `faults.asked` needs to know.
    """
    return faults.asked(P, counts, length, iv, T, T.failing, len(T.failing) == P[P_N], ask)


@njit(cache=True, inline="always")
def server_up(T: Tools, sid: int) -> bool:
    """Whether server ``sid`` is up (`failing`); without failures ``T.failing`` is one row, up."""
    return row_up(T.failing, sid if len(T.failing) > 1 else 0)


# -- the hooks of a policy that has none --------------------------------------------------------
@njit(cache=True, inline="always")
def nothing_on_arrive(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                      ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, blocked: bool, via_list: bool) -> None:
    pass


@njit(cache=True, inline="always")
def nothing_on_depart(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                      ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int) -> None:
    pass


@compiled_only
def nothing_initialise(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                       ubuf: np.ndarray, iv: np.ndarray, T: Tools) -> bool:
    return True


@compiled_only
def nothing_timer(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                  ubuf: np.ndarray, iv: np.ndarray, T: Tools, resume: bool) -> bool:
    return True


@njit(cache=True, inline="always")
def nothing_replied(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                    ubuf: np.ndarray, iv: np.ndarray, T: Tools, ask: int) -> tuple[int, bool]:
    return -1, False


@njit(cache=True, inline="always")
def nothing_deliver(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                    ubuf: np.ndarray, iv: np.ndarray, T: Tools, what: int, a: int, b: int, c: int) -> None:
    pass


@njit(cache=True, inline="always")
def nothing_on_arrive_batch(P: np.ndarray, Q: np.ndarray, counts: np.ndarray, length: np.ndarray, rng: tuple,
                            ubuf: np.ndarray, iv: np.ndarray, T: Tools, sid: int, accepted: int, jobs: int,
                            via_list: bool) -> bool:
    return False
