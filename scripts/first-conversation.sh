#!/usr/bin/env bash
# The README's first conversation, run literally against a fresh hub, so the README's
# commands cannot drift from what works (run by .ci/run).
#
# README.md marks its code blocks for this script with an HTML comment on the line before
# the fence:
#   <!-- first-conversation -->             run in order, all in one shell (variables carry over)
#   <!-- first-conversation:background -->  run beside them, as in another terminal
#                                           (agent-host run); the next block waits for its
#                                           "connected to" line
# Two substitutions point the blocks at this hub instead of a newcomer's:
# 127.0.0.1:8080 → the port this hub got, data/admin-api-key → its DATA_DIR. HOME is a
# temporary directory, so ~/projects and ~/.agent-host are too. The hub runs on the
# embedded database (no DATABASE_URL/REDIS_URL). Passes when the history printed by the
# last block holds the fake engine's answer. Needs curl and jq, like the README.
set -euo pipefail
set -m   # every background job in a process group of its own: cleanup stops npx and its children too
cd "$(dirname "$0")/.."
say() { printf 'first-conversation: %s %s\n' "$(date +%T)" "$*"; }

for tool in curl jq; do
  command -v "$tool" >/dev/null || { say "needs $tool (the README's examples use it)" >&2; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/first-conversation.XXXXXX")
HUB_PID= RUN_PID=
cleanup() {
  local code=$?
  set +e
  trap '' INT TERM   # a second signal must not cut the cleanup short
  # The README's blocks run in RUN_PID's group (agent-host run stays there after they end).
  [ -n "$RUN_PID" ] && kill -TERM -- "-$RUN_PID" 2>/dev/null
  [ -n "$HUB_PID" ] && kill -TERM "$HUB_PID" 2>/dev/null && wait "$HUB_PID" 2>/dev/null
  if [ "$code" -ne 0 ]; then
    for log in "$WORK"/background-*.log "$WORK/hub.log"; do
      [ -f "$log" ] && { say "--- ${log##*/} (last 40 lines)"; tail -n 40 "$log"; }
    done
    say "FAILED"
  fi
  rm -rf "$WORK"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. The README's marked blocks (first, so a README without them fails at once).
awk -v dir="$WORK" '
  /^<!-- first-conversation -->$/            { kind = "block"; next }
  /^<!-- first-conversation:background -->$/ { kind = "background"; next }
  kind != "" && /^```sh$/ { n++; file = sprintf("%s/%02d-%s.sh", dir, n, kind); inside = 1; kind = ""; next }
  inside && /^```$/       { inside = 0; close(file); next }
  inside                  { print > file }
  { kind = "" }
' README.md
shopt -s nullglob
BLOCKS=("$WORK"/[0-9][0-9]-*.sh)
[ "${#BLOCKS[@]}" -ge 2 ] || { say "README.md has no marked first-conversation blocks" >&2; exit 1; }

# 2. A fresh hub: embedded database in a temporary DATA_DIR, a port the system picks;
# `npm start`'s own command (scripts/start.mjs), without npm between it and $HUB_PID.
env -u DATABASE_URL -u REDIS_URL -u ADMIN_API_KEY -u SECRET_KEY \
  PORT=0 HOST=127.0.0.1 DATA_DIR="$WORK/data" LOG_LEVEL=info \
  node scripts/start.mjs </dev/null >"$WORK/hub.log" 2>&1 &
HUB_PID=$!
PORT=
for _ in $(seq 1 600); do
  PORT=$(grep -h '"hub listening"' "$WORK/hub.log" 2>/dev/null | jq -r .port || true)
  [ -n "$PORT" ] && break
  kill -0 "$HUB_PID" 2>/dev/null || { say "the hub exited before listening" >&2; exit 1; }
  sleep 0.5
done
[ -n "$PORT" ] || { say "the hub did not listen within 300 s" >&2; exit 1; }
say "hub on http://127.0.0.1:$PORT (DATA_DIR $WORK/data)"

# The two substitutions, now that the port is known.
for b in "${BLOCKS[@]}"; do
  sed -i -e "s|127\.0\.0\.1:8080|127.0.0.1:$PORT|g" -e "s|data/admin-api-key|$WORK/data/admin-api-key|g" "$b"
  if grep -n '8080' "$b" >&2; then say "a marked README block reaches the hub other than as 127.0.0.1:8080" >&2; exit 1; fi
done

# One shell runs the blocks in order; a background block starts beside it, like a terminal
# of its own (no unexported variables), and the next block waits until its host is connected.
PROGRAM="$WORK/program.sh"
cat >"$PROGRAM" <<'EOF'
set -euo pipefail
fc_wait_connected() {  # log file, pid
  for _ in $(seq 1 240); do
    grep -q 'connected to' "$1" && return 0
    kill -0 "$2" 2>/dev/null || { echo "first-conversation: the background block exited" >&2; return 1; }
    sleep 0.5
  done
  echo "first-conversation: no \"connected to\" line within 120 s" >&2; return 1
}
EOF
for b in "${BLOCKS[@]}"; do
  name=${b##*/}
  if [[ $name == *-background.sh ]]; then
    log="$WORK/background-${name%.sh}.log"
    printf 'echo "### README block %s (background)"; sed "s/^/  /" %q\n' "$name" "$b" >>"$PROGRAM"
    printf 'bash -euo pipefail %q >%q 2>&1 &\nfc_wait_connected %q $!\n' "$b" "$log" "$log" >>"$PROGRAM"
  else
    printf 'echo "### README block %s"; sed "s/^/  /" %q\n' "$name" "$b" >>"$PROGRAM"
    printf 'source %q\n' "$b" >>"$PROGRAM"
  fi
done

mkdir -p "$WORK/home"
env -u AGENT_HOST_HOME -u CLAUDE_BIN -u CLAUDE_CONFIG_DIR \
  HOME="$WORK/home" NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_USERCONFIG="${HOME:-/root}/.npmrc" \
  timeout 300 bash "$PROGRAM" </dev/null >"$WORK/out.log" 2>&1 &
RUN_PID=$!
say "running the README's blocks (their output follows when they end)"
wait "$RUN_PID" || { code=$?; cat "$WORK/out.log"; say "a README block failed (exit $code)" >&2; exit 1; }
cat "$WORK/out.log"

# 3. What a newcomer should see: the assistant's answer in the history, the console at /.
grep -qx 'assistant: echo: Summarise the README' "$WORK/out.log" \
  || { say "the history printed by the README has no assistant answer" >&2; exit 1; }
curl -sf "http://127.0.0.1:$PORT/" | grep -q '<div id="app">' \
  || { say "GET / is not the console page" >&2; exit 1; }
curl -sf -o /dev/null "http://127.0.0.1:$PORT/api/docs" || { say "GET /api/docs failed" >&2; exit 1; }
say "ok: the README's first conversation works (assistant answered; console at /, docs at /api/docs)"
