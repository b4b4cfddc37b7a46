"""Measurement shared by both engines: what is counted and how it becomes a row.

`messages` (the control-message kinds), `recorder` (the streaming statistics of
one replication and the metric columns), `occupancy` (the servers' lengths,
streamed: s_i, the total's law, spread and heavy-traffic metrics).
"""
