# Writes the text of IN as a C++ string constant tessel::abi::NAME to OUT
# (NAME defaults to kKernelPrelude, the kernel prelude's constant).
if(NOT DEFINED NAME)
  set(NAME kKernelPrelude)
endif()
file(READ ${IN} CONTENT)
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\nnamespace tessel::abi {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"TESSEL_PRELUDE(${CONTENT})TESSEL_PRELUDE\";\n}  // namespace tessel::abi\n")
