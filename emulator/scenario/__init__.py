"""Reading a scenario: schema, sweep resolution, checks, error text, YAML and expressions.

Nothing here imports an engine (SimPy or numba): a scenario can be validated,
and its JSON Schema written, without them. The package imports nothing itself, so
that the policies, whose configurations the schema collects, can use
`emulator.scenario.expressions` without a cycle; import its modules by name:
`schema` (the models and defaults), `sweep` (`Scenario`, `Point`), `checks`
(bounds needing a resolved point), `error_text`, `reading` (`load_scenario`),
`yaml_input` and `expressions`.
"""
