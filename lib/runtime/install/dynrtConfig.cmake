# find_package(dynrt): libdynrt, the dynoc runtime, installed by tools/install.sh.
# Gives the imported target dynrt::dynrt (headers: include/dynrt/dynrt.h, the C
# API, and dynrt.hpp, its C++ wrapper; DLPack's header is installed beside them).
get_filename_component(_dynrt_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET dynrt::dynrt)
  add_library(dynrt::dynrt SHARED IMPORTED)
  set_target_properties(dynrt::dynrt PROPERTIES
    IMPORTED_LOCATION "${_dynrt_prefix}/lib/libdynrt.so"
    IMPORTED_SONAME "libdynrt.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_dynrt_prefix}/include")
endif()
set(dynrt_INCLUDE_DIRS "${_dynrt_prefix}/include")
set(dynrt_LIBRARIES dynrt::dynrt)
unset(_dynrt_prefix)
