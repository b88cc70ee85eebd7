# shellcheck shell=bash
# The device check's measuring steps (sourced by scripts/device_check.sh), in the order the run takes
# them: the GPU training checks first (what a first GPU run of a user would do), then the tests, doctor
# and a trimmed bench grid. Each writes its results under $RESULTS as it goes.
# Needs: mode, ROOT, PREPARED, RESULTS, LOGS, BUILD_DIR, FL, DEVICE, PY_EXE, JOBS, tests, BENCH_NAME.

WORK=$RESULTS/work  # checkpoints and metrics of the training checks
mkdir -p "$WORK"

epoch_note() {  # epoch_note STEP METRICS_FILE [SUFFIX]: the last epoch line of --metrics as one summary note
  [ -s "$2" ] || return 0
  "$PY_EXE" - "$2" "${3:-}" > "$LOGS/$1.note" <<'PY' || true
import json, sys
last = None
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if rec.get("kind") == "epoch":
        last = rec
if last:
    print(f"epoch {last.get('epoch')}: test_acc {100 * last.get('test_acc', 0):.2f}%, "
          f"{last.get('img_per_s', 0):,.0f} img/s, {last.get('elapsed_s', 0):.1f} s{sys.argv[2]}")
PY
}

cpu_args() { [ "$mode" = cpu ] && echo "--threads $JOBS"; }
# The CPU rehearsal's autocast: bf16 where the CPU has it natively (avx512_bf16, AMX), as --perf auto decides;
# elsewhere float32 (emulated bf16 ran ResNet18's tiny steps past their limits on an AVX2-only CPU).
cpu_amp() { grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo && echo bf16 || echo off; }

# The default recipe (goal on the GPU: >= 93% in under 10 s of training).
s_fashion_mnist() {
  local metrics=$WORK/fashion_mnist.jsonl args=()
  rm -f "$metrics"
  [ "$mode" = cpu ] && args+=(--max-steps 20)
  # shellcheck disable=SC2046,SC2086
  "$FL" train --config "$ROOT/recipes/fashion_mnist.toml" --device "$DEVICE" \
    --data "fashion-mnist:$PREPARED/fashion-mnist" --metrics "$metrics" "${args[@]}" $(cpu_args) ${TRAIN_ARGS:-}
  local rc=$?
  epoch_note fashion_mnist "$metrics" "$( [ "$mode" = cpu ] && echo " (CPU smoke run: 20 steps, accuracy not meaningful)")"
  return $rc
}

# ResNet18 with fp16 + GradScaler + channels_last + a captured CUDA graph, the threaded loader and the
# pinned ring, stopped after 30 steps and resumed: the resumed process warms up again before it captures.
s_resnet18_graph_resume() {
  local dir=$WORK/resnet18_graph metrics=$WORK/resnet18_graph.jsonl args
  args=(--model resnet18 --stem cifar --device "$DEVICE" --channels-last --workers 4 --pin-memory
        --checkpoint-dir "$dir" --metrics "$metrics" --epochs 2)
  rm -rf "$dir" "$metrics"
  if [ "$mode" = cpu ]; then  # no graphs and no fp16 scaler on the CPU: the same run in bf16, at tiny sizes
    args+=(--amp "$(cpu_amp)" --data synthetic:3x32x32:256 --batch-size 16 --threads "$JOBS")
  else
    args+=(--amp fp16 --data synthetic:3x32x32:16384 --batch-size 128 --cuda-graph --cudnn-benchmark)
  fi
  local first resumed
  first=$("$FL" train "${args[@]}" --max-steps 30 2>&1) || { echo "$first"; return 1; }
  echo "$first"
  resumed=$("$FL" train "${args[@]}" --resume 2>&1) || { echo "$resumed"; return 1; }
  echo "$resumed"
  grep -q "resumed from" <<< "$resumed" || { echo "the second run did not resume"; return 1; }
  if [ "$mode" = device ]; then
    for out in "$first" "$resumed"; do
      grep -q "cuda-graph: training step captured" <<< "$out" || { echo "a run did not capture its step"; return 1; }
    done
  fi
  epoch_note resnet18_graph_resume "$metrics" " (after the resume)"
}

# One rank of DDP over Gloo with CUDA tensors: hooks, buckets and the broadcast on the device.
s_ddp_gloo() {
  local args=(--model small_cnn --data synthetic:3x32x32:2048 --batch-size 64 --epochs 1 --device "$DEVICE"
              --dist-backend gloo --metrics "$WORK/ddp_gloo.jsonl")
  rm -f "$WORK/ddp_gloo.jsonl"
  # shellcheck disable=SC2046
  "$FL" launch --nproc-per-node 1 -- train "${args[@]}" $(cpu_args) || return 1
  epoch_note ddp_gloo "$WORK/ddp_gloo.jsonl" " (1 rank, Gloo)"
}

# The issue's throughput goal: CIFAR-shaped ResNet18, AMP bf16 + channels_last, batch 128, one epoch of
# 50,000 synthetic images (>= 40,000 img/s on an H200).
s_resnet18_amp() {
  local metrics=$WORK/resnet18_amp.jsonl args
  rm -f "$metrics"
  if [ "$mode" = cpu ]; then
    args=(--data synthetic:3x32x32:64 --batch-size 16 --epochs 1 --threads "$JOBS" --amp "$(cpu_amp)")
  else
    args=(--data synthetic:3x32x32:50000 --batch-size 128 --epochs 1 --cudnn-benchmark --pin-memory --workers 4
          --amp bf16)
  fi
  # shellcheck disable=SC2086
  "$FL" train --model resnet18 --stem cifar --channels-last --device "$DEVICE" --metrics "$metrics" \
    "${args[@]}" ${AMP_ARGS:-}
  local rc=$?
  epoch_note resnet18_amp "$metrics"
  return $rc
}

# The _CUDA tests and a quick subset of the rest (--tests all: the whole suite).
s_tests() {
  local args=(--output-on-failure --timeout 120 -j "$( [ "$mode" = device ] && echo 8 || echo "$JOBS")"
              --output-junit "$LOGS/ctest.xml")
  if [ "$tests" = quick ] && [ "$mode" = device ]; then
    args+=(-R '_CUDA$|^Cli\.|^Config\.|^Checkpoint\.Stopped|^Techniques\.|^Collectives\.|^Loader\.')
  elif [ "$tests" = quick ]; then  # CI ran the whole suite just before: the _CUDA ones (skipped) and one CLI test
    args+=(-R '_CUDA$|^Cli\.HelpOfEachCommandListsItsFlags$')
  fi
  (cd "$BUILD_DIR" && ctest "${args[@]}")
  local rc=$?
  local line skipped
  line=$(grep -E "tests passed|tests failed" "$LOGS/tests.log" | tail -1)
  skipped=$(grep -c "Skipped" "$LOGS/tests.log")
  note "${line:-no ctest summary} ($tests; $skipped skipped)"
  return $rc
}

# fastloop.Loader from the build tree's package: CPU and pinned-ring CUDA batches equal, then a PyTorch
# loop on DataLoader vs fastloop.Loader (ResNet-50, AMP on the GPU) into $RESULTS/python_loop_MODE.md.
s_python_loader() {
  [ -d "$BUILD_DIR/python/fastloop" ] || { note "not built (this Python has no C headers)"; return 1; }
  PYTHONPATH="$BUILD_DIR/python" "$PY_EXE" "$HERE/python_loader.py" "$WORK" "$RESULTS" "$mode" || return 1
  note "$(grep -E '÷' "$RESULTS/python_loop_$mode.md" | head -1)"
}

s_doctor() {
  "$FL" doctor --model resnet18 --batch-size 128
}

# A trimmed grid; each cell's result is in bench/NAME.* as soon as it is measured (the PyTorch peer's
# repetitions alternate with fastloop's inside each cell), so a step cut by its limit keeps what it had.
s_bench() {
  mkdir -p "$RESULTS/bench"
  local args=(--models resnet18,small_cnn --device "$DEVICE" --out "$RESULTS/bench/$BENCH_NAME")
  if [ -s "$LOGS/peer_missing" ]; then
    note "without the PyTorch peer: $(cat "$LOGS/peer_missing") missing"
  else
    args+=(--compare-python --python "$PY_EXE")
  fi
  if [ "$mode" = cpu ]; then  # the script is what is tested here, not the numbers
    args+=(--rows baseline,channels-last --repeat 1 --steps 1 --eval-steps 1 --warmup 1 --batch-size 8 --threads "$JOBS")
  else
    args+=(--rows baseline,non-blocking,amp,channels-last,cuda-graph,perf-auto --repeat 3 --steps 50 --eval-steps 50
           --warmup 10 --batch-size 128)
  fi
  # shellcheck disable=SC2086
  "$FL" bench "${args[@]}" ${BENCH_ARGS:-}
}
