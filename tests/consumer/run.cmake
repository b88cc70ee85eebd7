# Installs the built fastloop into a scratch prefix, then configures, builds and runs tests/consumer
# against it with find_package(fastloop). Fails on the first step that fails.
file(REMOVE_RECURSE ${WORK_DIR})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer step failed (${rc}): ${ARGN}")
  endif()
endfunction()
step(${CMAKE_COMMAND} --install ${FASTLOOP_BINARY_DIR} --prefix ${WORK_DIR}/prefix)
# Only the public API is installed: fastloop.h and what it reaches, not the internal components (of the codecs,
# the video frame reader alone is public: VideoFrameReader, video_info).
foreach(internal bench plot tune)
  if(EXISTS ${WORK_DIR}/prefix/include/fastloop/${internal})
    message(FATAL_ERROR "consumer: the install holds internal headers (include/fastloop/${internal})")
  endif()
endforeach()
file(GLOB _codec_headers RELATIVE ${WORK_DIR}/prefix/include/fastloop/data/codecs
     ${WORK_DIR}/prefix/include/fastloop/data/codecs/*)
list(REMOVE_ITEM _codec_headers video_frames.h)
if(_codec_headers)
  message(FATAL_ERROR "consumer: the install holds internal headers (include/fastloop/data/codecs: ${_codec_headers})")
endif()
if(NOT EXISTS ${WORK_DIR}/prefix/include/fastloop/fastloop.h)
  message(FATAL_ERROR "consumer: the install lacks include/fastloop/fastloop.h")
endif()
step(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G Ninja -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DTorch_DIR=${TORCH_DIR})
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${WORK_DIR}/build/consumer)
# The same module through `fastloop train`'s command line (train_main): flags, a checkpoint, --resume.
set(_flags --model tiny_net --data synthetic:1x12x12:256 --batch-size 32 --epochs 2 --threads 1 --device cpu
    --checkpoint-dir ${WORK_DIR}/ckpt)
step(${WORK_DIR}/build/consumer ${_flags} --max-steps 4)
step(${WORK_DIR}/build/consumer ${_flags} --resume)
if(NOT EXISTS ${WORK_DIR}/ckpt/last.ckpt)
  message(FATAL_ERROR "consumer: train_main left no checkpoint in ${WORK_DIR}/ckpt")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer --model tiny_net --amp maybe RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--amp")
  message(FATAL_ERROR "consumer: a bad flag gave exit ${rc} (expected 2 with a message naming --amp): ${err}")
endif()
