# tb_set_warnings(target): the project's warning set, sanitizers and -Werror switches.
add_library(tb_build_flags INTERFACE)
add_library(tb::build_flags ALIAS tb_build_flags)
target_compile_options(tb_build_flags INTERFACE -Wall -Wextra -Wshadow=local -Wnon-virtual-dtor
                                                -Wcast-align -Woverloaded-virtual)
if(TB_WERROR)
  target_compile_options(tb_build_flags INTERFACE -Werror)
endif()
if(TB_SANITIZE)
  target_compile_options(tb_build_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(tb_build_flags INTERFACE -fsanitize=address,undefined)
endif()
if(TB_BUILD_FUZZERS)
  # Coverage instrumentation for the code under fuzz; the fuzz targets add the libFuzzer main.
  target_compile_options(tb_build_flags INTERFACE -fsanitize=fuzzer-no-link)
endif()
