# Included by the top-level CMakeLists.txt before the libraries when TANDEM_FUZZ is ON, so that
# every library is instrumented for libFuzzer's coverage feedback and checked by ASan and UBSan:
# a bug deep inside a parser is caught where it happens, not where it shows.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TANDEM_FUZZ needs clang and libFuzzer: configure with "
    "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ (scripts/fuzz.sh does)")
endif()

# Every UBSan report is fatal, so libFuzzer records it as a crash. -fsanitize=function is off:
# clang 14 cannot emit its prologue data for split coroutine functions ("Cannot represent a
# difference across sections"), and the server and the upstream client are coroutines.
set(TANDEM_FUZZ_SANITIZERS
  -fsanitize=address,undefined -fno-sanitize=function -fno-sanitize-recover=all)
# -O1 whatever the build type: libFuzzer's recommendation, fast enough to fuzz and to build.
# _GLIBCXX_ASSERTIONS bounds-checks the standard containers without changing their ABI.
add_compile_options(-fsanitize=fuzzer-no-link ${TANDEM_FUZZ_SANITIZERS} -fno-omit-frame-pointer
  -O1 -D_GLIBCXX_ASSERTIONS)
add_link_options(${TANDEM_FUZZ_SANITIZERS})

# Boost.Asio 1.74 looks for clang's coroutines in <experimental/coroutine>, which libstdc++ 12
# does not have; clang 14 implements the C++20 ones <coroutine> declares, so say so.
add_compile_definitions(BOOST_ASIO_HAS_CO_AWAIT=1)
