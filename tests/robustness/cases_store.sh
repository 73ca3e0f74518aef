# Robustness cases sourced by run.sh (core set): the result store, PostgreSQL and Ray (docs/memory.md, docs/scale-out.md).
