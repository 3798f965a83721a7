# Writes the text of IN as a C++ string constant (tessel::abi::kKernelPrelude) to OUT.
file(READ ${IN} CONTENT)
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\nnamespace tessel::abi {\nextern const char* const kKernelPrelude;\nconst char* const kKernelPrelude = R\"TESSEL_PRELUDE(${CONTENT})TESSEL_PRELUDE\";\n}  // namespace tessel::abi\n")
