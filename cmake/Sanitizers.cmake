# FASTLOOP_SANITIZE=address,undefined or thread: instrument everything this project compiles.
# LibTorch itself stays uninstrumented (it comes prebuilt), so reports point at fastloop's own code.
if(FASTLOOP_SANITIZE)
  # -g1: line tables, all a report needs for file:line in every frame; full -g makes the precompiled
  # <torch/torch.h> header ~900 MB and the build much slower.
  set(_fastloop_san_flags -fsanitize=${FASTLOOP_SANITIZE} -fno-omit-frame-pointer -g1)
  if(FASTLOOP_SANITIZE MATCHES "undefined")
    list(APPEND _fastloop_san_flags -fno-sanitize-recover=undefined -fno-sanitize=vptr)
  endif()
  add_compile_options(${_fastloop_san_flags})
  add_link_options(-fsanitize=${FASTLOOP_SANITIZE})
endif()
