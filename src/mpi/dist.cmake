# dist.cmake: libweft_dist (weft_dist.h), built when MPI is found.
#
# libweft_dist is all of weft plus the distributed worker: the weft objects
# are merged into one relocatable object whose gated public functions
# (those gate.c names) are renamed weft__nd_<name>; gate.c then defines the
# public names, which serve a run or refuse inside it and call the
# single-process weft outside it. libweft itself is untouched, so
# single-process programs neither link MPI nor pay for any test on their
# paths. A program links weft-dist instead of weft, never both.
find_package(MPI COMPONENTS C QUIET)

# Appends " <prefix><item>" to the variable `var` for each further argument:
# a list of flags as a .pc file's Cflags or Libs line spells them.
function(weft_pc_append var prefix)
  foreach(item ${ARGN})
    string(APPEND ${var} " ${prefix}${item}")
  endforeach()
  set(${var} "${${var}}" PARENT_SCOPE)
endfunction()

set(WEFT_HAVE_DIST 0)
if(NOT MPI_C_FOUND)
  list(APPEND WEFT_LEFT_OUT "libweft_dist (MPI not found: install mpich and libmpich-dev)")
elseif(NOT CMAKE_OBJCOPY OR NOT CMAKE_LINKER)
  list(APPEND WEFT_LEFT_OUT "libweft_dist (objcopy or ld not found)")
else()
  set(WEFT_HAVE_DIST 1)
endif()

if(WEFT_HAVE_DIST)
  set(WEFT_DIST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/src/mpi)
  # The gated names, read from gate.c: "name weft__nd_name" per line.
  file(READ ${WEFT_DIST_DIR}/gate.c weft_gate_src)
  string(REGEX MATCHALL "(GATE_ERR\\(|GATE_THR\\(|GATE_TIO\\(|GATE_SYS\\([a-z_]+, |NATIVE\\()weft_[a-z0-9_]+"
         weft_gated "${weft_gate_src}")
  set(weft_syms "")
  set(weft_seen "")
  foreach(m ${weft_gated})
    string(REGEX REPLACE ".*(weft_[a-z0-9_]+)$" "\\1" n "${m}")
    if(NOT n IN_LIST weft_seen)
      list(APPEND weft_seen ${n})
      string(APPEND weft_syms "${n} weft__nd_${n}\n")
    endif()
  endforeach()
  set(WEFT_DIST_SYMS ${CMAKE_CURRENT_BINARY_DIR}/weft_dist.syms)
  file(WRITE ${WEFT_DIST_SYMS}.in "${weft_syms}")
  configure_file(${WEFT_DIST_SYMS}.in ${WEFT_DIST_SYMS} COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${WEFT_DIST_DIR}/gate.c)

  set(WEFT_DIST_CORE ${CMAKE_CURRENT_BINARY_DIR}/weft_dist_core.o)
  add_custom_command(OUTPUT ${WEFT_DIST_CORE}
    COMMAND ${CMAKE_LINKER} -r -o ${WEFT_DIST_CORE}.merged $<TARGET_OBJECTS:weft_objects>
    COMMAND ${CMAKE_OBJCOPY} --redefine-syms=${WEFT_DIST_SYMS} ${WEFT_DIST_CORE}.merged
            ${WEFT_DIST_CORE}
    # weft_objects by name too: a target-level dependency, without which
    # Unix Makefiles (unlike Ninja) have no rule for the object files
    DEPENDS weft_objects $<TARGET_OBJECTS:weft_objects> ${WEFT_DIST_SYMS}
    COMMAND_EXPAND_LISTS VERBATIM
    COMMENT "weft_dist: weft's objects with the gated names renamed")
  add_custom_target(weft_dist_core DEPENDS ${WEFT_DIST_CORE})
  set_source_files_properties(${WEFT_DIST_CORE} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)

  add_library(weft_dist_objects OBJECT ${WEFT_DIST_DIR}/dist.c ${WEFT_DIST_DIR}/ranksched.c
              ${WEFT_DIST_DIR}/gate.c ${WEFT_DIST_DIR}/reexec.c ${WEFT_DIST_DIR}/rma.c
              ${WEFT_DIST_DIR}/state.c)
  target_include_directories(weft_dist_objects PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include
                             ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_compile_options(weft_dist_objects PRIVATE $<$<COMPILE_LANGUAGE:C>:${WEFT_WARN}>
                         -fvisibility=hidden)
  target_compile_definitions(weft_dist_objects PRIVATE _GNU_SOURCE=1 WEFT_BUILDING=1)
  target_link_libraries(weft_dist_objects PRIVATE MPI::MPI_C)

  add_library(weft_dist SHARED $<TARGET_OBJECTS:weft_dist_objects> ${WEFT_DIST_CORE})
  add_library(weft_dist_static STATIC $<TARGET_OBJECTS:weft_dist_objects> ${WEFT_DIST_CORE})
  set_target_properties(weft_dist PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION 0
                        EXPORT_NAME dist)
  set_target_properties(weft_dist_static PROPERTIES OUTPUT_NAME weft_dist EXPORT_NAME dist_static)
  target_link_options(weft_dist PRIVATE -Wl,--no-undefined)
  foreach(t weft_dist weft_dist_static)
    add_dependencies(${t} weft_dist_core)
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${t} PUBLIC MPI::MPI_C Threads::Threads)
    weft_link_optional(${t})
  endforeach()
  add_library(weft::dist ALIAS weft_dist)

  install(TARGETS weft_dist weft_dist_static EXPORT weftDistTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES include/weft_dist.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT weftDistTargets NAMESPACE weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)

  # weft-dist.pc carries MPI's flags, whichever MPI was found.
  set(WEFT_DIST_PC_CFLAGS "")
  weft_pc_append(WEFT_DIST_PC_CFLAGS "-I" ${MPI_C_INCLUDE_DIRS})
  weft_pc_append(WEFT_DIST_PC_CFLAGS "" ${MPI_C_COMPILE_OPTIONS})
  weft_pc_append(WEFT_DIST_PC_CFLAGS "-D" ${MPI_C_COMPILE_DEFINITIONS})
  set(WEFT_DIST_PC_LIBS "")
  weft_pc_append(WEFT_DIST_PC_LIBS "" ${MPI_C_LIBRARIES} ${MPI_C_LINK_FLAGS})
  configure_file(${WEFT_DIST_DIR}/weft-dist.pc.in ${CMAKE_CURRENT_BINARY_DIR}/weft-dist.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/weft-dist.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
