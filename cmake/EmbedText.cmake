# Writes the text of IN as a C++ string constant (tessel::runtime::kKernelPrelude) to OUT.
file(READ ${IN} CONTENT)
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\nnamespace tessel::runtime {\nextern const char* const kKernelPrelude;\nconst char* const kKernelPrelude = R\"TESSEL_PRELUDE(${CONTENT})TESSEL_PRELUDE\";\n}  // namespace tessel::runtime\n")
