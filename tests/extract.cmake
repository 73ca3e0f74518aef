# Integration tests of `ucutlass extract`: the binary runs python/ucutlass_torch (PyTorch on CPU) and
# relays its diagnostics. Each test runs tests/extract/expect.cmake, which checks the exit code and
# the expected text on stderr. Label "python": they need the venv with torch (scripts/setup).
set(_ucut_extract_out "${CMAKE_BINARY_DIR}/extract-tests")
function(ucut_extract_test name expected_rc expected_text)
  add_test(NAME extract.${name}
           COMMAND ${CMAKE_COMMAND} -DUCUTLASS=$<TARGET_FILE:ucutlass> -DEXPECTED_RC=${expected_rc}
                   "-DEXPECTED_TEXT=${expected_text}" "-DARGS=${ARGN}"
                   -P "${CMAKE_CURRENT_LIST_DIR}/extract/expect.cmake"
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  set_tests_properties(extract.${name} PROPERTIES LABELS "python" TIMEOUT 600)
endfunction()

ucut_extract_test(good_file 0 ""
  "problems/epi_linear_bias_gelu.py;-o;${_ucut_extract_out}/epi_linear_bias_gelu.json")
ucut_extract_test(missing_get_inputs 1
  "tests/extract/missing_get_inputs.py: error: missing `get_inputs` (a KernelBench problem defines Model, get_inputs and get_init_inputs)"
  "tests/extract/missing_get_inputs.py;-o;${_ucut_extract_out}/missing.json")
ucut_extract_test(untraceable 1
  "tests/extract/untraceable.py:11: error: cannot trace Model.forward: "
  "tests/extract/untraceable.py")
ucut_extract_test(no_such_file 2
  "ucutlass extract: error: tests/extract/nope.py: no such file or folder"
  "tests/extract/nope.py")

# KernelBench files as they ship (tests/data/problems/*.py): each used to fail extraction or
# lowering for a mundane reason; each now extracts, and lowers where the language can express it.
set(_ucut_kb_data "tests/data/problems")
ucut_extract_test(missing_import 1
  "${_ucut_kb_data}/imports_missing.py:3: error: the file imports `ucutlass_test_package_that_is_not_installed`, which "
  "${_ucut_kb_data}/imports_missing.py;-o;${_ucut_extract_out}/imports_missing.json")
ucut_extract_test(time_limit 1
  "${_ucut_kb_data}/inputs_never_return.py:12: error: extraction did not finish within 8 s (stopped in get_inputs())"
  "${_ucut_kb_data}/inputs_never_return.py;--timeout;8")
# optimize runs the extractor too (eval::run_extractor): a missing import is the file's error, not
# "the Python extractor cannot run"; $UCUTLASS_EXTRACT_TIMEOUT is the limit, and the progress note
# shows while it runs.
add_test(NAME extract.optimize_missing_import
         COMMAND bash -c "out=$(UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> optimize ${_ucut_kb_data}/imports_missing.py --no-compile --no-memory --out '${_ucut_extract_out}/opt' 2>&1); rc=$?; echo \"$out\"; test $rc -eq 1 && echo \"$out\" | grep -qF 'imports_missing.py:3: error: the file imports `ucutlass_test_package_that_is_not_installed`' && ! echo \"$out\" | grep -q 'cannot run'"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
add_test(NAME extract.optimize_time_limit
         COMMAND bash -c "out=$(UCUTLASS_NO_GPU=1 UCUTLASS_EXTRACT_TIMEOUT=8 $<TARGET_FILE:ucutlass> optimize ${_ucut_kb_data}/inputs_never_return.py --no-compile --no-memory --out '${_ucut_extract_out}/opt' 2>&1); rc=$?; echo \"$out\"; test $rc -eq 1 && echo \"$out\" | grep -qF 'inputs_never_return.py: note: still extracting after 5 s, in get_inputs() at line 12 (limit 8 s' && echo \"$out\" | grep -qF 'inputs_never_return.py:12: error: extraction did not finish within 8 s (stopped in get_inputs())' && test $(echo \"$out\" | grep -c 'still extracting') -eq 1"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(extract.optimize_missing_import extract.optimize_time_limit PROPERTIES LABELS "python" TIMEOUT 300)
# lowers: ON (the program is written), OFF (refused with expected_text), or SOL (the document reads:
# `ucutlass sol` succeeds where the lowering still refuses an op, e.g. masked_fill).
function(ucut_extract_lower_test name lowers expected_text)
  set(json "${_ucut_extract_out}/${name}.json")
  if(lowers STREQUAL "SOL")
    set(check "$<TARGET_FILE:ucutlass> sol '${json}' --gpu h200 > /dev/null")
  elseif(lowers)
    set(check "$<TARGET_FILE:ucutlass> lower '${json}' > '${_ucut_extract_out}/${name}.ucut'")
  else()
    set(check "! $<TARGET_FILE:ucutlass> lower '${json}' 2> '${_ucut_extract_out}/${name}.err' && cat '${_ucut_extract_out}/${name}.err' && grep -qF \"${expected_text}\" '${_ucut_extract_out}/${name}.err'")
  endif()
  add_test(NAME extract.lower.${name}
           COMMAND bash -c "mkdir -p '${_ucut_extract_out}' && $<TARGET_FILE:ucutlass> extract ${_ucut_kb_data}/${name}.py -o '${json}' && ${check}"
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  set_tests_properties(extract.lower.${name} PROPERTIES LABELS "python" TIMEOUT 600)
endfunction()
ucut_extract_lower_test(half_linear_f32_in ON "")
ucut_extract_lower_test(einsum_4d_tensor_matrix ON "")
ucut_extract_lower_test(einsum_batched_nt ON "")
ucut_extract_lower_test(einsum_diagonal OFF "einsum('bii->bi') repeats index 'i' in operand 0 (a diagonal or trace)")
ucut_extract_lower_test(einsum_output_permuted ON "")  # the GEMM, then a torch stage permutes
ucut_extract_lower_test(causal_attention_inf SOL "")  # masked_fill(..., float('-inf')) was invalid JSON
ucut_extract_lower_test(integer_input ON "")  # x * 2 in a kernel, + ids (i64) in a torch stage

# A resumed run keeps problem.json when the file and the extractor are what they were (the key in
# problem.json.key): no second extraction; an edited file is extracted again.
add_test(NAME extract.resume_reuses_problem_json
         COMMAND bash -c "set -e; d='${_ucut_extract_out}/reuse'; rm -rf \"$d\"; mkdir -p \"$d\"; cp problems/act_relu.py \"$d/p.py\"; run() { UCUTLASS_NO_GPU=1 $<TARGET_FILE:ucutlass> optimize \"$d/p.py\" --plan --no-compile --no-memory --out \"$d/o\" \"$@\" > /dev/null 2>&1; }; run; test -s \"$d/o/p/problem.json.key\"; t1=$(stat -c %Y \"$d/o/p/problem.json\"); sleep 1.2; run --resume; t2=$(stat -c %Y \"$d/o/p/problem.json\"); test \"$t1\" = \"$t2\"; sleep 1.2; run; t3=$(stat -c %Y \"$d/o/p/problem.json\"); test \"$t3\" != \"$t2\"; echo '# edited' >> \"$d/p.py\"; sleep 1.2; run --resume; t4=$(stat -c %Y \"$d/o/p/problem.json\"); test \"$t4\" != \"$t3\"; echo ok"
         WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
set_tests_properties(extract.resume_reuses_problem_json PROPERTIES LABELS "python" TIMEOUT 600)
