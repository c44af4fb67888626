# GoogleTest: Debian's libgtest-dev, or the source copy in TB_DEPS_DIR (scripts/gpu-deps.sh),
# built here with this build's flags. The copy wins when present: a GPU machine's LibTorch may
# use the old C++ ABI, which a prebuilt GoogleTest would not match.
if(TB_DEPS_DIR AND EXISTS "${TB_DEPS_DIR}/googletest/CMakeLists.txt")
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  add_subdirectory("${TB_DEPS_DIR}/googletest" "${CMAKE_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL SYSTEM)
  if(NOT TARGET GTest::gtest)  # GoogleTest 1.11+ defines these aliases itself
    add_library(GTest::gtest ALIAS gtest)
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
  message(STATUS "GoogleTest: built from ${TB_DEPS_DIR}/googletest")
else()
  find_package(GTest REQUIRED)
endif()
