# Issue 17 #10: a plain `cmake -DCMAKE_BUILD_TYPE=Release` build failed because -Werror was on by
# default (GCC 12 reports false -Wrestrict positives at -O3). Configures the source tree the way
# a user would, without presets, and checks that warnings are not errors there.
# Usage: cmake -DSOURCE_DIR=... -DBINARY_DIR=... -P release_defaults.cmake
# A fresh directory: a cache left by an earlier run would keep its old option values.
file(REMOVE_RECURSE ${BINARY_DIR})
execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G Ninja -DCMAKE_BUILD_TYPE=Release
    RESULT_VARIABLE configured OUTPUT_QUIET)
if(NOT configured EQUAL 0)
    message(FATAL_ERROR "a plain Release configure failed")
endif()
file(STRINGS ${BINARY_DIR}/CMakeCache.txt werror REGEX "^MOE_WARNINGS_AS_ERRORS:BOOL=")
if(NOT werror STREQUAL "MOE_WARNINGS_AS_ERRORS:BOOL=OFF")
    message(FATAL_ERROR "plain Release build: expected MOE_WARNINGS_AS_ERRORS OFF, got '${werror}'")
endif()
file(READ ${BINARY_DIR}/build.ninja rules)
string(FIND "${rules}" "-Werror" found)
if(NOT found EQUAL -1)
    message(FATAL_ERROR "plain Release build compiles with -Werror")
endif()
file(REMOVE_RECURSE ${BINARY_DIR})
