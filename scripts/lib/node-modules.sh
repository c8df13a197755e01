#!/usr/bin/env bash
# Step 1 of setup (scripts/bootstrap.sh): node modules that match package-lock.json, installed only
# when the lock file changed since the last install, and never a rewritten lock file.
# Run from the project folder. Usage: node-modules.sh <log folder>
# The stamp holds the hash of the tracked lock file as it was before installing, so it matches on the
# next run whichever way npm installed; if npm rewrote the lock file, the tracked one is put back.
set -euo pipefail
LOG_DIR=${1:?usage: node-modules.sh <log folder>}
mkdir -p "$LOG_DIR"
log() { echo "[setup] $*" >&2; }
fail() { echo "[setup] ERROR: $*" >&2; exit 1; }

[ -f package-lock.json ] || fail "package-lock.json is missing in $PWD"
want=$(sha256sum package-lock.json | cut -c1-64)
stamp=node_modules/.repost-lock-sha256
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi

log "installing node modules (npm ci)"
tracked=$(mktemp)
trap 'rm -f "$tracked"' EXIT
cp package-lock.json "$tracked"
if ! npm ci --no-audit --no-fund >&2 2>"$LOG_DIR/npm-ci.log"; then
  # Some npm releases reject a lock file that lacks other platforms' optional native packages
  # (npm/cli#8805); `npm install` then installs the same locked versions.
  grep -q 'Missing: .* from lock file' "$LOG_DIR/npm-ci.log" || { cat "$LOG_DIR/npm-ci.log" >&2; fail "npm ci failed (log: $LOG_DIR/npm-ci.log)"; }
  log "npm ci refused the lock file (npm/cli#8805); installing the locked versions with npm install"
  npm install --no-audit --no-fund >&2
fi
if ! cmp -s "$tracked" package-lock.json; then
  log "npm rewrote package-lock.json; the tracked lock file is kept as it was"
  cp "$tracked" package-lock.json
fi
echo "$want" > "$stamp"
