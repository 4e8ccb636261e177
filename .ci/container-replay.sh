#!/usr/bin/env bash
# Replays the Dockerfile's runtime stage without a container engine: production dependencies only,
# the built output, a non-root user whose only writable place is DATA_DIR; the server must answer
# readiness and a sign-in, and stop cleanly on SIGTERM. Needs root (creates the user) and dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/main.js ] || npm run build
APP="$(mktemp -d /tmp/replay-app.XXXXXX)"
DATA="$(mktemp -d /tmp/replay-data.XXXXXX)"
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null || true; rm -rf "$APP" "$DATA"; }
trap cleanup EXIT
cp package.json package-lock.json "$APP/"
(cd "$APP" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
cp -r dist "$APP/dist"
id -u gitlab-replay >/dev/null 2>&1 || useradd --system --home-dir "$DATA" --shell /usr/sbin/nologin gitlab-replay
chown -R root:root "$APP"; chmod -R go-w "$APP"; chmod 0755 "$APP"
chown gitlab-replay "$DATA"; chmod 0700 "$DATA"
PORT=$((20000 + RANDOM % 20000))
cd "$APP"
setpriv --reuid gitlab-replay --regid "$(id -g gitlab-replay)" --clear-groups \
  env -i PATH="$PATH" NODE_ENV=production DATA_DIR="$DATA" HOME="$DATA" PORT="$PORT" HOST=127.0.0.1 \
  ROOT_PASSWORD=replay-root-password LOG_LEVEL=warn node dist/main.js >"$DATA/../replay-server-$PORT.log" 2>&1 &
PID=$!
node -e "
const base = 'http://127.0.0.1:' + process.argv[1];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  let ready = false;
  for (let i = 0; i < 120 && !ready; i++) { try { ready = (await fetch(base + '/-/readiness')).ok; } catch {} if (!ready) await sleep(500); }
  if (!ready) throw new Error('not ready');
  const s = await fetch(base + '/api/v3/session', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: 'root', password: 'replay-root-password' }) });
  if (s.status !== 201) throw new Error('sign-in: ' + s.status);
  console.log('replay: production install as a non-root user answers readiness and sign-in');
})().catch((e) => { console.error('replay failed:', e.message); process.exit(1); });
" "$PORT" || { cat "$DATA/../replay-server-$PORT.log"; exit 1; }
# nothing outside DATA_DIR was written by the server
if [ -n "$(find "$APP" -newer "$APP/dist/main.js" -user gitlab-replay 2>/dev/null | head -1)" ]; then
  echo "replay: the server wrote outside DATA_DIR"; exit 1
fi
kill -TERM "$PID"; wait "$PID"; PID=""
rm -f "$DATA/../replay-server-$PORT.log"
echo "replay: graceful stop ok"
