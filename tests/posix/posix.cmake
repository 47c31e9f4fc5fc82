# Plain POSIX programs (no weft header), label "posix": each runs natively,
# which validates the test against glibc, and under libweft-pthread
# (LD_PRELOAD), which tests the drop-in. .cpp files are C++20 programs.
file(GLOB weft_posix_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/posix/*.c
     ${CMAKE_CURRENT_SOURCE_DIR}/posix/*.cpp)
foreach(src ${weft_posix_tests})
  get_filename_component(name ${src} NAME_WE)
  get_filename_component(ext ${src} EXT)
  if(ext STREQUAL ".cpp" AND NOT CMAKE_CXX_COMPILER)
    continue()
  endif()
  set(exe posix_${name})
  add_executable(${exe} ${src})
  if(ext STREQUAL ".cpp")
    set_target_properties(${exe} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON)
    target_compile_options(${exe} PRIVATE -Wall -Wextra $<$<BOOL:${WEFT_WERROR}>:-Werror>)
  else()
    target_compile_options(${exe} PRIVATE ${WEFT_WARN})
  endif()
  target_link_libraries(${exe} PRIVATE Threads::Threads)
  add_test(NAME posix/${name}/native COMMAND ${exe})
  set_tests_properties(posix/${name}/native PROPERTIES LABELS posix TIMEOUT 120 SKIP_RETURN_CODE 77)
  if(WEFT_HAVE_POSIX)
    add_test(NAME posix/${name}/dropin COMMAND ${exe})
    set_tests_properties(posix/${name}/dropin PROPERTIES LABELS posix TIMEOUT 120 SKIP_RETURN_CODE 77
      ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:weft_pthread>;WEFT_POSIX_TEST_DROPIN=1")
  endif()
endforeach()
