# Robustness cases sourced by run.sh (core set): the LLM agent and its client (docs/agent.md).
