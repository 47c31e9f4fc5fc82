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
set(WEFT_DIST_TEST_RANKS 1 2 4)
set(WEFT_DIST_TEST_FORCED moves patterns results)
set(WEFT_DIST_TEST_RMA_RANKS 2 4)
set(WEFT_DIST_TEST_RMA api patterns results)
set(WEFT_DIST_TEST_RMA_FORCED moves)
file(GLOB dist_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/dist/*.c)
foreach(src ${dist_srcs})
  get_filename_component(name ${src} NAME_WE)
  add_executable(dist_${name} ${src})
  target_compile_options(dist_${name} PRIVATE ${WEFT_WARN})
  target_include_directories(dist_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/common)
  target_link_libraries(dist_${name} PRIVATE weft::dist)
  set(envs "${WEFT_MPI_TEST_ENV}")
  if(name STREQUAL "no_same_address")
    list(APPEND envs "WEFT_DIST_NO_REEXEC=1")
  endif()
  foreach(np ${WEFT_DIST_TEST_RANKS})
    add_test(NAME dist/${name}/np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:dist_${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(dist/${name}/np${np} PROPERTIES LABELS mpi TIMEOUT 90
                         SKIP_RETURN_CODE 77 ENVIRONMENT "${envs}")
    if(name IN_LIST WEFT_DIST_TEST_FORCED)
      add_test(NAME dist/${name}_forced/np${np}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                       $<TARGET_FILE:dist_${name}> ${MPIEXEC_POSTFLAGS})
      set_tests_properties(dist/${name}_forced/np${np} PROPERTIES LABELS mpi TIMEOUT 90
                           SKIP_RETURN_CODE 77 ENVIRONMENT "WEFT_DIST_FORCE_STEAL=1;${WEFT_MPI_TEST_ENV}")
    endif()
  endforeach()
  foreach(np ${WEFT_DIST_TEST_RMA_RANKS})
    set(rma_env "")
    if(name IN_LIST WEFT_DIST_TEST_RMA)
      set(rma_env "WEFT_DIST_TRANSPORT=rma;${WEFT_MPI_TEST_ENV}")
    elseif(name IN_LIST WEFT_DIST_TEST_RMA_FORCED)
      set(rma_env "WEFT_DIST_TRANSPORT=rma;WEFT_DIST_FORCE_STEAL=1;${WEFT_MPI_TEST_ENV}")
    endif()
    if(rma_env)
      add_test(NAME dist/${name}_rma/np${np}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
                       $<TARGET_FILE:dist_${name}> ${MPIEXEC_POSTFLAGS})
      set_tests_properties(dist/${name}_rma/np${np} PROPERTIES LABELS mpi TIMEOUT 60
                           SKIP_RETURN_CODE 77 ENVIRONMENT "${rma_env}")
    endif()
  endforeach()
endforeach()
