# Runs COMMAND with ARGUMENTS (a list) and fails unless it exits 0 and its standard output parses
# as a JSON object. Used by ctest: cmake -DCOMMAND=... -DARGUMENTS=... -P CheckJSONOutput.cmake
execute_process(
  COMMAND "${COMMAND}" ${ARGUMENTS}
  OUTPUT_VARIABLE output
  ERROR_VARIABLE errors
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${COMMAND} ${ARGUMENTS} exited with ${status}:\n${errors}\n${output}")
endif()
string(JSON type ERROR_VARIABLE json_error TYPE "${output}")
if(json_error)
  message(FATAL_ERROR "${COMMAND} ${ARGUMENTS}: output is not JSON (${json_error}):\n${output}")
endif()
if(NOT type STREQUAL "OBJECT")
  message(FATAL_ERROR "${COMMAND} ${ARGUMENTS}: expected a JSON object, got ${type}")
endif()
string(JSON members LENGTH "${output}")
message(STATUS "${COMMAND} ${ARGUMENTS}: a JSON object with ${members} members")
