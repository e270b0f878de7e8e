# SPDX-License-Identifier: Apache-2.0
# ctest -R test_install: cmake --install, then a consumer project.
file(REMOVE_RECURSE ${SCRATCH})
set(prefix ${SCRATCH}/prefix)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/vkpipe/pipeline.h include/vkpipe/target.h bin/vkpipe
          bin/vkpipe-bench)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
file(GLOB libs ${prefix}/lib*/libvkpipe.so ${prefix}/lib*/libvkpipe.a
     ${prefix}/lib*/pkgconfig/vkpipe.pc ${prefix}/lib*/cmake/vkpipe/vkpipeConfig.cmake)
list(LENGTH libs n)
if(NOT n EQUAL 4)
  message(FATAL_ERROR "expected libvkpipe.so, libvkpipe.a, vkpipe.pc and "
                      "vkpipeConfig.cmake under ${prefix}, found: ${libs}")
endif()

# A sanitizer build of the library needs its consumers built the same way.
set(san_flags "")
if(SANITIZE)
  set(san_flags "-fsanitize=${SANITIZE}")
endif()

# A consumer through find_package(vkpipe), linking the shared library.
run_step("configuring the example" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/c_api
         -B ${SCRATCH}/example -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
         "-DCMAKE_C_FLAGS=${san_flags}")
run_step("building the example" ${CMAKE_COMMAND} --build ${SCRATCH}/example)
file(GLOB libdir ${prefix}/lib*)
set(ENV{LD_LIBRARY_PATH} "${libdir}")
run_step("running the example" ${SCRATCH}/example/vkpipe_c_api_example
         ${SOURCE_DIR}/examples/mlp.json 6)
if(NOT step_output MATCHES "max relative difference from the reference target")
  message(FATAL_ERROR "unexpected example output:\n${step_output}")
endif()
message(STATUS "example output:\n${step_output}")

# An out-of-tree target (docs/targets.md) built against the installed headers
# and library only: registered beside the built-ins, placed by policy with
# visible fallbacks, run as a pipeline and checked against "ref".
run_step("configuring the out-of-tree target" ${CMAKE_COMMAND}
         -S ${SOURCE_DIR}/examples/out_of_tree_target -B ${SCRATCH}/tiny
         -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
         "-DCMAKE_C_FLAGS=${san_flags}")
run_step("building the out-of-tree target" ${CMAKE_COMMAND} --build ${SCRATCH}/tiny)
run_step("running the out-of-tree target" ${SCRATCH}/tiny/tiny_target_example
         ${SOURCE_DIR}/examples/mlp.json)
if(NOT step_output MATCHES "fell back" OR
   NOT step_output MATCHES "max relative difference from the reference target")
  message(FATAL_ERROR "unexpected out-of-tree target output:\n${step_output}")
endif()
message(STATUS "out-of-tree target output:\n${step_output}")

# The same program through pkg-config.
set(ENV{PKG_CONFIG_PATH} "${libdir}/pkgconfig")
run_step("pkg-config" pkg-config --cflags --libs vkpipe)
string(STRIP "${step_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run_step("compiling with pkg-config flags" cc -std=c11 ${san_flags} -o ${SCRATCH}/example_pc
         ${SOURCE_DIR}/examples/c_api/main.c ${flags} -lm)
run_step("running the pkg-config build" ${SCRATCH}/example_pc
         ${SOURCE_DIR}/examples/mlp.json 2)

# The Python package, when it was built: importable from the prefix, finding
# the installed library by itself (no LD_LIBRARY_PATH).
if(PYTHON)
  unset(ENV{LD_LIBRARY_PATH})
  set(ENV{PYTHONPATH} "${prefix}/${PYTHON_DIR}")
  # No semicolons in the script: run_step's list expansion would split there.
  run_step("importing the installed Python package" ${PYTHON} -c "
import vkpipe, numpy as np
m = vkpipe.load('${SOURCE_DIR}/examples/mlp.json')
y = m.run(x=np.ones((1, 64), np.float32))['y']
assert vkpipe.__file__.startswith('${prefix}'), vkpipe.__file__
print('imported from the prefix, mlp.json gives', y.shape)
")
  message(STATUS "python package: ${step_output}")
  # The installed library exports exactly what the installed headers declare.
  file(GLOB installed_so ${prefix}/lib*/libvkpipe.so)
  run_step("checking the installed ABI" ${PYTHON} ${SOURCE_DIR}/tests/abi/check_abi.py
           ${prefix}/include ${installed_so} gcc)
  message(STATUS "ABI: ${step_output}")
endif()
