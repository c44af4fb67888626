# ccache in front of the compiler. CCACHE_BASEDIR makes hits independent of the checkout path
# (CI builds in a fresh clone elsewhere); the sloppiness settings are the ones ccache needs to
# cache translation units that use a precompiled header.
find_program(TB_CCACHE ccache)
if(TB_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env
      CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      CCACHE_COMPILERCHECK=content
      ${TB_CCACHE})
  message(STATUS "Using ccache: ${TB_CCACHE}")
endif()
