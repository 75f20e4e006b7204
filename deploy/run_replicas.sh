#!/usr/bin/env bash
# Run N replicas of Attention Explorer behind nginx with sticky sessions, all on 127.0.0.1.
#
#   deploy/run_replicas.sh [N]        N replicas (default 2); Ctrl-C stops everything
#
# Environment (all optional):
#   PORT     nginx's port on 127.0.0.1 (default 8080); the replicas take free ports
#   PYTHON   a Python that has the app's requirements (default: python3)
#   NGINX_BIN  the nginx binary (default: nginx on PATH, else /usr/sbin/nginx)
#   RUN_DIR  where the generated nginx.conf, the logs and the pid file go (default: a new
#            temporary directory, removed on exit; a given RUN_DIR is kept)
#   STREAMLIT_SERVER_COOKIE_SECRET  shared by all replicas (default: a random one per run)
#
# Needs no root: nginx runs as an ordinary process with every file in RUN_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPLICAS="${1:-2}"
PORT="${PORT:-8080}"
PYTHON="${PYTHON:-python3}"
NGINX_BIN="${NGINX_BIN:-$(command -v nginx || echo /usr/sbin/nginx)}"
unset NGINX  # nginx itself would read this variable as a list of inherited sockets
HOST=127.0.0.1

[[ "$REPLICAS" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [number of replicas]" >&2; exit 2; }
[[ -x "$NGINX_BIN" ]] || { echo "no nginx at $NGINX_BIN (Debian: apt-get install nginx)" >&2; exit 1; }

if [[ -n "${RUN_DIR:-}" ]]; then
    OWN_RUN_DIR=0
    mkdir -p "$RUN_DIR"
else
    OWN_RUN_DIR=1
    RUN_DIR="$(mktemp -d -t attention-explorer-replicas.XXXXXX)"
fi
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
mkdir -p "$RUN_DIR/tmp"

REPLICA_PIDS=()
NGINX_PID=""

# shellcheck disable=SC2329  # called by the EXIT trap
cleanup() {
    trap - EXIT INT TERM HUP
    if [[ -n "$NGINX_PID" ]]; then kill "$NGINX_PID" 2>/dev/null || true; fi
    for pid in "${REPLICA_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ "$OWN_RUN_DIR" == 1 ]]; then rm -rf "$RUN_DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# wait_for_health URL PID NAME: until URL answers 200, while the process PID lives (90 s at most).
wait_for_health() {
    local url="$1" pid="$2" name="$3" deadline=$((SECONDS + 90))
    until "$PYTHON" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$url" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "$name exited before it was healthy; see $RUN_DIR" >&2
            return 1
        fi
        if ((SECONDS >= deadline)); then
            echo "$name was not healthy within 90 s; see $RUN_DIR" >&2
            return 1
        fi
        sleep 0.3
    done
}

# Replicas must share the cookie secret, so that a cookie signed by one is valid on another.
if [[ -z "${STREAMLIT_SERVER_COOKIE_SECRET:-}" ]]; then
    STREAMLIT_SERVER_COOKIE_SECRET="$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')"
fi
export STREAMLIT_SERVER_COOKIE_SECRET

# Two glibc heaps for each replica's threads from its start (ui/cache.py sets the same cap at its
# first run otherwise): memory freed after a class comes back more fully (deploy/README.md).
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"

# Free ports for the replicas: held open together, so that they differ, then released.
read -r -a REPLICA_PORTS <<<"$("$PYTHON" - "$REPLICAS" <<'PY'
import socket, sys
probes = [socket.socket() for _ in range(int(sys.argv[1]))]
for probe in probes:
    probe.bind(("127.0.0.1", 0))
print(" ".join(str(probe.getsockname()[1]) for probe in probes))
for probe in probes:
    probe.close()
PY
)"

UPSTREAM_SERVERS=""
for i in "${!REPLICA_PORTS[@]}"; do
    number=$((i + 1))
    port="${REPLICA_PORTS[$i]}"
    # The project's .streamlit/config.toml is read from the working directory: start in ROOT.
    # A server does not watch its source files (students would see "File change. Rerun").
    (cd "$ROOT" && exec "$PYTHON" -m streamlit run app.py \
        --server.address "$HOST" --server.port "$port" --server.headless true \
        --server.fileWatcherType none) \
        >"$RUN_DIR/replica-$number.log" 2>&1 &
    REPLICA_PIDS+=("$!")
    UPSTREAM_SERVERS+="        server $HOST:$port;  # replica $number"$'\n'
done

for i in "${!REPLICA_PORTS[@]}"; do
    wait_for_health "http://$HOST:${REPLICA_PORTS[$i]}/_stcore/health" "${REPLICA_PIDS[$i]}" "replica $((i + 1))"
    echo "replica $((i + 1)): http://$HOST:${REPLICA_PORTS[$i]}/ (pid ${REPLICA_PIDS[$i]}, log $RUN_DIR/replica-$((i + 1)).log)"
done

# The config: the template with the run directory, the listen address and the upstreams.
"$PYTHON" - "$ROOT/deploy/nginx.conf.template" "$RUN_DIR/nginx.conf" \
    "RUN_DIR=$RUN_DIR" "LISTEN=$HOST:$PORT" "UPSTREAM_SERVERS=$UPSTREAM_SERVERS" <<'PY'
import sys
template, target, *values = sys.argv[1:]
text = open(template, encoding="utf-8").read()
for value in values:
    name, _, replacement = value.partition("=")
    text = text.replace(f"@{name}@", replacement.rstrip("\n"))
open(target, "w", encoding="utf-8").write(text)
PY

NGINX_ARGS=(-p "$RUN_DIR" -e "$RUN_DIR/error.log" -c "$RUN_DIR/nginx.conf")
"$NGINX_BIN" "${NGINX_ARGS[@]}" -t -q
"$NGINX_BIN" "${NGINX_ARGS[@]}" -g "daemon off;" &
NGINX_PID="$!"
wait_for_health "http://$HOST:$PORT/_stcore/health" "$NGINX_PID" "nginx"

echo "nginx: pid $NGINX_PID, config $RUN_DIR/nginx.conf, access log $RUN_DIR/access.log"
echo "Attention Explorer: http://$HOST:$PORT/"

# Run until interrupted, or until any process exits (then stop the others too).
set +e
wait -n
status=$?
echo "a replica or nginx exited (status $status); stopping the others" >&2
exit 1
