"""The SimPy engine: each dispatcher, server and the channel modelled explicitly.

`build` wires one replication (`build_model`); `server` (FIFO servers and pools),
`dispatcher`, `channels` (transport: latency and counting), `job`, `copies` (a job sent as
several copies, and their FIFO servers, for redundancy), and `slotted`
(the slot clock and the slotted servers, dispatchers and channel).
"""
