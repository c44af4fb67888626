# Dependencies of tb::trainer, found at the top level so that imported targets are visible
# to tests/ as well.
# TorchConfig.cmake finds libtorch and libc10 with find_library(... PATHS <its prefix>/lib),
# which searches the system's folders first: beside Debian's libtorch-dev, a PyTorch wheel's
# headers would be linked with Debian's libraries. The prefix of a wheel's LibTorch that
# CMAKE_PREFIX_PATH or Torch_DIR names (torch.utils.cmake_prefix_path, or the folder above it)
# goes first.
foreach(_tb_dir IN LISTS CMAKE_PREFIX_PATH Torch_DIR)
  foreach(_tb_config "${_tb_dir}/TorchConfig.cmake" "${_tb_dir}/Torch/TorchConfig.cmake"
                     "${_tb_dir}/share/cmake/Torch/TorchConfig.cmake")
    get_filename_component(_tb_root "${_tb_config}/../../../.." ABSOLUTE)
    if(EXISTS "${_tb_config}" AND EXISTS "${_tb_root}/lib/libc10.so")
      list(PREPEND CMAKE_PREFIX_PATH "${_tb_root}")
    endif()
  endforeach()
endforeach()
find_package(Torch REQUIRED)
foreach(_tb_lib TORCH_LIBRARY c10_LIBRARY)
  string(FIND "${${_tb_lib}}" "${TORCH_INSTALL_PREFIX}/" _tb_at)
  if(NOT _tb_at EQUAL 0)
    message(FATAL_ERROR "${_tb_lib} is ${${_tb_lib}}, outside the LibTorch found (${TORCH_INSTALL_PREFIX}): "
                        "a cache from another LibTorch; configure a fresh build folder")
  endif()
endforeach()
string(REGEX MATCH "^[0-9]+\\.[0-9]+" TB_TORCH_MAJOR_MINOR "${Torch_VERSION}")
# Debian's LibTorch lives in the system's folders; any other (a PyTorch wheel's) is found through
# the installed binaries' RPATH, and no Debian package can depend on it.
if(TORCH_INSTALL_PREFIX STREQUAL "/usr")
  set(TB_SYSTEM_LIBTORCH ON)
else()
  set(TB_SYSTEM_LIBTORCH OFF)
  list(APPEND CMAKE_INSTALL_RPATH "${TORCH_INSTALL_PREFIX}/lib")
endif()
message(STATUS "LibTorch ${Torch_VERSION} in ${TORCH_INSTALL_PREFIX}")
# PyTorch wheels before 2.7 use the old libstdc++ ABI (_GLIBCXX_USE_CXX11_ABI=0, in
# TORCH_CXX_FLAGS): every library that passes std::string to the trainer (tb::core, GoogleTest)
# must use the same. Debian's LibTorch uses the default (1).
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=([01])")
  add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=${CMAKE_MATCH_1})
  if(CMAKE_MATCH_1 STREQUAL "0" AND TB_BUILD_GUI)
    message(WARNING "This LibTorch uses the old C++ ABI; Qt does not: build with -DTB_BUILD_GUI=OFF")
  endif()
endif()
# Boost: header-only (CRC-32C of TensorBoard records).
if(TB_DEPS_DIR AND EXISTS "${TB_DEPS_DIR}/include/boost/version.hpp")
  set(Boost_NO_BOOST_CMAKE ON)
  set(BOOST_ROOT "${TB_DEPS_DIR}")
endif()
find_package(Boost 1.71 REQUIRED)
# spdlog (the trainer's human log): Debian's compiled library; with TB_DEPS_DIR its headers
# header-only (fmt too), so that they compile with this LibTorch's C++ ABI. They are in a folder
# of their own, seen by the log library alone: LibTorch 2.x ships another fmt.
if(TB_DEPS_DIR AND EXISTS "${TB_DEPS_DIR}/log-include/spdlog/spdlog.h")
  add_library(tb_spdlog INTERFACE)
  target_include_directories(tb_spdlog SYSTEM INTERFACE "${TB_DEPS_DIR}/log-include")
  target_compile_definitions(tb_spdlog INTERFACE SPDLOG_HEADER_ONLY FMT_HEADER_ONLY)
  set(TB_SPDLOG_TARGET tb_spdlog)
else()
  find_package(spdlog 1.10 REQUIRED)
  set(TB_SPDLOG_TARGET spdlog::spdlog)
endif()

# The PyTorch wheels, built with a newer GCC toolset than the system's, export parts of libstdc++
# from libtorch.so (std::filesystem::remove_all among them: called from here, the wheel's copy
# jumped to a null address). libstdc++ goes first in every link, so that the system's copy wins
# symbol lookup; the wheel's serves only what the system's lacks. Harmless with Debian's LibTorch.
add_link_options("LINKER:--push-state,--no-as-needed" "-lstdc++" "LINKER:--pop-state")

# TB_WITH_CUDA follows the LibTorch that was found: ON only for a CUDA build.
set(_tb_torch_has_cuda OFF)
if(TARGET torch_cuda OR TARGET c10_cuda OR CAFFE2_USE_CUDA)
  set(_tb_torch_has_cuda ON)
endif()
option(TB_WITH_CUDA "Build CUDA/NCCL paths (needs a CUDA LibTorch)" ${_tb_torch_has_cuda})
if(TB_WITH_CUDA AND NOT _tb_torch_has_cuda)
  message(FATAL_ERROR "TB_WITH_CUDA=ON but the LibTorch found (${Torch_DIR}) is not a CUDA build")
endif()
if(TB_WITH_CUDA)
  # Nothing in the trainer calls into libtorch_cuda directly, so a linker that drops unused
  # libraries (--as-needed, the default on some distributions) would leave CUDA unregistered:
  # torch::cuda::is_available() false on a machine full of GPUs.
  add_link_options("LINKER:--no-as-needed")
endif()

if(TB_WITH_FFMPEG)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(TB_FFMPEG REQUIRED IMPORTED_TARGET libavformat libavcodec libswscale libavutil)
endif()
if(TB_WITH_OPENCV)
  # Debian's per-module -dev packages ship no OpenCVConfig.cmake: find the three modules directly.
  find_path(TB_OPENCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
  add_library(tb_opencv INTERFACE)
  target_include_directories(tb_opencv SYSTEM INTERFACE ${TB_OPENCV_INCLUDE_DIR})
  foreach(module core imgproc imgcodecs)
    find_library(TB_OPENCV_${module} opencv_${module} REQUIRED)
    target_link_libraries(tb_opencv INTERFACE ${TB_OPENCV_${module}})
  endforeach()
endif()

