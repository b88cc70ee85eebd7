# shellcheck shell=bash
# The device check's step runner (sourced by scripts/device_check.sh): each step runs under its own time
# limit, cut to what is left of the whole run's DEADLINE_S; its output goes to $RESULTS/logs/NAME.log as
# it is produced and its row to $RESULTS/summary.md as soon as it ends, so a run killed at any point has
# left every finished step's result under $OUT. A failed step never stops the run.
# Needs: RESULTS, T0, DEADLINE_S, mode.

LOGS=$RESULTS/logs
mkdir -p "$LOGS"
LOG=$RESULTS/device_check.log
SUMMARY=$RESULTS/summary.md
: > "$LOG"
failed=0
rows=()
NOTE=""
CURRENT_STEP=""

summary_write() {
  {
    echo "# fastloop device check ($mode mode)"
    echo
    echo "$(date -u +%FT%TZ) · $(hostname) · commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
         "· total $(($(date +%s) - T0)) s · $( ((failed)) && echo "FAILED: $failed step(s)" || echo "all steps passed")"
    echo
    echo "| step | status | seconds | limit | note |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
  } > "$SUMMARY"
}

# A step's function may call `note TEXT`: one line for its summary row.
note() { echo "$*" > "$LOGS/$CURRENT_STEP.note"; }

skip() {  # skip NAME REASON
  echo "=== [$1] skipped: $2" | tee -a "$LOG"
  rows+=("| $1 | skipped | 0 | - | ${2//|//} |")
  summary_write
}

# step NAME LIMIT_S COMMAND...: runs COMMAND (a function or program) in its own process group, which a
# watchdog terminates at the limit; records status, seconds and note; returns COMMAND's status.
step() {
  local name=$1 limit=$2
  shift 2
  if ((DEADLINE_S > 0)); then  # stay inside the whole run's time, leaving 10 s to write the results
    local left=$((DEADLINE_S - ($(date +%s) - T0) - 10))
    if ((left < 10)); then
      skip "$name" "no time left (DEADLINE_S=$DEADLINE_S)"
      failed=$((failed + 1))
      return 1
    fi
    ((limit > left)) && limit=$left
  fi
  local start rc
  start=$(date +%s)
  CURRENT_STEP=$name
  rm -f "$LOGS/$name.note"
  echo "=== [$name] $* (limit ${limit}s)" | tee -a "$LOG"
  (
    set -m
    ( "$@" ) > "$LOGS/$name.log" 2>&1 < /dev/null &
    child=$!
    ( sleep "$limit"; kill -TERM -- -"$child"; sleep 5; kill -KILL -- -"$child" ) > /dev/null 2>&1 &
    watchdog=$!
    wait "$child"
    rc=$?
    kill -- -"$watchdog" 2>/dev/null
    wait "$watchdog" 2>/dev/null
    exit "$rc"
  ) 2>/dev/null  # job-control notices; the command's own output is in its log
  rc=$?
  cat "$LOGS/$name.log" >> "$LOG"
  tail -n 12 "$LOGS/$name.log"
  local secs=$(($(date +%s) - start)) status
  NOTE=""
  [ -f "$LOGS/$name.note" ] && NOTE=$(cat "$LOGS/$name.note")
  if ((rc == 0)); then
    status=ok
  else
    status="FAILED (exit $rc$( ((rc == 143 || rc == 137)) && echo ", over its ${limit}s limit"))"
    failed=$((failed + 1))
  fi
  echo "=== [$name] $status in ${secs}s${NOTE:+: $NOTE}" | tee -a "$LOG"
  rows+=("| $name | $status | $secs | $limit | ${NOTE//|//} |")
  summary_write
  return "$rc"
}
