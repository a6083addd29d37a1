# Runs COMMAND with the ;-separated ARGS and passes when it exits non-zero
# and its output contains EXPECT: the tool must fail, and say why.
execute_process(COMMAND ${COMMAND} ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("${all}")
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit code, got 0")
endif()
string(FIND "${all}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "expected the output to contain: ${EXPECT}")
endif()
