#!/usr/bin/env bash
# Runs the README walkthrough ("from zero to a green build": every ```sh block between
# <!-- walkthrough:start --> and <!-- walkthrough:end -->, extracted unchanged by test/readme/extract.js)
# twice in one bash session with `set -euo pipefail` — the second run in the same shell, as a newcomer
# who pastes it again: the same port, data folder and project — with the built server (dist/, so
# `npm run build` first) on embedded PGlite and the real gitlab-ci-multi-runner ($GITLAB_RUNNER_BIN).
# The blocks choose their own free ports and a new data folder: nothing is set for them but the runner
# on PATH as `gitlab-ci-multi-runner`. Fails when any command fails; after each run, checks that the
# pipeline ended green and that the webhook receiver got the deliveries.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
README_FILE=$(realpath "${README_FILE:-README.md}")   # another file only to test this script itself

fail() { echo "readme walkthrough: FAILED — $*"; exit 1; }
[ -f dist/main.js ] || fail "dist/main.js is missing: run npm run build first"
[ -n "${GITLAB_RUNNER_BIN:-}" ] && [ -x "$GITLAB_RUNNER_BIN" ] ||
  fail "GITLAB_RUNNER_BIN must name a gitlab-ci-multi-runner 1.x binary (bash ../shared/tools/build-runner.sh .cache/gitlab-ci-multi-runner)"
for tool in bash git curl timeout unzip node; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done

WORK=$(mktemp -d)
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
RUNS=2

mkdir -p "$WORK/bin" "$WORK/home" "$WORK/run" "$WORK/tmp"
ln -s "$(realpath "$GITLAB_RUNNER_BIN")" "$WORK/bin/gitlab-ci-multi-runner"
ln -s "$REPO/dist" "$WORK/run/dist"

{
  echo 'set -euo pipefail'
  # on any exit, end what the blocks started in the background (the server, the runner, the receiver)
  echo 'trap '"'"'status=$?; kill $(jobs -pr) 2>/dev/null || true; wait 2>/dev/null || true; exit $status'"'"' EXIT'
  echo 'trap "exit 143" TERM'
  for run in $(seq "$RUNS"); do
    echo "echo '=== README walkthrough, run $run of $RUNS'"
    node test/readme/extract.js "$README_FILE"
    # checks by this script, not README text: the variables and files the blocks left behind (WALK: their scratch folder)
    cat <<CHECKS
echo "--- checks by .ci/readme-walkthrough.sh (run $run)"
[ "\${STATUS:-}" = success ] || { echo "pipeline status: \${STATUS:-unknown}, not success"; exit 1; }
grep -q '^Push Hook ' "\$WALK/hooks.log" || { echo "the webhook receiver got no Push Hook"; exit 1; }
grep -q '^Build Hook .*"build_status":"success"' "\$WALK/hooks.log" || { echo "the webhook receiver got no successful Build Hook"; exit 1; }
[ "\$PWD" = "\$CHECKOUT" ] || { echo "the walkthrough ended in \$PWD, not back in the checkout"; exit 1; }
echo "\$PORT \$DATA_DIR \$PROJECT_ID" >> "\$WORK_CHECK/runs"
CHECKS
  done
  # the second run reused the first one's port, data folder and project (as the README says)
  echo '[ "$(sort -u "$WORK_CHECK/runs" | wc -l)" = 1 ] || { echo "the runs differ in port, data folder or project:"; cat "$WORK_CHECK/runs"; exit 1; }'
  echo 'echo ok > "$WORK_CHECK/result"'
} > "$WORK/walkthrough.sh"
blocks=$(($(grep -c '^echo "--- README walkthrough block' "$WORK/walkthrough.sh") / RUNS))

echo "readme walkthrough: $blocks blocks of $(basename "$README_FILE"), run $RUNS times in one shell"
started=$(date +%s)
set +e
(
  cd "$WORK/run"
  # a clean environment: no database URL (embedded PGlite), no preset root password, port or data
  # folder, no user git config
  exec env -u DATABASE_URL -u ROOT_PASSWORD -u EXTERNAL_URL -u SECRET_KEY -u PORT -u HOOK_PORT -u DATA_DIR -u TOKEN -u CHECKOUT \
    PATH="$WORK/bin:$PATH" HOME="$WORK/home" TMPDIR="$WORK/tmp" GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 \
    WORK_CHECK="$WORK" \
    timeout --kill-after=10 480 bash "$WORK/walkthrough.sh"
)
status=$?
set -e
elapsed=$(($(date +%s) - started))
if [ "$status" -ne 0 ] || [ ! -f "$WORK/result" ]; then
  for log in "$WORK"/tmp/tmp.*/server.log "$WORK"/tmp/tmp.*/runner.log; do
    [ -f "$log" ] && { echo "--- $log (last 30 lines)"; tail -n 30 "$log"; }
  done
  [ "$status" -eq 124 ] && [ "$elapsed" -ge 480 ] && fail "timed out after 480 s"
  fail "exit status $status after ${elapsed} s (the failing step is the last one announced above)"
fi
echo "readme walkthrough: OK — $blocks README blocks ran $RUNS times in one shell in ${elapsed} s; each time pipeline success, artifacts downloaded, webhook deliveries received"
