# The layering of Tessel's stages: each folder of src/ (and of tools/) with
# the folders it may depend on. One static library per folder is built from it
# (CMakeLists.txt), linked to exactly these, and cmake/CheckLayering.cmake
# fails the build on an include that goes against it. docs/architecture.md
# draws it. In dependency order: a folder comes after everything it uses.
set(TESSEL_LAYERS abi support te front poly runtime schedule tile target lir backend microkernel "target/cpu" fuse
    driver tune fuzz bench)
set(allowed_abi "")
set(allowed_support "")
set(allowed_te abi support)
set(allowed_front te support)
set(allowed_poly te support)
set(allowed_runtime te abi support)
set(allowed_schedule poly te support)
set(allowed_tile schedule poly te support)
set(allowed_target schedule poly runtime te support)
set(allowed_lir target schedule poly te support)
set(allowed_backend lir runtime abi te support)
set(allowed_microkernel backend target te support)
set("allowed_target/cpu" microkernel lir tile target schedule poly te support)
set(allowed_fuse "target/cpu" tile target schedule poly te support)
set(allowed_driver fuse "target/cpu" microkernel backend lir tile target schedule runtime poly front te abi support)
set(allowed_tune driver fuse "target/cpu" microkernel backend lir tile target schedule runtime poly front te abi
    support)
set(allowed_fuzz tune ${allowed_tune})
set(allowed_bench tune ${allowed_tune})

