"""What arrives: per-replication random streams, service-time laws and arrival processes.

Shared by both engines, so that each draws the same jobs from the same streams:
`streams` (seeds, named streams, batched uniforms), `distributions` (service and
latency laws), `arrivals` (inter-arrival gaps, traces) and `speeds` (server
speeds drawn from a law once per replication).
"""
