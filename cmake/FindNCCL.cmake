# FindNCCL.cmake - finds NCCL (headers and libnccl) for the optional
# warpsort_nccl library.
#
# Looks, in order, at:
#   NCCL_ROOT (CMake or environment variable): include/ and lib/ below it;
#   the system (CUDA toolkit folders, /usr, /usr/local, ...);
#   the nvidia-nccl-cu13 (or -cu12) Python wheel of the python3 on PATH:
#     `pip install nvidia-nccl-cu13` puts nccl.h in nvidia/nccl/include and
#     only libnccl.so.2 (no unversioned libnccl.so) in nvidia/nccl/lib.
#
# Defines NCCL_FOUND, NCCL_INCLUDE_DIR, NCCL_LIBRARY, NCCL_LIBRARY_DIR,
# NCCL_VERSION and the imported target NCCL::NCCL.
include(FindPackageHandleStandardArgs)

set(_ws_nccl_hints)
foreach(_root "${NCCL_ROOT}" "$ENV{NCCL_ROOT}")
  if(_root)
    list(APPEND _ws_nccl_hints "${_root}")
  endif()
endforeach()
if(NOT NCCL_WHEEL_DIR)
  find_program(_ws_nccl_python NAMES python3 python)
  mark_as_advanced(_ws_nccl_python)
  if(_ws_nccl_python)
    # nvidia.nccl is a namespace package: its folder is in __path__.
    execute_process(
      COMMAND "${_ws_nccl_python}" -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE _ws_nccl_wheel RESULT_VARIABLE _ws_nccl_rc
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_ws_nccl_rc EQUAL 0 AND EXISTS "${_ws_nccl_wheel}/include/nccl.h")
      set(NCCL_WHEEL_DIR "${_ws_nccl_wheel}" CACHE PATH "NCCL from the nvidia-nccl Python wheel")
    endif()
  endif()
endif()

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${_ws_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
if(NOT NCCL_INCLUDE_DIR AND NCCL_WHEEL_DIR)
  find_path(NCCL_INCLUDE_DIR nccl.h PATHS "${NCCL_WHEEL_DIR}/include" NO_DEFAULT_PATH)
endif()

# The wheel has only the versioned name; a system install has both.
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
  HINTS ${_ws_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
if(NOT NCCL_LIBRARY AND NCCL_WHEEL_DIR AND EXISTS "${NCCL_WHEEL_DIR}/lib/libnccl.so.2")
  set(NCCL_LIBRARY "${NCCL_WHEEL_DIR}/lib/libnccl.so.2" CACHE FILEPATH "NCCL library" FORCE)
endif()

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _ws_nccl_v REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*" "\\1" _ws_nccl_major "${_ws_nccl_v}")
  string(REGEX REPLACE ".*NCCL_MINOR ([0-9]+).*" "\\1" _ws_nccl_minor "${_ws_nccl_v}")
  string(REGEX REPLACE ".*NCCL_PATCH ([0-9]+).*" "\\1" _ws_nccl_patch "${_ws_nccl_v}")
  set(NCCL_VERSION "${_ws_nccl_major}.${_ws_nccl_minor}.${_ws_nccl_patch}")
endif()

find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)

if(NCCL_FOUND)
  get_filename_component(NCCL_LIBRARY_DIR "${NCCL_LIBRARY}" DIRECTORY)
  if(NOT TARGET NCCL::NCCL)
    # An imported shared library by its file: the link line names that file,
    # and the binary records its soname (libnccl.so.2).
    add_library(NCCL::NCCL SHARED IMPORTED)
    set_target_properties(NCCL::NCCL PROPERTIES
      IMPORTED_LOCATION "${NCCL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
  endif()
endif()
