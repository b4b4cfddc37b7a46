"""What several test modules share, in one place: no test module imports another.

- `helpers.scenarios`: small scenarios as data, and models built from them with a tracer;
- `helpers.window`: a traced run that remembers where it stood when the window opened and closed;
- `helpers.intervals`: replications in parallel and Student-t interval checks against theory.

The sample-path identities every run keeps (conservation, timestamps, Little's law)
are public, in `emulator.contract`. The fixtures are in ``conftest.py``.
"""
