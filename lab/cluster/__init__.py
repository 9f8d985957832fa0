"""The scaled-out topology from local processes: PostgreSQL, Redis, web processes, speech workers
and nginx on loopback (`make cluster`, `.ci/run`, the multi-process tests and bench_scale)."""
