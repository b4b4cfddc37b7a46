"""Running a scenario: tasks and workers, the result store, tidy frames and the result files.

`runner` (tasks, local processes or Dask, the engine each task runs on), `store`
(the SQLite store of finished tasks), `results` (rows, summaries and confidence
intervals), `profiles` (occupancy, total-jobs and response-CDF frames) and
`output` (the files of a results folder).
"""
