# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# funnel_repair_kokkos_target(): Debian's Trilinos-packaged Kokkos 3.4 computes its prefix one level
# too short under multiarch (/usr/lib/x86_64-linux-gnu/cmake/Kokkos -> "/usr/lib"), so
# Kokkos::kokkos names the missing /usr/lib/include; its headers are in Kokkos_INCLUDE_DIRS
# (/usr/include/trilinos). Drops the missing directories and adds the real ones. Used by funnel's
# build and by FunnelConfig.cmake, so downstream projects get the same repair.
function(funnel_repair_kokkos_target)
  if(NOT TARGET Kokkos::kokkos)
    return()
  endif()
  get_target_property(includes Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT includes)
    return()
  endif()
  set(fixed "")
  foreach(dir IN LISTS includes)
    if(EXISTS "${dir}" OR dir MATCHES "^\\$<")
      list(APPEND fixed "${dir}")
    endif()
  endforeach()
  if(NOT fixed STREQUAL includes AND Kokkos_INCLUDE_DIRS)
    foreach(dir IN LISTS Kokkos_INCLUDE_DIRS)
      get_filename_component(dir "${dir}" REALPATH)
      list(APPEND fixed "${dir}")
    endforeach()
    list(REMOVE_DUPLICATES fixed)
    set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${fixed}")
  endif()
endfunction()
