#!/usr/bin/env bash
# Runs the README walkthrough ("from zero to a green build": every ```sh block between
# <!-- walkthrough:start --> and <!-- walkthrough:end -->, extracted unchanged by test/readme/extract.js)
# in one bash session with `set -euo pipefail`, against a freshly started built server (dist/, so
# `npm run build` first) on embedded PGlite, with the real gitlab-ci-multi-runner ($GITLAB_RUNNER_BIN).
# Fails when any command fails; then checks that the pipeline ended green and that the webhook
# receiver got the deliveries. Before the first block it sets only PORT, HOOK_PORT (free ports) and
# DATA_DIR (a new temporary folder), and puts the runner on PATH as `gitlab-ci-multi-runner`.
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
free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
PORT=$(free_port)
HOOK_PORT=$(free_port)
while [ "$HOOK_PORT" = "$PORT" ]; do HOOK_PORT=$(free_port); done

mkdir -p "$WORK/bin" "$WORK/home" "$WORK/run" "$WORK/tmp"
ln -s "$(realpath "$GITLAB_RUNNER_BIN")" "$WORK/bin/gitlab-ci-multi-runner"
ln -s "$REPO/dist" "$WORK/run/dist"

{
  echo 'set -euo pipefail'
  # on any exit, end what the blocks started in the background (the server, the runner, the receiver)
  echo 'trap '"'"'status=$?; kill $(jobs -pr) 2>/dev/null || true; wait 2>/dev/null || true; exit $status'"'"' EXIT'
  echo 'trap "exit 143" TERM'
  node test/readme/extract.js "$README_FILE"
  # checks by this script, not README text: the variables and files the blocks left behind
  cat <<'CHECKS'
echo "--- checks by .ci/readme-walkthrough.sh"
[ "${STATUS:-}" = success ] || { echo "pipeline status: ${STATUS:-unknown}, not success"; exit 1; }
grep -q '^Push Hook ' hooks.log || { echo "the webhook receiver got no Push Hook"; exit 1; }
grep -q '^Build Hook .*"build_status":"success"' hooks.log || { echo "the webhook receiver got no successful Build Hook"; exit 1; }
echo "$PROJECT_ID $SHA" > "$WORK_CHECK/result"
CHECKS
} > "$WORK/walkthrough.sh"
blocks=$(grep -c '^echo "--- README walkthrough block' "$WORK/walkthrough.sh")

echo "readme walkthrough: $blocks blocks of $(basename "$README_FILE"), server on port $PORT, webhook receiver on port $HOOK_PORT"
started=$(date +%s)
set +e
(
  cd "$WORK/run"
  # a clean environment: no database URL (embedded PGlite), no preset root password, no user git config
  exec env -u DATABASE_URL -u ROOT_PASSWORD -u EXTERNAL_URL -u SECRET_KEY \
    PATH="$WORK/bin:$PATH" HOME="$WORK/home" TMPDIR="$WORK/tmp" GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 \
    PORT="$PORT" HOOK_PORT="$HOOK_PORT" DATA_DIR="$WORK/data" WORK_CHECK="$WORK" \
    timeout --kill-after=10 240 bash "$WORK/walkthrough.sh"
)
status=$?
set -e
elapsed=$(($(date +%s) - started))
if [ "$status" -ne 0 ] || [ ! -f "$WORK/result" ]; then
  for log in "$WORK"/run/server.log "$WORK"/tmp/tmp.*/runner.log; do
    [ -f "$log" ] && { echo "--- $log (last 30 lines)"; tail -n 30 "$log"; }
  done
  [ "$status" -eq 124 ] && [ "$elapsed" -ge 240 ] && fail "timed out after 240 s"
  fail "exit status $status after ${elapsed} s (the failing step is the last one announced above)"
fi
echo "readme walkthrough: OK — $blocks README blocks ran in ${elapsed} s; pipeline success, artifacts downloaded, webhook deliveries received"
