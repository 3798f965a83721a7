# tessel_bench: the benchmark harness of `tessel bench` (tools/bench/) and the
# peer libraries it compares Tessel with. Each peer is optional: one that is
# found defines TESSEL_HAVE_<PEER> for the bench sources only; one that is
# missing is reported "unavailable" when a suite names it, never a build error.
# Only the executable tessel-bench (and the tests) link it: `tessel bench`
# runs tessel-bench, so no other command loads the peer libraries.
# The library itself is built with the others (CMakeLists.txt); here its peers join it.
# OpenMP: the oneDNN peer's thread count is set through the OpenMP runtime it shares with the kernels.
target_link_libraries(tessel_bench PRIVATE OpenMP::OpenMP_CXX)
set(TESSEL_BENCH_PEERS "")

find_path(TESSEL_ONEDNN_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(TESSEL_ONEDNN_LIBRARY dnnl)
if(TESSEL_ONEDNN_INCLUDE_DIR AND TESSEL_ONEDNN_LIBRARY)
  target_include_directories(tessel_bench SYSTEM PRIVATE ${TESSEL_ONEDNN_INCLUDE_DIR})
  target_link_libraries(tessel_bench PRIVATE ${TESSEL_ONEDNN_LIBRARY})
  target_compile_definitions(tessel_bench PRIVATE TESSEL_HAVE_ONEDNN)
  list(APPEND TESSEL_BENCH_PEERS onednn)
endif()

pkg_check_modules(TESSEL_OPENBLAS QUIET IMPORTED_TARGET openblas)
if(TESSEL_OPENBLAS_FOUND)
  target_link_libraries(tessel_bench PRIVATE PkgConfig::TESSEL_OPENBLAS)
  target_compile_definitions(tessel_bench PRIVATE TESSEL_HAVE_OPENBLAS)
  list(APPEND TESSEL_BENCH_PEERS openblas)
endif()

find_path(TESSEL_XNNPACK_INCLUDE_DIR xnnpack.h)
find_path(TESSEL_PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
find_library(TESSEL_XNNPACK_LIBRARY XNNPACK)
find_library(TESSEL_PTHREADPOOL_LIBRARY pthreadpool)
if(TESSEL_XNNPACK_INCLUDE_DIR AND TESSEL_PTHREADPOOL_INCLUDE_DIR AND TESSEL_XNNPACK_LIBRARY
   AND TESSEL_PTHREADPOOL_LIBRARY)
  target_include_directories(tessel_bench SYSTEM PRIVATE ${TESSEL_XNNPACK_INCLUDE_DIR} ${TESSEL_PTHREADPOOL_INCLUDE_DIR})
  target_link_libraries(tessel_bench PRIVATE ${TESSEL_XNNPACK_LIBRARY} ${TESSEL_PTHREADPOOL_LIBRARY})
  target_compile_definitions(tessel_bench PRIVATE TESSEL_HAVE_XNNPACK)
  list(APPEND TESSEL_BENCH_PEERS xnnpack)
endif()

# Halide 14 (libhalide14-0-dev): its CMake package needs LLVM 14's (llvm-14-dev). The Adams2019
# autoscheduler is a plugin the peer loads at run time, from where the package installed it.
find_package(Halide 14 CONFIG QUIET)
if(Halide_FOUND AND TARGET Halide::Halide AND TARGET Halide::Adams2019)
  target_link_libraries(tessel_bench PRIVATE Halide::Halide)
  target_compile_definitions(tessel_bench PRIVATE TESSEL_HAVE_HALIDE TESSEL_HALIDE_VERSION="${Halide_VERSION}"
                                                  TESSEL_HALIDE_ADAMS2019="$<TARGET_FILE:Halide::Adams2019>")
  list(APPEND TESSEL_BENCH_PEERS halide)
endif()

message(STATUS "tessel bench peers: ${TESSEL_BENCH_PEERS}")

# tessel-bench, next to tessel, which finds it there (cli/Main.cpp).
add_executable(tessel-bench ${CMAKE_SOURCE_DIR}/cli/BenchCommand.cpp ${CMAKE_SOURCE_DIR}/cli/CommandLine.cpp)
target_compile_options(tessel-bench PRIVATE ${TESSEL_WARNINGS})
target_link_libraries(tessel-bench PRIVATE tessel_bench CLI11::CLI11)
set_target_properties(tessel-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
# Building tessel builds the executable its bench command runs, unless a
# build that never benchmarks (the sanitizer smoke run) turns it off.
option(TESSEL_CLI_BUILDS_BENCH "building tessel also builds tessel-bench, which 'tessel bench' runs" ON)
if(TESSEL_CLI_BUILDS_BENCH)
  add_dependencies(tessel tessel-bench)
endif()
