# FLASHFUSE_STATIC_LLVM: link the tools against MLIR's and LLVM's static
# libraries instead of libMLIR.so and libLLVM.so, so that flashfuse-compile
# runs on a machine without LLVM/MLIR (the wheel carries it; docs/WHEEL.md).
#
# Debian's LLVM is built with LLVM_LINK_LLVM_DYLIB: every exported MLIR
# library names the imported target `LLVM` (libLLVM.so) in its interface.
# The per-component static libraries are exported too, so each MLIR
# library's `LLVM` is replaced by an interface target over all of them; the
# linker takes only the objects something references, so listing every
# component costs link time, not size. Sets FLASHFUSE_MLIR_LIBS and
# FLASHFUSE_STATIC_LINK_FLAGS.

# Whether imported library `target` names a file that is not installed
# (Debian ships the export of Polly without libPolly.a).
function(flashfuse_imported_file_missing target out)
  get_target_property(type ${target} TYPE)
  set(missing FALSE)
  if(type MATCHES "STATIC_LIBRARY|SHARED_LIBRARY")
    set(missing TRUE)
    get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
    foreach(suffix "" ${configs})
      if(suffix)
        set(suffix "_${suffix}")
      endif()
      get_target_property(file ${target} IMPORTED_LOCATION${suffix})
      if(file AND EXISTS "${file}")
        set(missing FALSE)
      endif()
    endforeach()
  endif()
  set(${out} ${missing} PARENT_SCOPE)
endfunction()

# The static libraries among `candidates` whose interface names neither the
# MLIR dylib, nor a package target this machine lacks (LLVMDebuginfod: CURL;
# LLVMLineEditor: LibEdit), nor a library whose file is missing
# (LLVMExtensions: Polly; LLVMExegesis: libpfm), nor a library left out for
# one of these reasons (MLIR's JIT runner and MlirOptMain: the MLIR dylib). flashfuse-compile
# uses none of them.
function(flashfuse_static_libs out)
  set(kept)
  foreach(lib ${ARGN})
    if(TARGET ${lib})
      get_target_property(type ${lib} TYPE)
      flashfuse_imported_file_missing(${lib} missing)
      if(type STREQUAL "STATIC_LIBRARY" AND NOT missing)
        list(APPEND kept ${lib})
      endif()
    endif()
  endforeach()
  set(dropped)
  set(changed TRUE)
  while(changed)
    set(changed FALSE)
    foreach(lib ${kept})
      get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
      foreach(dep ${deps})
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
        set(missing FALSE)
        if(TARGET ${dep})
          flashfuse_imported_file_missing(${dep} missing)
        elseif(IS_ABSOLUTE "${dep}")
          if(NOT EXISTS "${dep}")
            set(missing TRUE)
          endif()
        elseif(dep MATCHES "^[A-Za-z0-9_+]+$")
          # A system library by name (LLVMExegesis: pfm): the linker's
          # -l<name> fails where it is not installed.
          find_library(flashfuse_syslib_${dep} ${dep})
          if(NOT flashfuse_syslib_${dep})
            set(missing TRUE)
          endif()
        endif()
        if(dep STREQUAL "MLIR" OR (dep MATCHES "::" AND NOT TARGET ${dep})
           OR missing OR dep IN_LIST dropped)
          list(REMOVE_ITEM kept ${lib})
          list(APPEND dropped ${lib})
          set(changed TRUE)
          break()
        endif()
      endforeach()
    endforeach()
  endwhile()
  if(dropped)
    message(STATUS "Static MLIR/LLVM without ${dropped}")
  endif()
  set(${out} ${kept} PARENT_SCOPE)
endfunction()

get_property(flashfuse_mlir_all GLOBAL PROPERTY MLIR_ALL_LIBS)
get_property(flashfuse_mlir_capi GLOBAL PROPERTY MLIR_UPSTREAM_CAPI_LIBS)
# Neither the C API nor upstream's test libraries.
set(flashfuse_mlir_candidates)
foreach(lib ${flashfuse_mlir_all})
  if(NOT lib IN_LIST flashfuse_mlir_capi AND NOT lib MATCHES "Test")
    list(APPEND flashfuse_mlir_candidates ${lib})
  endif()
endforeach()
set(flashfuse_llvm_candidates)
foreach(lib ${LLVM_AVAILABLE_LIBS})
  if(lib MATCHES "^LLVM")
    list(APPEND flashfuse_llvm_candidates ${lib})
  endif()
endforeach()
flashfuse_static_libs(flashfuse_llvm_static ${flashfuse_llvm_candidates})

add_library(flashfuse_llvm_static INTERFACE)
# Static archives that reference each other: one group, searched until no
# new symbol resolves. --as-needed keeps shared libraries named by the
# components (z3, libpfm) out of the binary unless an object pulled in uses
# them.
target_link_libraries(flashfuse_llvm_static INTERFACE
  "-Wl,--as-needed" "-Wl,--start-group" ${flashfuse_llvm_static}
  "-Wl,--end-group")
foreach(lib ${flashfuse_mlir_candidates} ${flashfuse_llvm_static})
  if(TARGET ${lib})
    get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
    if(deps)
      list(TRANSFORM deps REPLACE "^LLVM$" flashfuse_llvm_static)
      list(TRANSFORM deps REPLACE "^\\$<LINK_ONLY:LLVM>$"
           "$<LINK_ONLY:flashfuse_llvm_static>")
      set_target_properties(${lib} PROPERTIES INTERFACE_LINK_LIBRARIES "${deps}")
    endif()
  endif()
endforeach()
flashfuse_static_libs(FLASHFUSE_MLIR_LIBS ${flashfuse_mlir_candidates})

# add_llvm_executable / add_llvm_library would add the dylibs themselves.
set(LLVM_LINK_LLVM_DYLIB OFF)
set(MLIR_LINK_MLIR_DYLIB OFF)
# The C++ runtime inside the binary: wheels run on distributions whose
# libstdc++ is older than the one it was built with.
set(FLASHFUSE_STATIC_LINK_FLAGS -static-libstdc++ -static-libgcc)
