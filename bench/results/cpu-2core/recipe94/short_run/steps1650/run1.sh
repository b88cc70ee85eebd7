#!/usr/bin/env bash
# run1.sh CORE NAME STEPS EPOCHS FLAGS...: one fixed-step run of the short run's model on one pinned thread
# (deterministic: the same numbers at any speed, so two ran side by side, one per core). From the repository
# root; writes NAME.log and NAME.jsonl beside this script. Example: run1.sh 0 lr2ls0 1650 4 --lr 0.2
# --label-smoothing 0 --eval-every 100 (the first rows also evaluated after each epoch, which changes nothing).
core=$1 name=$2 steps=$3 epochs=$4; shift 4
here="$(dirname "$0")"
taskset -c "$core" build/fastloop train --threads 1 --epochs "$epochs" --max-steps "$steps" --pool-before-bn \
  --metrics "$here/$name.jsonl" "$@" > "$here/$name.log" 2>&1
echo "$name: $(grep -o 'test accuracy [0-9.]*%' "$here/$name.log")"
