# The LLM agent end to end (tests/agent/agent_cli_check.sh): the CLI against the loopback fake OpenAI
# server in planning mode, the cassette replay, and the endpoint failures; label "unit" (no GPU,
# no Python). ucutlass-fake-llm is the scripted server (src/agent/fake_openai_server.h), also used
# on the GPU machine to run the agent measured (bench/agent/).
add_executable(ucutlass-fake-llm "${CMAKE_SOURCE_DIR}/tests/tools/fake_llm_main.cpp")
target_link_libraries(ucutlass-fake-llm PRIVATE ucut_agent)
add_test(NAME agent.cli
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/agent/agent_cli_check.sh" $<TARGET_FILE:ucutlass>
                 $<TARGET_FILE:ucutlass-fake-llm> "${CMAKE_BINARY_DIR}/agent-tests"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(agent.cli PROPERTIES LABELS "unit;agent" TIMEOUT 300)
# `ucutlass prompt`: the first prompt's parts and their sizes, without sending anything.
add_test(NAME agent.prompt
         COMMAND bash -c "o=$($<TARGET_FILE:ucutlass> prompt tests/golden/lower/addmm.json --json --out '${CMAKE_BINARY_DIR}/agent-tests/prompt') && echo \"$o\" | grep -q '\"name\": \"system\"' && echo \"$o\" | grep -q '\"name\": \"current\"' && echo \"$o\" | grep -q '\"total_tokens\"' && $<TARGET_FILE:ucutlass> prompt tests/golden/lower/addmm.json --show --task analyze --out '${CMAKE_BINARY_DIR}/agent-tests/prompt' | grep -q 'JSON array'"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(agent.prompt PROPERTIES LABELS "unit;agent" TIMEOUT 60)
