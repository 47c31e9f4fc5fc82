# posix.cmake: libweft-pthread, the drop-in for unmodified pthread, C11 and
# C++ programs (docs/posix.md). It is weft's core compiled a second time
# with WEFT_POSIX=1 (the glibc thread block follows each switch:
# sched/switch.h) and with real.h force-included (the core's own pthread
# calls reach glibc, not the drop-in), plus src/posix. libweft is untouched.
# Not in sanitizer builds: the sanitizers keep their per-thread state in
# TLS, which would be per user thread and never initialised.
if(NOT WEFT_SANITIZE STREQUAL "" OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(WEFT_HAVE_POSIX 0)
  list(APPEND WEFT_LEFT_OUT "libweft-pthread (not in sanitizer builds)")
  return()
endif()
set(WEFT_HAVE_POSIX 1)
set(WEFT_POSIX_DIR ${CMAKE_CURRENT_SOURCE_DIR}/src/posix)
file(GLOB WEFT_POSIX_SOURCES CONFIGURE_DEPENDS ${WEFT_POSIX_DIR}/*.c)

add_library(weft_posix_core OBJECT ${WEFT_SOURCES})
target_include_directories(weft_posix_core
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/src
          ${CMAKE_CURRENT_SOURCE_DIR}/${WEFT_ARCH_DIR})
target_compile_options(weft_posix_core PRIVATE $<$<COMPILE_LANGUAGE:C>:${WEFT_WARN}>
  -fvisibility=hidden $<$<COMPILE_LANGUAGE:C>:-include ${WEFT_POSIX_DIR}/real.h>)
if(WEFT_HAVE_STACK_CLASH)
  target_compile_options(weft_posix_core PRIVATE $<$<COMPILE_LANGUAGE:C>:-fstack-clash-protection>)
endif()
set(WEFT_POSIX_DEFS _GNU_SOURCE=1 WEFT_BUILDING=1 WEFT_POSIX=1
  WEFT__HAVE_URING=${WEFT_HAVE_URING} WEFT__HAVE_VALGRIND=${WEFT_HAVE_VALGRIND}
  WEFT__HAVE_LIBDW=${WEFT_HAVE_LIBDW})
target_compile_definitions(weft_posix_core PRIVATE ${WEFT_POSIX_DEFS})
weft_link_optional(weft_posix_core)

add_library(weft_pthread SHARED $<TARGET_OBJECTS:weft_posix_core> ${WEFT_POSIX_SOURCES})
set_target_properties(weft_pthread PROPERTIES OUTPUT_NAME weft-pthread EXPORT_NAME pthread VERSION ${PROJECT_VERSION}
                                              SOVERSION 0)
target_include_directories(weft_pthread
  PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR}/${WEFT_ARCH_DIR})
target_compile_options(weft_pthread PRIVATE ${WEFT_WARN} -Wno-nonnull-compare -fvisibility=hidden -fexceptions)
target_compile_definitions(weft_pthread PRIVATE ${WEFT_POSIX_DEFS})
target_link_libraries(weft_pthread PUBLIC Threads::Threads PRIVATE ${CMAKE_DL_LIBS})
weft_link_optional(weft_pthread)
add_library(weft::pthread ALIAS weft_pthread)

install(TARGETS weft_pthread EXPORT weftTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(PROGRAMS ${CMAKE_CURRENT_SOURCE_DIR}/bin/weft-run DESTINATION ${CMAKE_INSTALL_BINDIR})
configure_file(${WEFT_POSIX_DIR}/weft-pthread.pc.in ${CMAKE_CURRENT_BINARY_DIR}/weft-pthread.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/weft-pthread.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
