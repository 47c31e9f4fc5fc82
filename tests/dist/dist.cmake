# dist.cmake: the weft_dist tests (label "mpi"). Every .c here is one
# program, linked with libweft_dist and run under mpiexec on 1, 2 and 4
# ranks (4 oversubscribes a 2-core machine: the tests stay small).
# moves, patterns and results run once more with every continuation
# forced through the scheduler (WEFT_DIST_FORCE_STEAL=1); no_same_address.c runs with the
# re-execution turned off, to simulate a system where identical addresses
# are impossible. api, patterns and results run again on 2 and 4 ranks
# over the MPI-3 RMA transport (WEFT_DIST_TRANSPORT=rma, the one ranks on
# several nodes use), and moves with forced steals there: a steal over RMA
# takes a few hundred microseconds here, too long for a move to be likely
# otherwise.
# Every one of these runs also runs on 8 ranks, more ranks than a CI machine
# has CPUs (each waiting rank must then give its CPU to the one it waits
# for): label "oversubscribed", a timeout that only stops a hang (the runs
# take 1-8 s on 2 loaded CPUs); their time is not judged.
set(WEFT_DIST_TEST_RANKS 1 2 4)
set(WEFT_DIST_TEST_OVERSUB_RANKS 8)
set(WEFT_DIST_TEST_OVERSUB_TIMEOUT 300)
set(WEFT_DIST_TEST_FORCED moves patterns results)
set(WEFT_DIST_TEST_RMA_RANKS 2 4)
set(WEFT_DIST_TEST_RMA api patterns results)
set(WEFT_DIST_TEST_RMA_FORCED moves)
# near.c runs again with the ranks grouped into "nodes" of two, so that
# node-first victim selection (src/mpi/ranksched.c's victim) is on, with
# forced steals (continuations that move), over shm and over rma.
set(WEFT_DIST_TEST_NEAR_RANKS 4 8)
# dist/TEST/npNP: dist_NAME under mpiexec on NP ranks, with the variables
# ENV (a list) and the MPI tests' common ones (WEFT_MPI_TEST_ENV).
function(weft_add_dist_test test name np timeout env)
  add_test(NAME dist/${test}/np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:dist_${name}> ${MPIEXEC_POSTFLAGS})
  set(all_env ${env} ${WEFT_MPI_TEST_ENV})
  set(labels mpi)
  if(np IN_LIST WEFT_DIST_TEST_OVERSUB_RANKS)
    list(APPEND labels oversubscribed)
  endif()
  set_tests_properties(dist/${test}/np${np} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout}
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${all_env}")
endfunction()

file(GLOB dist_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/dist/*.c)
foreach(src ${dist_srcs})
  get_filename_component(name ${src} NAME_WE)
  add_executable(dist_${name} ${src})
  target_compile_options(dist_${name} PRIVATE ${WEFT_WARN})
  target_include_directories(dist_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/common)
  target_link_libraries(dist_${name} PRIVATE weft::dist)
  set(env "")
  if(name STREQUAL "no_same_address")
    set(env "WEFT_DIST_NO_REEXEC=1")
  endif()
  foreach(np ${WEFT_DIST_TEST_RANKS} ${WEFT_DIST_TEST_OVERSUB_RANKS})
    set(timeout 90)
    if(np IN_LIST WEFT_DIST_TEST_OVERSUB_RANKS)
      set(timeout ${WEFT_DIST_TEST_OVERSUB_TIMEOUT})
    endif()
    weft_add_dist_test(${name} ${name} ${np} ${timeout} "${env}")
    if(name IN_LIST WEFT_DIST_TEST_FORCED)
      weft_add_dist_test(${name}_forced ${name} ${np} ${timeout} "WEFT_DIST_FORCE_STEAL=1")
    endif()
    if(name STREQUAL "near" AND np IN_LIST WEFT_DIST_TEST_NEAR_RANKS)
      weft_add_dist_test(near_groups ${name} ${np} ${timeout}
                         "WEFT_DIST_NODE_RANKS=2;WEFT_DIST_FORCE_STEAL=1")
      weft_add_dist_test(near_groups_rma ${name} ${np} ${WEFT_DIST_TEST_OVERSUB_TIMEOUT}
                         "WEFT_DIST_NODE_RANKS=2;WEFT_DIST_FORCE_STEAL=1;WEFT_DIST_TRANSPORT=rma")
    endif()
  endforeach()
  foreach(np ${WEFT_DIST_TEST_RMA_RANKS} ${WEFT_DIST_TEST_OVERSUB_RANKS})
    set(timeout 60)
    if(np IN_LIST WEFT_DIST_TEST_OVERSUB_RANKS)
      set(timeout ${WEFT_DIST_TEST_OVERSUB_TIMEOUT})
    endif()
    if(name IN_LIST WEFT_DIST_TEST_RMA)
      weft_add_dist_test(${name}_rma ${name} ${np} ${timeout} "WEFT_DIST_TRANSPORT=rma")
    elseif(name IN_LIST WEFT_DIST_TEST_RMA_FORCED)
      weft_add_dist_test(${name}_rma ${name} ${np} ${timeout} "WEFT_DIST_TRANSPORT=rma;WEFT_DIST_FORCE_STEAL=1")
    endif()
  endforeach()
endforeach()

# The scale model's own invariants (bench/scale/model.py on tiny trees; no
# MPI, but it models this directory's library).
find_program(WEFT_DIST_PYTHON3 python3)
if(WEFT_DIST_PYTHON3)
  add_test(NAME dist/scale_model
           COMMAND ${WEFT_DIST_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/dist/scale_model.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(dist/scale_model PROPERTIES LABELS "mpi;model" TIMEOUT 120
                       ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
endif()
